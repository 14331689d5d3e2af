"""Digests of a run's record files: what the run left, and what changed after it.

The check that ends a run writes the sha256 of each record file (test.json, the history,
the side logs) into results.json (``record_digests``: file name -> ``sha256:<hex>``); a
later check recomputes them and says which file changed since the run, or is gone, or is
new. A digest is a witness, not a seal: whoever can edit a record can edit results.json
too; what it catches is a record changed by accident or by a tool that did not say so.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Final

from core.formats.files import open_regular

ALGORITHM: Final = "sha256"
CHUNK: Final = 1 << 20


def digest(path: Path) -> str:
    """``sha256:<hex>`` of the regular file ``path`` (read in chunks; a FIFO or device is
    refused by ``open_regular``, one line)."""
    h = hashlib.sha256()
    with open_regular(path) as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return f"{ALGORITHM}:{h.hexdigest()}"


def digests(run_dir: Path, names: Iterable[str]) -> dict[str, str]:
    """The digest of each file ``names`` names in ``run_dir`` that is there."""
    return {name: digest(run_dir / name) for name in names if (run_dir / name).is_file()}


def inside(name: str) -> bool:
    """Whether a record name read from results.json stays inside the run directory (a
    relative path without ``..``): only those are compared."""
    path = Path(name)
    return bool(name) and not path.is_absolute() and ".." not in path.parts


def recorded(results: Any) -> dict[str, str] | None:
    """The digests a run recorded in its results.json (``results``, as read), None when
    it recorded none (an older run, a run killed before its check, no results.json)."""
    found = results.get("record_digests") if isinstance(results, dict) else None
    if not isinstance(found, dict):
        return None
    return {str(k): str(v) for k, v in found.items()}


def changes(run: dict[str, str], now: dict[str, str]) -> list[str]:
    """One sentence per record file that differs from what the run recorded: changed,
    gone or new (a new one is a record the run did not leave)."""
    out = []
    for name in sorted({*run, *now}):
        if name not in now:
            out.append(f"{name} is gone since the run (the run recorded its digest)")
        elif name not in run:
            out.append(f"{name} is new since the run (the run recorded no digest of it)")
        elif run[name] != now[name]:
            out.append(f"{name} changed since the run (digest differs)")
    return out
