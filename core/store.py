"""The run store: one directory per run, written in phases so a crash still leaves data.

``results/<test-name>/<timestamp>/``, the timestamp in UTC (``20261205T131254Z``):

- ``test.json``: the full configuration, seed and versions, written at the start;
- ``history.jsonl``: one op per line, appended and flushed as each op happens;
- ``resource.jsonl``: the protected resource's write log (lock and election workloads);
- ``results.json``: the checkers' results, written at the end;
- ``events.jsonl``: client-side events (lease grants, keepalive acknowledgements, losses);
- ``harness.log``: the harness's own log; ``nodes/<node>/``: node logs.

``results/latest`` is a symlink to the newest run, ``results/<test-name>/latest`` to the
newest of that test.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from core.errors import HarnessError
from core.formats import HISTORY_FILE as HISTORY_FILE  # the run's files are named here
from core.formats import jsonl as formats_jsonl
from core.formats.jsonl import JsonLines
from core.history import History
from core.ops import Op
from core.writes import open_append, write_bytes

RESOURCE_FILE = "resource.jsonl"
TEST_FILE = "test.json"
RESULTS_FILE = "results.json"
LOG_FILE = "harness.log"
EVENTS_FILE = "events.jsonl"
LATEST = "latest"
STAMP_FORMAT = "%Y%m%dT%H%M%SZ"
"""A run directory's (and a suite's) timestamp: UTC, the zone marked by ``Z``. Folders
written before it are local time without a zone (``20261205T131254``)."""


class StoreError(HarnessError):
    """A run directory that cannot be made as asked; the message says what to do."""


def utc_stamp(now: float | None = None) -> str:
    """``now`` (seconds since the epoch; default the present) as a folder name's
    timestamp, in UTC with the zone marked: ``20261205T131254Z``."""
    return time.strftime(STAMP_FORMAT, time.gmtime(time.time() if now is None else now))


def new_run_dir(base: Path, test_name: str, now: float | None = None) -> Path:
    """Create ``base/test_name/<UTC timestamp>`` (``-2``, ``-3``... after it when that
    second is taken) and point ``base/test_name/latest`` and ``base/latest`` at it. A
    test folder that is a symlink is refused (StoreError): no run is written through one."""
    folder = base / test_name
    if folder.is_symlink():
        raise StoreError(
            f"{folder} is a symbolic link: a run is never written through one; "
            "give another --name, or another output folder with -o"
        )
    folder.mkdir(parents=True, exist_ok=True)
    stamp = utc_stamp(now)
    run, n = folder / stamp, 1
    while True:
        try:
            run.mkdir()
            break
        except FileExistsError:
            n += 1
            run = folder / f"{stamp}-{n}"
    point_latest(folder, run)
    point_latest(base, run)
    return run


def point_latest(folder: Path, run: Path) -> None:
    """Make ``folder/latest`` a relative symlink to ``run`` (below ``folder``), replacing
    the old link in one rename, so a reader sees the old run or the new one, never none.
    Only a link is replaced, never written through: a file or folder of that name is left
    as it is, and so is a filesystem without symlinks."""
    link = folder / LATEST
    if link.exists() and not link.is_symlink():
        return
    tmp = folder / f".{LATEST}-{os.getpid()}"
    try:
        tmp.unlink(missing_ok=True)  # a link left by a killed run: the link goes, not its target
        tmp.symlink_to(run.relative_to(folder))
        os.replace(tmp, link)  # fails on a folder made meanwhile: it stays
    except OSError:
        tmp.unlink(missing_ok=True)


def write_json(path: Path, data: Any, *, root: Path | None = None, parents: bool = False) -> None:
    """Write JSON whole and never through a link (``core.writes.write_bytes``: a new
    temporary file, then a rename; ``root`` and ``parents`` as there); a failed write (a
    full disk) leaves the old file as it was and no temporary file behind."""
    text = json.dumps(data, indent=2, sort_keys=False, default=str) + "\n"
    write_bytes(path, text.encode(), root=root, parents=parents)


class Reserve:
    """Disk space set aside in a run directory for the run's last word.

    A run whose disk fills up must still say so in its test.json, but a full disk has no
    room for the new copy that an atomic write makes. So a run writes ``size`` bytes of
    zeros (real blocks, not a sparse file) to ``.reserve`` when it starts and gives them
    back (``release``) just before its last write; ``release`` is also what every run
    does at its end, so the file never outlives the run.
    """

    NAME = ".reserve"

    def __init__(self, run_dir: Path, size: int = 256 * 1024) -> None:
        self.path = run_dir / self.NAME
        with open(self.path, "xb") as f:
            f.write(bytes(size))
            f.flush()
            os.fsync(f.fileno())

    def release(self) -> None:
        self.release_in(self.path.parent)

    @classmethod
    def release_in(cls, run_dir: Path) -> None:
        """Give back the space set aside in ``run_dir`` (nothing if it is gone already)."""
        with contextlib.suppress(FileNotFoundError):
            (run_dir / cls.NAME).unlink()


def read_json(path: Path) -> Any:
    """The JSON value of a regular file; a one-line ``FormatError`` (a ValueError) if the
    file is not one, not UTF-8 or not JSON."""
    return formats_jsonl.read_json(path)


class JsonlWriter:
    """Appends one JSON object per line and flushes it to the OS at once.

    Each line is written with a single ``write`` call on an unbuffered file, so a kill -9 of
    the writer leaves at worst a truncated last line, which ``read_jsonl`` skips. The file
    is opened by ``core.writes.open_append`` (``root`` as there): never through a link,
    and only a regular file.
    """

    def __init__(self, path: Path, *, root: Path | None = None) -> None:
        self.path = path
        self._f: IO[bytes] = open_append(path, root=root)  # never through a link

    def append(self, obj: dict[str, Any]) -> None:
        self.append_line(json.dumps(obj, separators=(",", ":"), default=str))

    def append_line(self, line: str) -> None:
        data = (line + "\n").encode()
        written = self._f.write(data)
        if written is not None and written < len(data):  # a full disk takes what fits
            raise OSError(
                errno.ENOSPC, f"{os.strerror(errno.ENOSPC)} (a line cut short)", str(self.path)
            )

    def fsync(self) -> None:
        os.fsync(self._f.fileno())

    def close(self) -> None:
        if not self._f.closed:
            self._f.close()

    def __enter__(self) -> JsonlWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class HistoryWriter(JsonlWriter):
    """Appends ops to ``history.jsonl`` as they happen: each in a write of its own, or,
    ``batched``, kept until ``flush`` writes them all in one (whole lines, so a kill -9
    loses the ops kept, never a line of those written; the runner decides when:
    ``harness.runner.FLUSH_NS``). ``close`` writes what is kept first."""

    def __init__(self, path: Path, *, root: Path | None = None, batched: bool = False) -> None:
        super().__init__(path, root=root)
        self._kept: list[str] | None = [] if batched else None

    def write(self, op: Op) -> None:
        if self._kept is None:
            self.append_line(op.to_json())
        else:
            self._kept.append(op.to_json())

    def flush(self) -> None:
        """Write the ops kept, in one write."""
        if self._kept:
            lines, self._kept = self._kept, []
            self.append_line("\n".join(lines))

    def close(self) -> None:
        if not self._f.closed:
            try:
                self.flush()
            finally:
                super().close()


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Every JSON object of a JSON Lines file, read strictly (``core.formats.jsonl``).

    A last line cut short by a crash is skipped; anything else wrong raises a one-line
    ``FormatError`` (a ValueError) naming the file and line.
    """
    yield from _objects(JsonLines(path, fix=_ONE_OBJECT))


def read_records(path: Path) -> tuple[list[dict[str, Any]], int | None]:
    """Every JSON object of a JSON Lines file, read as ``read_jsonl`` reads them, and the
    line number of a last line cut short that was left out (None: there was none)."""
    lines = JsonLines(path, fix=_ONE_OBJECT)
    return list(_objects(lines)), lines.truncated


_ONE_OBJECT = "each line must be one JSON object"


def _objects(lines: JsonLines) -> Iterator[dict[str, Any]]:
    for n, value in lines:
        if type(value) is not dict:
            raise lines.error(n, f"a JSON {type(value).__name__}, not an object")
        yield value


def read_history_jsonl(path: Path) -> History:
    """The ops of a ``history.jsonl`` file (a truncated last line left out)."""
    return formats_jsonl.read_history_jsonl(path)[0]
