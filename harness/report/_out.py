"""Where a report page goes and how it is written there.

``report_targets`` decides what ``harness check PATH... --html OUT`` writes: with one PATH,
OUT is the page itself, or an existing directory to put it in; with several, OUT is a
directory (made when its parent exists) holding one page per PATH, named after it
(``NAME.html``; a name given twice gets ``-2``, ``-3``... in the order given).
``write_page`` writes one: into a temporary file beside it, then renamed over it, so a
reader sees the old page or the new one, never half of one; never through a symbolic
link (a link named as the page or as OUT is refused, and the rename replaces no link).
Both refuse what they cannot do in one line (``HarnessError``).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from core.errors import HarnessError

SUFFIX: Final = ".html"
_TRIES: Final = 8


def report_targets(paths: Sequence[str], out: str) -> list[Path]:
    """The page of each of ``paths`` under ``--html out``, in order; the directory OUT
    names is made here when several paths need it. HarnessError (one line) for an OUT
    that is a link, whose parent does not exist, or that is a file where a directory is
    needed."""
    target = Path(out)
    if target.is_symlink():
        raise HarnessError(
            f"--html {out}: a symbolic link; name the file or directory itself "
            "(reports are never written through a link)"
        )
    if len(paths) == 1 and not target.is_dir():
        _parent_exists(target, out)
        return [target]
    if target.exists() and not target.is_dir():
        raise HarnessError(
            f"--html {out}: a file, but {len(paths)} paths need a directory for their "
            "reports; name a directory"
        )
    if not target.exists():
        _parent_exists(target, out)
        try:
            target.mkdir()
        except OSError as e:
            raise HarnessError(f"--html {out}: cannot make the directory ({e.strerror})") from None
    return [target / name for name in page_names(paths)]


def page_names(paths: Sequence[str]) -> list[str]:
    """One page name per path: its file (or directory) name and ``.html``, a name met
    again numbered from 2 (``x.log.html``, ``x.log-2.html``)."""
    seen: dict[str, int] = {}
    names = []
    for p in paths:
        base = Path(os.path.abspath(p)).name or "report"
        n = seen[base] = seen.get(base, 0) + 1
        names.append(f"{base}{SUFFIX}" if n == 1 else f"{base}-{n}{SUFFIX}")
    return names


def _parent_exists(target: Path, out: str) -> None:
    parent = target.absolute().parent
    if not parent.is_dir():
        raise HarnessError(
            f"--html {out}: its directory {parent} does not exist; make it first or name "
            "another place"
        )


def write_page(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (UTF-8) atomically and return ``path``. HarnessError
    (one line) when ``path`` is a symbolic link, its directory does not exist, or the
    write fails (the temporary file is removed; an existing page is left as it was)."""
    if path.is_symlink():
        raise HarnessError(
            f"{path}: a symbolic link; the report is not written through it (remove it "
            "or name another file)"
        )
    parent = path.absolute().parent
    if not parent.is_dir():
        raise HarnessError(f"{path}: its directory {parent} does not exist; make it first")
    data = text.encode("utf-8")
    tmp, fd = _temporary(path)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        _remove(tmp)
        raise HarnessError(f"{path}: the report could not be written ({e.strerror})") from None
    except BaseException:
        _remove(tmp)
        raise
    return path


def _temporary(path: Path) -> tuple[Path, int]:
    """A new file beside ``path`` (a hidden name no one else has), opened for writing;
    made with O_EXCL and O_NOFOLLOW, so it is never a link or someone else's file."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    for _ in range(_TRIES):
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return tmp, os.open(tmp, flags, 0o666)
        except FileExistsError:
            continue
        except OSError as e:
            raise HarnessError(f"{path}: the report could not be written ({e.strerror})") from None
    raise HarnessError(f"{path}: no free temporary name beside it; clean the directory")


def _remove(tmp: Path) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass
