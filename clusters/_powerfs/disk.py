"""A directory whose changes since their last fsync can be undone: a disk that loses power.

The power-loss fault needs what a real disk would hold after the power went: the file
data a server fsynced (or fdatasynced), and the directory entries whose directory it
fsynced, nothing else. The kernel keeps the rest in its page cache, which a SIGKILL leaves
alone; so the node's data directory is served by a small FUSE layer (``clusters._powerfs.
mount``) that hands every change to a ``Disk``. The ``Disk`` applies the change to its
backing directory at once (reads stay plain reads) and keeps what it needs to undo it:

- **data**: per file (by inode), its size at the last sync and the durable bytes each
  unsynced write or truncation replaced, saved once; fsync or fdatasync of the file drops
  them (the data is durable).
- **entries**: an ordered journal of creations, removals and renames; an unlinked or
  replaced file is moved aside, not deleted, until its removal is durable. Any fsync, of
  a file or of a directory, makes every entry change before it durable: a journaling file
  system (ext4's ordered mode) commits its whole running transaction on any fsync, so
  what is on disk is always a prefix of the changes, never a mix.

``cut`` is the power cut: every unsynced write and truncation is undone, then every
pending entry change, newest first; it answers what it discarded, bytes per file.
``sync_all`` is the opposite, the state taken as on disk (the layer calls it once the
server has started). Only the standard library: this module also runs inside the nodes.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path

Ranges = list[tuple[int, bytes]]


@dataclass
class _Data:
    """One file's unsynced data: its durable size, the durable bytes overwritten since,
    and how many bytes were written since."""

    fd: int
    """The layer's own descriptor of the file, read-write (the server's may be write-only:
    etcd's WAL is), valid whatever renames or unlinks it."""
    name: str
    durable_size: int
    saved: Ranges = field(default_factory=list)
    written: int = 0

    def save(self, start: int, end: int) -> None:
        """Keep the durable bytes of ``[start, end)`` not kept yet (before they change)."""
        end = min(end, self.durable_size)
        for lo, hi in _uncovered(start, end, [(o, o + len(b)) for o, b in self.saved]):
            self.saved.append((lo, os.pread(self.fd, hi - lo, lo)))

    def restore(self) -> None:
        """Put the file back as it was at its last sync."""
        os.ftruncate(self.fd, self.durable_size)
        for offset, data in self.saved:
            os.pwrite(self.fd, data, offset)


def _uncovered(start: int, end: int, covered: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The parts of ``[start, end)`` outside every interval of ``covered``."""
    out = []
    at = start
    for lo, hi in sorted(covered):
        if hi <= at or lo >= end:
            continue
        if lo > at:
            out.append((at, lo))
        at = max(at, hi)
    if at < end:
        out.append((at, end))
    return out


@dataclass(frozen=True, slots=True)
class _Entry:
    """One pending directory-entry change, and how to undo it."""

    kind: str
    """created, mkdir, removed (moved to ``aside``), renamed (``path`` was ``old``)."""
    path: str
    old: str = ""
    aside: str = ""
    """Where a removed or replaced file waits until its removal is durable."""


class Disk:
    """The backing directory ``root`` with its unsynced changes kept apart (module doc).

    Paths given to it are the layer's: ``/`` is ``root``. ``aside`` is a directory on the
    same file system, outside ``root``, where removed files wait. Every method holds one
    lock: the layer's callbacks and the power cut never interleave.
    """

    def __init__(self, root: Path, aside: Path) -> None:
        self.root = root
        self.aside = aside
        aside.mkdir(parents=True, exist_ok=True)
        self.lock = threading.RLock()
        self._data: dict[int, _Data] = {}
        self._journal: list[_Entry] = []
        self._serial = 0

    def real(self, path: str) -> str:
        """The backing path of the layer's ``path``."""
        return str(self.root) + path if path != "/" else str(self.root)

    # -- data --------------------------------------------------------------------------

    def _tracked(self, fd: int, path: str) -> _Data:
        ino = os.fstat(fd).st_ino
        data = self._data.get(ino)
        if data is None:
            own = os.open(f"/proc/self/fd/{fd}", os.O_RDWR)  # a new description of the file
            data = _Data(own, path, os.fstat(fd).st_size)
            self._data[ino] = data
        data.name = path
        return data

    def write(self, fd: int, path: str, buf: bytes, offset: int) -> int:
        """Write ``buf`` at ``offset`` of the open file ``fd`` (``path``), undoably."""
        with self.lock:
            data = self._tracked(fd, path)
            data.save(offset, offset + len(buf))
            data.written += len(buf)
            return os.pwrite(fd, buf, offset)

    def truncate(self, fd: int, path: str, length: int) -> None:
        """Cut or extend the open file ``fd`` (``path``) to ``length``, undoably."""
        with self.lock:
            data = self._tracked(fd, path)
            data.save(length, data.durable_size)
            os.ftruncate(fd, length)

    def fsync(self, fd: int) -> None:
        """fsync/fdatasync of ``fd``: its data so far is durable, and every entry change."""
        with self.lock:
            data = self._data.pop(os.fstat(fd).st_ino, None)
            if data is not None:
                os.close(data.fd)
            self.fsync_dir()

    # -- directory entries -------------------------------------------------------------

    def create(self, path: str, flags: int, mode: int) -> int:
        """Open ``path`` with ``flags`` (O_CREAT among them); a new entry is pending."""
        with self.lock:
            real = self.real(path)
            existed = os.path.lexists(real)
            if existed and flags & os.O_TRUNC:
                fd = os.open(real, flags & ~os.O_TRUNC, mode)
                self.truncate(fd, path, 0)
                return fd
            fd = os.open(real, flags, mode)
            if not existed:
                self._journal.append(_Entry("created", path))
            return fd

    def mkdir(self, path: str, mode: int) -> None:
        """A new directory; pending in its parent."""
        with self.lock:
            os.mkdir(self.real(path), mode)
            self._journal.append(_Entry("mkdir", path))

    def symlink(self, target: str, path: str) -> None:
        """A new symbolic link; pending in its parent."""
        with self.lock:
            os.symlink(target, self.real(path))
            self._journal.append(_Entry("created", path))

    def link(self, existing: str, path: str) -> None:
        """A new hard link to ``existing``; pending in its parent."""
        with self.lock:
            os.link(self.real(existing), self.real(path))
            self._journal.append(_Entry("created", path))

    def unlink(self, path: str) -> None:
        """Remove ``path``: moved aside until its directory is synced."""
        with self.lock:
            aside = self._set_aside(path)
            self._journal.append(_Entry("removed", path, aside=aside))

    def rmdir(self, path: str) -> None:
        """Remove the empty directory ``path`` (kept aside like a file)."""
        with self.lock:
            if os.listdir(self.real(path)):
                raise OSError(39, "Directory not empty", path)
            self.unlink(path)

    def rename(self, old: str, new: str) -> None:
        """Rename ``old`` to ``new``; a file it replaces is moved aside."""
        with self.lock:
            aside = self._set_aside(new) if os.path.lexists(self.real(new)) else ""
            os.rename(self.real(old), self.real(new))
            self._journal.append(_Entry("renamed", new, old=old, aside=aside))

    def fsync_dir(self) -> None:
        """fsync of a directory (or of a file): every entry change so far is durable."""
        with self.lock:
            for entry in self._journal:
                if entry.aside:
                    _remove(entry.aside)
            self._journal.clear()

    def _set_aside(self, path: str) -> str:
        self._serial += 1
        aside = str(self.aside / f"{self._serial}")
        os.rename(self.real(path), aside)
        return aside

    # -- the power cut and its opposite ------------------------------------------------

    def pending(self) -> dict[str, int]:
        """Unsynced bytes written per file, and pending entry changes, as ``cut`` would
        report them now."""
        with self.lock:
            out = {d.name: d.written for d in self._data.values()}
            for entry in self._journal:
                out.setdefault(entry.path, 0)
            return out

    def cut(self) -> dict[str, int]:
        """The power cut: undo every unsynced write, then every pending entry change,
        newest first. Answers the bytes discarded per file (a file whose entry is undone
        counts its whole size: a synced file whose creation was not is lost whole)."""
        with self.lock:
            lost: dict[str, int] = {}
            for data in self._data.values():
                data.restore()
                os.close(data.fd)
                lost[data.name] = lost.get(data.name, 0) + data.written
            self._data.clear()
            for entry in reversed(self._journal):
                real = self.real(entry.path)
                if entry.kind in ("created", "mkdir"):
                    lost[entry.path] = lost.get(entry.path, 0) + _size(real)
                    _remove(real)
                elif entry.kind == "renamed":
                    os.rename(real, self.real(entry.old))
                    lost.setdefault(entry.old, 0)
                if entry.aside:
                    os.rename(entry.aside, real)
                    lost.setdefault(entry.path, 0)
            self._journal.clear()
            _empty(self.aside)
            return lost

    def sync_all(self) -> None:
        """Everything so far durable, as if the kernel had written it all back."""
        with self.lock:
            for data in self._data.values():
                os.close(data.fd)
            self._data.clear()
            self.fsync_dir()


def _size(real: str) -> int:
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return 0
    return st.st_size if not os.path.isdir(real) else 0


def _remove(real: str) -> None:
    if os.path.isdir(real) and not os.path.islink(real):
        os.rmdir(real)
    elif os.path.lexists(real):
        os.unlink(real)


def _empty(folder: Path) -> None:
    for child in folder.iterdir():
        _remove(str(child))
