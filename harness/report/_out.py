"""Where a report page goes and how it is written there.

``report_targets`` decides what ``harness check PATH... --html OUT`` writes: with one PATH,
OUT is the page itself, or an existing directory to put it in; with several, OUT is a
directory (made when its parent exists) holding one page per PATH, named after it
(``NAME.html``; a name given twice gets ``-2``, ``-3``... in the order given).
``write_page`` writes one (``core.writes``): into a temporary file beside it, then renamed
over it, so a reader sees the old page or the new one, never half of one; never through
a symbolic link (a link named as the page or as OUT is refused).
Both refuse what they cannot do in one line (``HarnessError``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from core.errors import HarnessError
from core.formats.files import kind_of
from core.writes import can_write_in, write_text

SUFFIX: Final = ".html"


def report_targets(paths: Sequence[str], out: str) -> list[Path]:
    """The page of each of ``paths`` under ``--html out``, in order; the directory OUT
    names is made here when several paths need it. HarnessError (one line) for an OUT
    that is a link, a device, whose parent does not exist, that is a file where a
    directory is needed, or where nothing can be written: said before any checking."""
    target = Path(out)
    if target.is_symlink():
        raise HarnessError(
            f"--html {out}: a symbolic link; name the file or directory itself "
            "(reports are never written through a link)"
        )
    if len(paths) == 1 and not target.is_dir():
        _parent_exists(target, out)
        if target.exists() and not target.is_file():
            raise HarnessError(
                f"--html {out}: {kind_of(target.stat().st_mode)}, not a file to write; "
                "name a file or directory"
            )
        _writable(target.absolute().parent, out)
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
    _writable(target, out)
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


def _writable(folder: Path, out: str) -> None:
    """HarnessError (one line) unless a file can be made in ``folder``, as ``write_page``
    makes its temporary one (``/proc``, a read-only mount)."""
    try:
        can_write_in(folder)
    except OSError as e:
        raise HarnessError(
            f"--html {out}: cannot write in {folder} ({e.strerror or e}); name another place"
        ) from None


def write_page(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` (UTF-8) whole, never through a link
    (``core.writes.write_text``), and return ``path``. HarnessError (one line) when
    ``path`` is a symbolic link, its directory does not exist, or the write fails (the
    temporary file is removed; an existing page is left as it was)."""
    parent = path.absolute().parent
    if not parent.is_dir():
        raise HarnessError(f"{path}: its directory {parent} does not exist; make it first")
    try:
        return write_text(path, text)
    except OSError as e:
        raise HarnessError(f"{path}: the report could not be written ({e.strerror})") from None
