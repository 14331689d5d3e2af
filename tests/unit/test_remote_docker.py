"""DockerRemote over a stand-in container object (the docker SDK's surface it uses)."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from clusters.remote.base import Remote, RemoteError, RemoteTimeout
from tests.support.docker_remote import DockerRemote


class ExecResult(NamedTuple):
    exit_code: int
    output: tuple[bytes | None, bytes | None]


class FakeContainer:
    name = "harness-x-h1"

    def __init__(
        self, exit_code: int = 0, out: bytes = b"", err: bytes = b"", slow: float = 0.0
    ) -> None:
        self.calls: list[tuple[list[str], str]] = []
        self.archives: dict[str, bytes] = {}
        self.result = ExecResult(exit_code, (out or None, err or None))
        self.slow = slow

    def exec_run(self, argv: list[str], user: str = "", demux: bool = False) -> ExecResult:
        import time

        assert demux
        self.calls.append((argv, user))
        if self.slow:
            time.sleep(self.slow)
        return self.result

    def put_archive(self, path: str, data: bytes) -> bool:
        self.archives[path] = data
        return True

    def get_archive(self, path: str) -> tuple[Any, dict[str, Any]]:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            data = b"log line\n"
            info = tarfile.TarInfo(path.rsplit("/", 1)[-1])
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        return iter([buf.getvalue()]), {}


def test_commands_run_under_timeout_as_root_when_asked() -> None:
    c = FakeContainer(3, b"out", b"err")
    r = DockerRemote(c, timeout=30)
    assert isinstance(r, Remote)
    result = r.run(["iptables", "-S"], sudo=True)
    assert (result.exit, result.stdout, result.stderr) == (3, "out", "err")
    assert c.calls[0] == (["timeout", "-k", "2", "30", "iptables", "-S"], "root")
    r.run("echo $HOME", timeout=5)
    assert c.calls[1] == (["timeout", "-k", "2", "5", "sh", "-c", "echo $HOME"], "")


def test_124_is_ours_only_after_the_limit() -> None:
    quick = DockerRemote(FakeContainer(124), timeout=30)
    assert quick.run(["timeout", "1", "true"]).exit == 124  # the command's own timeout
    slow = DockerRemote(FakeContainer(124, slow=0.2), timeout=0.1)
    with pytest.raises(RemoteTimeout, match="container harness-x-h1: `sleep 9` did not finish"):
        slow.run(["sleep", "9"])


def test_upload_and_download_go_through_archives(tmp_path: Path) -> None:
    c = FakeContainer()
    r = DockerRemote(c)
    local = tmp_path / "f"
    local.write_text("hello")
    r.upload(local, "/etc/harness/f.conf", 0o600)
    with tarfile.open(fileobj=io.BytesIO(c.archives["/etc/harness"])) as tar:
        member = tar.getmember("f.conf")
        assert member.mode == 0o600
        extracted = tar.extractfile(member)
        assert extracted is not None and extracted.read() == b"hello"
    assert c.calls[0][0][-3:] == ["mkdir", "-p", "/etc/harness"]
    r.download("/var/log/x.log", tmp_path / "out" / "x.log")
    assert (tmp_path / "out" / "x.log").read_text() == "log line\n"


def test_a_failed_mkdir_is_one_line() -> None:
    r = DockerRemote(FakeContainer(1, err=b"read-only"))
    with pytest.raises(RemoteError, match="creating /ro failed: read-only"):
        r.upload(Path(__file__), "/ro/x")
