"""The power-loss layer's bookkeeping (``clusters._powerfs.disk``): a power cut keeps what
was fsynced, data and directory entries, and discards the rest, saying how many bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clusters._powerfs.disk import Disk


@pytest.fixture
def disk(tmp_path: Path) -> Disk:
    (tmp_path / "fs").mkdir()
    return Disk(tmp_path / "fs", tmp_path / "aside")


def _create(disk: Disk, path: str) -> int:
    return disk.create(path, os.O_CREAT | os.O_RDWR, 0o644)


def _synced(disk: Disk, path: str, data: bytes) -> int:
    """A new file ``path`` holding ``data``, fsynced; its open descriptor."""
    fd = _create(disk, path)
    disk.write(fd, path, data, 0)
    disk.fsync(fd)
    return fd


def _read(disk: Disk, path: str) -> bytes:
    return Path(disk.real(path)).read_bytes()


def test_synced_data_survives_and_unsynced_data_does_not(disk: Disk) -> None:
    fd = _synced(disk, "/aof", b"SET a 1\n")
    disk.write(fd, "/aof", b"SET b 2\n", 8)
    assert _read(disk, "/aof") == b"SET a 1\nSET b 2\n"  # the server reads its own writes

    assert disk.cut() == {"/aof": 8}
    assert _read(disk, "/aof") == b"SET a 1\n"
    os.close(fd)


def test_an_overwrite_and_a_truncation_of_synced_bytes_are_undone(disk: Disk) -> None:
    fd = _synced(disk, "/f", b"0123456789")
    disk.write(fd, "/f", b"ab", 2)
    disk.truncate(fd, "/f", 5)
    disk.write(fd, "/f", b"XYZ", 3)
    assert _read(disk, "/f") == b"01aXYZ"

    assert disk.cut() == {"/f": 5}
    assert _read(disk, "/f") == b"0123456789"
    os.close(fd)


def test_an_overwrite_through_a_write_only_descriptor_is_undone(disk: Disk) -> None:
    """etcd writes its preallocated WAL through a write-only descriptor."""
    os.close(_synced(disk, "/wal", b"\0" * 16))
    fd = os.open(disk.real("/wal"), os.O_WRONLY)
    disk.write(fd, "/wal", b"entry", 0)
    os.close(fd)
    assert disk.cut() == {"/wal": 5}
    assert _read(disk, "/wal") == b"\0" * 16


def test_a_file_never_fsynced_is_lost_whole_and_its_fsync_keeps_its_entry(disk: Disk) -> None:
    fd = _create(disk, "/new")
    disk.write(fd, "/new", b"unsynced", 0)
    os.close(fd)
    assert disk.cut() == {"/new": 8}
    assert not os.path.exists(disk.real("/new"))

    os.close(_synced(disk, "/new", b"durable"))
    assert disk.cut() == {}
    assert _read(disk, "/new") == b"durable"


def test_a_rename_over_a_file_is_undone_unless_an_fsync_followed(disk: Disk) -> None:
    for name, text in (("/manifest", b"old"), ("/manifest.tmp", b"new")):
        os.close(_synced(disk, name, text))
    disk.rename("/manifest.tmp", "/manifest")
    assert _read(disk, "/manifest") == b"new"

    assert disk.cut() == {"/manifest": 0, "/manifest.tmp": 0}
    assert _read(disk, "/manifest") == b"old"
    assert _read(disk, "/manifest.tmp") == b"new"

    disk.rename("/manifest.tmp", "/manifest")
    disk.fsync_dir()
    assert disk.cut() == {}
    assert _read(disk, "/manifest") == b"new"
    assert os.listdir(disk.aside) == []


def test_an_unlink_comes_back_and_any_fsync_commits_every_entry_before_it(
    disk: Disk,
) -> None:
    disk.mkdir("/sub", 0o755)
    fd = _create(disk, "/sub/f")
    disk.write(fd, "/sub/f", b"x", 0)
    other = _create(disk, "/other")
    disk.fsync(other)  # commits the mkdir and the creation of /sub/f too, as a journal does
    os.close(other)
    assert disk.pending() == {"/sub/f": 1}
    disk.fsync(fd)
    os.close(fd)
    disk.unlink("/sub/f")
    assert not os.path.exists(disk.real("/sub/f"))

    assert disk.cut() == {"/sub/f": 0}
    assert _read(disk, "/sub/f") == b"x"


def test_sync_all_makes_everything_durable_and_pending_says_what_a_cut_would_drop(
    disk: Disk,
) -> None:
    fd = _create(disk, "/a")
    disk.write(fd, "/a", b"abc", 0)
    assert disk.pending() == {"/a": 3}
    disk.sync_all()
    assert disk.pending() == {}
    disk.write(fd, "/a", b"d", 3)
    assert disk.cut() == {"/a": 1}
    assert _read(disk, "/a") == b"abc"
    os.close(fd)


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["write", "truncate", "fsync"]),
            st.integers(0, 40),
            st.binary(max_size=12),
        ),
        max_size=25,
    )
)
def test_a_cut_gives_back_the_content_of_the_last_fsync(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int, bytes]]
) -> None:
    root = tmp_path_factory.mktemp("disk")
    (root / "fs").mkdir()
    disk = Disk(root / "fs", root / "aside")
    fd = _create(disk, "/f")
    disk.fsync(fd)
    durable = b""
    for step, at, data in steps:
        if step == "write":
            disk.write(fd, "/f", data, at)
        elif step == "truncate":
            disk.truncate(fd, "/f", at)
        else:
            disk.fsync(fd)
            durable = _read(disk, "/f")
    disk.cut()
    assert _read(disk, "/f") == durable
    os.close(fd)
