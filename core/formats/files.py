"""Opening what a user names: regular files only, read whole, decoded as strict UTF-8.

A FIFO would block the reader forever, ``/dev/zero`` never ends, a directory cannot be
read: each is refused in one line naming what it is. The open itself never blocks
(``O_NONBLOCK``: a FIFO without a writer is not waited for). Bytes that are not UTF-8 are
an error naming the line, never replaced.
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO, Final

from core.formats.budget import Budget
from core.formats.errors import FilePath, FormatError, format_error

__all__ = ["bad_utf8", "decode", "kind_of", "open_regular", "read_bytes", "read_rest", "read_text"]

_KINDS: Final = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, in words ("a FIFO (named pipe)"...)."""
    for test, words in _KINDS:
        if test(mode):
            return words
    return "not a regular file"


def open_regular(path: FilePath, give: str = "give a history file") -> BinaryIO:
    """The regular file ``path`` opened for reading (binary); FormatError for anything
    else (``give`` says what to give instead), or when it cannot be opened or read: a file
    of ``/proc`` that is regular in name only (``/proc/self/mem``) fails its first read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise format_error(path, None, "no such file", "check the path") from None
    except OSError as e:
        raise format_error(
            path, None, f"cannot open it ({e.strerror})", "check its permissions"
        ) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise format_error(path, None, f"{kind_of(mode)}, not a regular file", give)
        try:
            os.pread(fd, 1, 0)
        except OSError as e:
            raise format_error(
                path, None, f"cannot read it ({e.strerror})", f"{give} that can be read"
            ) from None
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(
    path: FilePath, budget: Budget | None = None, give: str = "give a history file"
) -> bytes:
    """The content of the regular file ``path``; FormatError for anything else."""
    with open_regular(path, give) as f:
        return read_rest(path, f, budget)


def read_rest(path: FilePath, f: BinaryIO, budget: Budget | None = None) -> bytes:
    """What is left to read of the open regular file ``f`` (within ``budget``'s memory)."""
    try:
        if budget is not None:
            budget.check_size(path, os.fstat(f.fileno()).st_size)
        return f.read()
    except OSError as e:
        raise format_error(
            path, None, f"cannot read it ({e.strerror})", "check its permissions"
        ) from None


def decode(path: FilePath, data: bytes) -> str:
    """``data`` as strict UTF-8; FormatError naming the line of the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise bad_utf8(path, data, e) from None


def bad_utf8(
    path: FilePath, data: bytes, e: UnicodeDecodeError, line: int = 1, offset: int = 0
) -> FormatError:
    """The one-line error for bytes of ``data`` that are not UTF-8 (``data`` starting at
    ``line`` and byte ``offset`` of the file)."""
    line += data.count(b"\n", 0, e.start)
    byte = data[e.start : e.start + 1].hex()
    return format_error(
        path,
        line,
        f"not UTF-8 (byte 0x{byte} at offset {offset + e.start})",
        "save the file as UTF-8",
    )


def read_text(
    path: FilePath, budget: Budget | None = None, give: str = "give a history file"
) -> str:
    """The content of the regular file ``path`` as strict UTF-8 (``give``: what to give
    instead of a file that is none)."""
    return decode(path, read_bytes(path, budget, give))
