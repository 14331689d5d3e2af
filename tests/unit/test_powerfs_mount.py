"""The power-loss layer's FUSE glue (``clusters._powerfs.mount``) mounted on this machine, as
a node runs it: through the mount, fsynced data and the files it created survive a power
cut, the unsynced tail and an entry no fsync followed do not, and the cut says how many
bytes it discarded. Needs root, /dev/fuse and Debian's python3-fuse for /usr/bin/python3
(the nodes' images bring it); skipped where those are missing, failed in CI
(``HARNESS_REQUIRE_ROOT=1``, where ``.ci/run`` installs them)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"


def _fuse_missing() -> str | None:
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    probe = subprocess.run([SYSTEM_PYTHON, "-c", "import fuse"], capture_output=True)
    return "no python3-fuse for /usr/bin/python3" if probe.returncode else None


def _layer(*args: str) -> list[str]:
    return [SYSTEM_PYTHON, "-m", "clusters._powerfs.mount", *args]


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    missing = _fuse_missing()
    if missing and os.environ.get("HARNESS_REQUIRE_ROOT") == "1":  # CI: .ci/run installs it
        pytest.fail(f"the power-loss layer cannot mount here: {missing}")
    if missing:
        pytest.skip(missing)
    backing, mount, sock = tmp_path / "disk", tmp_path / "data", str(tmp_path / "ctl.sock")
    backing.mkdir()
    mount.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    daemon = subprocess.Popen(
        _layer("serve", str(backing), str(mount), sock),
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while not (os.path.ismount(mount) and os.path.exists(sock)):
            assert time.monotonic() < deadline and daemon.poll() is None, "the layer mounted"
            time.sleep(0.05)
        yield mount, sock
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
        daemon.kill()
        daemon.wait(10)


def _ask(sock: str, command: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        _layer("ctl", sock, command), env=env, capture_output=True, text=True, timeout=30
    )
    answer = json.loads(out.stdout)
    assert isinstance(answer, dict)
    return answer


@pytest.mark.root
def test_through_the_mount_a_cut_keeps_what_was_fsynced_and_nothing_else(
    mounted: tuple[Path, str],
) -> None:
    mount, sock = mounted
    fd = os.open(mount / "aof", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, b"SET a 1\n")
    os.fsync(fd)
    os.write(fd, b"SET b 2\n")
    os.close(fd)
    (mount / "tmp").write_bytes(b"never synced")
    assert (mount / "aof").read_bytes() == b"SET a 1\nSET b 2\n"

    assert _ask(sock, "cut") == {"discarded": {"/aof": 8, "/tmp": 12}}
    assert (mount / "aof").read_bytes() == b"SET a 1\n"
    assert sorted(os.listdir(mount)) == ["aof"]


NOBODY = 65534


@pytest.mark.root
def test_a_server_of_its_own_user_owns_what_it_creates_and_is_held_to_modes(
    mounted: tuple[Path, str],
) -> None:
    """PostgreSQL runs as ``postgres``: through the mount it may work (``allow_other``),
    what it creates is its own (it checks its data directory's owner), and the kernel
    holds it to the files' modes (``default_permissions``)."""
    mount, _ = mounted
    os.chmod(mount, 0o1777)
    secret = mount / "secret"
    secret.write_bytes(b"root only")
    secret.chmod(0o600)

    def as_nobody(script: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["sh", "-c", script],
            cwd=mount,
            user=NOBODY,
            group=NOBODY,
            extra_groups=[],
            capture_output=True,
            text=True,
            timeout=30,
        )

    made = as_nobody("mkdir d && echo x > d/f && cat d/f")
    assert made.returncode == 0 and made.stdout == "x\n", made.stderr
    owners = {(p.lstat().st_uid, p.lstat().st_gid) for p in (mount / "d", mount / "d" / "f")}
    assert owners == {(NOBODY, NOBODY)}
    assert as_nobody("cat secret").returncode != 0
