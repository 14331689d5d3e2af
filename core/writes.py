"""Every file the harness writes is written here, and never through a symbolic link.

A writer names the file and, when the file lies below folders of its own, the output
root it belongs to (a run directory, ``--out DIR``, a suite's folder). The root is taken
as named, its links followed: it is the user's choice (``harness check results/latest``).
Below it, each folder is opened one component at a time relative to the one before,
with ``O_NOFOLLOW``, and the file is made in the last one through its descriptor, so
nothing renamed or linked meanwhile can send the write elsewhere. Without a root, the
file's own folder is the root.

- A whole file (``write_bytes``, ``write_text``: test.json, results.json, a report, the
  index, JUnit, a matrix, suite.json) is written to a new hidden name made with
  ``O_CREAT | O_EXCL | O_NOFOLLOW`` (never a link, never someone else's file) and renamed
  over the name: a reader sees the old file or the new one, and a failed write leaves
  the old one and no temporary file.
- An appended file (``open_append``: a history, events, a resource's log, harness.log)
  is opened with ``O_APPEND | O_CREAT | O_NOFOLLOW``, and kept only when it is a regular
  file (a FIFO would block the writer).
- Folders (``make_dirs``) are made one component at a time, the same way.

What the harness finds in the way is refused, never followed or replaced: a symbolic
link at the name or at a folder on the way (to a file, to a folder, dangling), or a
FIFO, socket or device there, is a ``WriteRefused`` (a HarnessError: one line, exit 254)
and nothing is written; a folder where a file goes (or a file where a folder goes) is
the system's own OSError, as any failed write is. A link planted at the name between the
look and the rename is replaced by the rename, not written through. The only links the
harness replaces on purpose are its own ``latest`` links (``core.store.point_latest``).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Final, Literal, overload

from core.errors import HarnessError
from core.formats.files import kind_of

_FOLDER: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_BELOW: Final = _FOLDER | os.O_NOFOLLOW
_NEW: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_APPEND: Final = (
    os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
)
_TRIES: Final = 8


class WriteRefused(HarnessError):
    """A write the harness will not make: a symbolic link at the name or on the way to
    it, or a FIFO, socket or device at the name. Nothing was written."""


def write_bytes(
    path: Path, data: bytes, *, root: Path | None = None, parents: bool = False
) -> Path:
    """Write ``data`` to ``path`` whole (a temporary name, then a rename) and return
    ``path``. ``root``: the output root ``path`` lies below (default: its folder);
    ``parents``: make the missing folders between them. WriteRefused for a link in the
    way; OSError for a failed write, which leaves the old file as it was."""
    path = Path(path)
    with _folder(path, root, parents) as (fd, name):
        _refuse_odd(fd, name, path)
        tmp, out = _temporary(fd, name)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
            finally:
                os.close(out)
            os.replace(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=fd)
            raise
    return path


def write_text(path: Path, text: str, *, root: Path | None = None, parents: bool = False) -> Path:
    """``write_bytes`` of ``text`` in UTF-8."""
    return write_bytes(path, text.encode("utf-8"), root=root, parents=parents)


@overload
def open_append(
    path: Path, *, root: Path | None = ..., text: Literal[False] = ...
) -> io.FileIO: ...
@overload
def open_append(
    path: Path, *, root: Path | None = ..., text: Literal[True]
) -> io.TextIOWrapper: ...
def open_append(
    path: Path, *, root: Path | None = None, text: bool = False
) -> io.FileIO | io.TextIOWrapper:
    """``path`` opened for appending (made when missing): unbuffered bytes, or with
    ``text`` UTF-8 text. WriteRefused for a link in the way or a name that is not a
    regular file; OSError when it cannot be opened."""
    path = Path(path)
    with _folder(path, root, False) as (fd, name):
        try:
            out = os.open(name, _APPEND, 0o666, dir_fd=fd)
        except OSError:  # a link, a FIFO without a reader: refused; else the error says
            _refuse_odd(fd, name, path)
            raise
    try:
        mode = os.fstat(out).st_mode
        if not stat.S_ISREG(mode):
            raise WriteRefused(f"{path}: {kind_of(mode)}, where the harness was to write")
        os.set_blocking(out, True)
        return os.fdopen(out, "a", encoding="utf-8") if text else os.fdopen(out, "ab", buffering=0)
    except BaseException:
        os.close(out)
        raise


def can_write_in(folder: Path) -> None:
    """Make and remove a nameless file in ``folder`` (as every write makes its temporary
    one), to learn before any work whether output can go there; the OSError if not
    (``/proc``, a read-only mount, a missing folder)."""
    import tempfile

    with tempfile.TemporaryFile(dir=folder):
        pass


def make_dirs(path: Path, *, root: Path) -> Path:
    """Make the folder ``path`` and those between ``root`` and it (those that exist are
    kept); return ``path``. WriteRefused for a link on the way."""
    path = Path(path)
    top, parts = _below(path, root)
    os.close(_walk(top, parts, create=True))
    return path


def _below(path: Path, root: Path) -> tuple[Path, tuple[str, ...]]:
    """``root`` as an absolute path and the components from it to ``path`` (``..``
    taken as written); WriteRefused when ``path`` is not below ``root``."""
    full, top = Path(os.path.abspath(path)), Path(os.path.abspath(root))
    if not full.is_relative_to(top) or full == top:
        raise WriteRefused(f"{path}: not inside {top}, where it was to be written")
    return top, full.relative_to(top).parts


def _walk(top: Path, parts: tuple[str, ...], create: bool) -> int:
    """The folder ``top/parts...`` opened, each component below ``top`` without
    following a link (WriteRefused for one); ``create`` makes the missing ones."""
    fd = os.open(top, _FOLDER)
    try:
        at = top
        for part in parts:
            at = at / part
            if create:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
            try:
                inner = os.open(part, _BELOW, dir_fd=fd)
            except OSError:
                _refuse_odd(fd, part, at)
                raise
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _folder(path: Path, root: Path | None, create: bool) -> Iterator[tuple[int, str]]:
    """The open folder that holds ``path``, reached from ``root`` (default: that folder)
    without a link, and the name of ``path`` in it. ``create``: make the folders
    missing on the way."""
    top, parts = _below(path, Path(os.path.abspath(path)).parent if root is None else root)
    fd = _walk(top, parts[:-1], create)
    try:
        yield fd, parts[-1]
    finally:
        os.close(fd)


def _refuse_odd(fd: int, name: str, shown: Path) -> None:
    """WriteRefused when ``name`` in the folder ``fd`` is a symbolic link, a FIFO, a
    socket or a device; nothing when it is missing, a file or a folder (where a write
    fails, the system's own error says why)."""
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise WriteRefused(
            f"{shown}: a symbolic link; the harness never writes through one "
            "(remove it, or name another place)"
        )
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise WriteRefused(f"{shown}: {kind_of(mode)}, where the harness was to write")


def _temporary(fd: int, name: str) -> tuple[str, int]:
    """A new hidden file beside ``name`` in the folder ``fd``, opened for writing; made
    with O_EXCL and O_NOFOLLOW, so it is never a link or someone else's file."""
    for _ in range(_TRIES):
        tmp = f".{name}.{os.urandom(4).hex()}.tmp"
        try:
            return tmp, os.open(tmp, _NEW, 0o666, dir_fd=fd)
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, "no free temporary name beside it; clean the folder", name)


SCRATCH_PREFIX: Final = ".harness-scratch-"
"""The name of a scratch folder (``scratch_folder``) begins so, a random tail after it."""


@contextlib.contextmanager
def scratch_folder(root: Path) -> Iterator[int]:
    """A new hidden folder made in the folder ``root`` for a command's temporary files
    (a streamed check's spill), as its open descriptor: files go in it through
    ``scratch_file``. It is removed with all it holds when the block ends, however it ends
    (an exception, Ctrl-C, or SIGTERM where the command turns it into one). ``root`` is
    opened without following a link: a link there is refused (WriteRefused, one line),
    and so is anything but a folder."""
    try:
        top = os.open(root, _BELOW)
    except OSError as e:
        if os.path.islink(root):  # only to word it: the open above is what refused it
            raise WriteRefused(
                f"{root}: a symbolic link; the harness never writes through one "
                "(name the folder itself, or another, with --spill-dir)"
            ) from None
        raise _cannot(root, e) from None
    try:
        try:
            name, fd = _scratch(top)
        except OSError as e:
            raise _cannot(root, e) from None
        try:
            yield fd
        finally:
            for entry in os.listdir(fd):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry, dir_fd=fd)
            os.close(fd)
            os.rmdir(name, dir_fd=top)
    finally:
        os.close(top)


def _cannot(root: Path, e: OSError) -> WriteRefused:
    return WriteRefused(
        f"{root}: cannot make a scratch folder there ({e.strerror}); "
        "name a folder you can write with --spill-dir"
    )


def _scratch(top: int) -> tuple[str, int]:
    """A new folder in the folder ``top`` under a free random name, and its descriptor."""
    for _ in range(_TRIES):
        name = f"{SCRATCH_PREFIX}{os.urandom(4).hex()}"
        try:
            os.mkdir(name, 0o700, dir_fd=top)
        except FileExistsError:
            continue
        try:
            return name, os.open(name, _BELOW, dir_fd=top)
        except BaseException:
            os.rmdir(name, dir_fd=top)
            raise
    raise OSError(errno.EEXIST, "no free name for a scratch folder; clean the folder")


def scratch_file(folder: int, name: str) -> io.FileIO:
    """A new file ``name`` in the scratch folder ``folder`` (``scratch_folder``), open for
    reading and writing; made with O_EXCL and O_NOFOLLOW, never a link."""
    fd = os.open(name, _NEW & ~os.O_WRONLY | os.O_RDWR, 0o600, dir_fd=folder)
    return os.fdopen(fd, "r+b", buffering=0)
