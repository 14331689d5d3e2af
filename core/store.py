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
    """Write JSON atomically (write a temporary file, then rename)."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False, default=str) + "\n")
    tmp.replace(path)


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
        self._f.write((json.dumps(obj, separators=(",", ":"), default=str) + "\n").encode())

    def append_line(self, line: str) -> None:
        self._f.write((line + "\n").encode())

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
