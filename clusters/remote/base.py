"""The remote-control protocol: what the harness needs of a machine it drives.

A ``Remote`` runs a command (optionally as root) and returns its exit code and output,
copies a file to or from the machine, and signals a process by pid or by name. That is all
the SSH targets and the host clock nemesis use, so a host over SSH and a container through
the docker SDK are interchangeable below them, and a scripted fake stands in for both in
unit tests.

Commands are an argv (quoted for the remote shell) or a string (run by ``sh -c``). A
command that does not finish within its timeout raises ``RemoteTimeout``; a machine that
cannot be reached raises ``RemoteError``: both are one line naming the host and the
command. A non-zero exit is not an error at this level (``must`` makes it one).
"""

from __future__ import annotations

import shlex
import signal as _signal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from core.cluster import ClusterError

Command = str | Sequence[str]
"""An argv (each item quoted for the remote shell) or a shell string (run by ``sh -c``)."""

Exec = Callable[[Command], tuple[int, str]]
STAGING = "/tmp/.harness-xfer"
"""Prefix of the temporary files through which files reach root-owned places."""
"""Runs a command on one machine as root: exit code and output (``NodeControl.exec`` of a
node, or ``Remote.run`` with sudo); what the identity and clock helpers take."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a command may take when its caller gives no timeout."""


class RemoteError(ClusterError):
    """A machine could not be reached, or a command on it failed; the message is one line."""


class RemoteTimeout(RemoteError):
    """A command did not finish within its timeout."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What a command left: its exit code, standard output and standard error."""

    exit: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.exit == 0

    @property
    def output(self) -> str:
        """Standard output then standard error, as ``NodeControl.exec`` reports them."""
        return self.stdout + self.stderr


@runtime_checkable
class Remote(Protocol):
    """One machine the harness drives."""

    host: str
    """How messages name the machine (``user@host:port``, a container name...)."""

    def run(
        self, cmd: Command, *, timeout: float | None = None, sudo: bool = False
    ) -> CommandResult:
        """Run ``cmd`` (as root with ``sudo``) and wait for it, at most ``timeout`` s."""
        ...

    def upload(self, local: Path, remote_path: str, mode: int = 0o644) -> None:
        """Copy the local file ``local`` to ``remote_path`` (parents created, root-owned
        when the login is not root)."""
        ...

    def download(self, remote_path: str, local: Path) -> None:
        """Copy ``remote_path`` (readable by root) to the local file ``local``."""
        ...

    def signal(self, target: int | str, sig: int | str) -> bool:
        """Send ``sig`` to the process ``target`` (a pid, or an exact process name); whether
        some process received it."""
        ...

    def close(self) -> None:
        """Drop the connection; the next call reconnects."""
        ...


def as_root(remote: Remote) -> Exec:
    """``remote``'s commands as root, as an ``Exec`` (exit code and output)."""

    def run(cmd: Command) -> tuple[int, str]:
        result = remote.run(cmd, sudo=True)
        return result.exit, result.output

    return run


def command_text(cmd: Command) -> str:
    """``cmd`` as one shell string: an argv is quoted, a string is taken as it is."""
    return cmd if isinstance(cmd, str) else shlex.join(cmd)


def short(cmd: Command, limit: int = 80) -> str:
    """``cmd`` shortened for a one-line message."""
    text = " ".join(command_text(cmd).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def signal_name(sig: int | str) -> str:
    """``sig`` as kill(1) spells it: ``9``, ``"KILL"`` and ``"SIGKILL"`` all give ``KILL``."""
    if isinstance(sig, str) and not sig.isdigit():
        name = sig.upper().removeprefix("SIG")
        if f"SIG{name}" not in _signal.Signals.__members__:
            raise ValueError(f"unknown signal {sig!r}")
        return name
    return _signal.Signals(int(sig)).name.removeprefix("SIG")


def signal_command(target: int | str, sig: int | str) -> list[str]:
    """The command that sends ``sig`` to a pid (``kill``) or an exact name (``pkill -x``)."""
    name = signal_name(sig)
    if isinstance(target, int) or target.isdigit():
        return ["kill", f"-{name}", str(int(target))]
    return ["pkill", f"-{name}", "-x", target]


def must(
    remote: Remote, cmd: Command, what: str, *, sudo: bool = False, timeout: float | None = None
) -> CommandResult:
    """Run ``cmd``; a non-zero exit raises RemoteError saying ``what`` failed and why."""
    result = remote.run(cmd, timeout=timeout, sudo=sudo)
    if not result.ok:
        raise RemoteError(
            f"{remote.host}: {what} failed (exit {result.exit} from "
            f"`{short(cmd)}`): {tail(result.output)}"
        )
    return result


def tail(text: str, lines: int = 3) -> str:
    """The last non-empty ``lines`` of ``text`` joined with " | " (or "no output")."""
    kept = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "no output"


def put_text(remote: Remote, remote_path: str, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``remote_path`` (through a local temporary file and ``upload``)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="harness-put-") as tmp:
        local = Path(tmp) / "file"
        local.write_text(text)
        remote.upload(local, remote_path, mode)


def get_text(remote: Remote, remote_path: str) -> str:
    """The content of the text file ``remote_path`` (through ``download``)."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="harness-get-") as tmp:
        local = Path(tmp) / "file"
        remote.download(remote_path, local)
        return local.read_text(errors="replace")
