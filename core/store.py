"""The run store: one directory per run, written in phases so a crash still leaves data.

``results/<test-name>/<timestamp>/``:

- ``test.json``: the full configuration, seed and versions, written at the start;
- ``history.jsonl``: one op per line, appended and flushed as each op happens;
- ``resource.jsonl``: the protected resource's write log (lock and election workloads);
- ``results.json``: the checkers' results, written at the end;
- ``events.jsonl``: client-side events (lease grants, keepalive acknowledgements, losses);
- ``harness.log``: the harness's own log; ``nodes/<node>/``: node logs.

``results/latest`` is a symlink to the newest run.
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

from core.formats import HISTORY_FILE as HISTORY_FILE  # the run's files are named here
from core.formats import jsonl as formats_jsonl
from core.formats.jsonl import JsonLines
from core.history import History
from core.ops import Op

RESOURCE_FILE = "resource.jsonl"
TEST_FILE = "test.json"
RESULTS_FILE = "results.json"
LOG_FILE = "harness.log"
EVENTS_FILE = "events.jsonl"


def new_run_dir(base: Path, test_name: str, now: float | None = None) -> Path:
    """Create ``base/test_name/<timestamp>`` and point ``base/latest`` at it."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.localtime(now if now is not None else time.time()))
    run = base / test_name / stamp
    n = 1
    while run.exists():
        n += 1
        run = base / test_name / f"{stamp}-{n}"
    run.mkdir(parents=True)
    latest = base / "latest"
    tmp = base / f".latest-{os.getpid()}"
    try:
        if tmp.is_symlink() or tmp.exists():
            tmp.unlink()
        tmp.symlink_to(run.relative_to(base))
        tmp.replace(latest)
    except OSError:
        pass  # a store on a filesystem without symlinks still works, without `latest`
    return run


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (write a temporary file, then rename); a failed write (a
    full disk) leaves the old file as it was and no temporary file behind."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
        tmp.replace(path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


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
    the writer leaves at worst a truncated last line, which ``read_jsonl`` skips.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._f: IO[bytes] = open(path, "ab", buffering=0)  # noqa: SIM115

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
    """Appends ops to ``history.jsonl`` as they happen."""

    def write(self, op: Op) -> None:
        self.append_line(op.to_json())


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """Every JSON object of a JSON Lines file, read strictly (``core.formats.jsonl``).

    A last line cut short by a crash is skipped; anything else wrong raises a one-line
    ``FormatError`` (a ValueError) naming the file and line.
    """
    lines = JsonLines(path, fix="each line must be one JSON object")
    for n, value in lines:
        if type(value) is not dict:
            raise lines.error(n, f"a JSON {type(value).__name__}, not an object")
        yield value


def read_history_jsonl(path: Path) -> History:
    """The ops of a ``history.jsonl`` file (a truncated last line left out)."""
    return formats_jsonl.read_history_jsonl(path)[0]
