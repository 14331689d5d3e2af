"""A container through the docker SDK as a ``Remote``.

The Docker clusters drive their nodes with ``exec_run`` directly (``clusters/
docker_cluster.py``); this adapter gives the same container the one remote-control
protocol, so code written against ``Remote`` (the SSH targets' installer and processes,
the host clock helpers) also runs on a container: the integration tests use it to prepare
the sshd hosts. ``DockerCluster`` itself was left as it is (see docs/ssh.md).

Commands run through ``timeout(1)`` inside the container, so a command that overruns is
killed there rather than left behind; ``sudo`` runs it as root whatever the image's user.
"""

from __future__ import annotations

import io
import shlex
import tarfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from clusters.remote.base import (
    DEFAULT_TIMEOUT,
    Command,
    CommandResult,
    RemoteError,
    RemoteTimeout,
    short,
    signal_command,
)

if TYPE_CHECKING:
    from docker.models.containers import Container

TIMED_OUT = 124
"""timeout(1)'s exit code when it had to stop the command."""


class DockerRemote:
    """One container; implements ``clusters.remote.base.Remote``."""

    def __init__(self, container: Container, timeout: float = DEFAULT_TIMEOUT) -> None:
        self.container = container
        self.host = f"container {container.name}"
        self.timeout = timeout

    def run(
        self, cmd: Command, *, timeout: float | None = None, sudo: bool = False
    ) -> CommandResult:
        """``exec_run`` of ``cmd`` under ``timeout(1)``; RemoteTimeout when it overran."""
        limit = self.timeout if timeout is None else timeout
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else list(cmd)
        started = time.monotonic()
        result = self._exec(
            ["timeout", "-k", "2", f"{limit:g}", *argv], user="root" if sudo else ""
        )
        # 124 is also what a command of the caller's own (say, its own timeout) may return:
        # only the one that came after our limit is ours.
        if result.exit == TIMED_OUT and time.monotonic() - started >= limit:
            raise RemoteTimeout(f"{self.host}: `{short(cmd)}` did not finish within {limit:g}s")
        return result

    def upload(self, local: Path, remote_path: str, mode: int = 0o644) -> None:
        """``put_archive`` of ``local`` as ``remote_path`` (parents created)."""
        parent, _, name = remote_path.rpartition("/")
        self._check(["mkdir", "-p", parent or "/"], f"creating {parent}")
        buf = io.BytesIO()
        data = local.read_bytes()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), mode
            tar.addfile(info, io.BytesIO(data))
        if not self.container.put_archive(parent or "/", buf.getvalue()):
            raise RemoteError(f"{self.host}: copying {local} to {remote_path} failed")

    def download(self, remote_path: str, local: Path) -> None:
        """``get_archive`` of ``remote_path`` into the local file ``local``."""
        from docker.errors import NotFound

        try:
            stream, _ = self.container.get_archive(remote_path)
        except NotFound:
            raise RemoteError(f"{self.host}: {remote_path} does not exist") from None
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            member = tar.next()
            extracted = tar.extractfile(member) if member is not None else None
            if extracted is None:
                raise RemoteError(f"{self.host}: {remote_path} is not a regular file")
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(extracted.read())

    def signal(self, target: int | str, sig: int | str) -> bool:
        return self.run(signal_command(target, sig), sudo=True).ok

    def close(self) -> None:
        """Nothing to close: the docker client belongs to whoever made the container."""

    def _exec(self, argv: list[str], user: str) -> CommandResult:
        from docker.errors import APIError

        try:
            result = self.container.exec_run(argv, user=user, demux=True)
        except APIError as e:
            raise RemoteError(
                f"{self.host}: cannot run `{short(shlex.join(argv))}`: {e.explanation or e}"
            ) from None
        out, err = result.output if result.output else (None, None)
        return CommandResult(
            int(result.exit_code or 0),
            (out or b"").decode(errors="replace"),
            (err or b"").decode(errors="replace"),
        )

    def _check(self, argv: list[str], what: str) -> None:
        result = self._exec(argv, user="root")
        if not result.ok:
            raise RemoteError(f"{self.host}: {what} failed: {result.output.strip()}")
