"""Where log records go during a run: the run's ``harness.log``, never the console.

The harness process logs there from the moment its run directory exists (``log_to``).
Client libraries log too, and they run in the worker processes (kazoo's "Connection
dropped", etcd's and redis-py's retries): a spawned worker starts with no handler, and
Python then prints its warnings on stderr, in the middle of the progress line. So each
worker is handed the files the harness logs to (``log_files``) and logs there as well
(``worker_logs_to``), each line naming its process.
"""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Sequence
from pathlib import Path

from core.writes import open_append

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class RunLog(logging.FileHandler):
    """A run's log file, opened never through a link (``core.writes.open_append``). A
    record it cannot write (a full disk) is dropped without a word on the console:
    logging's own report of it is a traceback per record, in the middle of the progress
    line. ``failed`` says it happened (the run's crash line says why)."""

    failed = False

    def _open(self) -> io.TextIOWrapper:
        return open_append(Path(self.baseFilename), text=True)

    def handleError(self, record: logging.LogRecord) -> None:
        self.failed = True


def _utc(fmt: str) -> logging.Formatter:
    """A formatter whose times are UTC with the zone marked (``2026-12-05T13:12:54.123Z``):
    a run's log read on another machine, or beside a CI log, means one instant."""
    formatter = logging.Formatter(fmt)
    formatter.converter = time.gmtime
    formatter.default_time_format = "%Y-%m-%dT%H:%M:%S"
    formatter.default_msec_format = "%s.%03dZ"
    return formatter


def log_to(path: Path, tag: str = "") -> logging.FileHandler:
    """Append every log record of this process (INFO and above) to ``path``; ``tag``
    goes after the logger's name. Returns the handler (to remove when the run ends)."""
    handler = RunLog(path)
    handler.setFormatter(_utc(FORMAT.replace("%(name)s", f"%(name)s{tag}")))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


def log_files() -> tuple[str, ...]:
    """The run logs this process writes (``log_to``'s, not another library's file
    handler: pytest's goes to /dev/null), for the workers it starts."""
    return tuple(h.baseFilename for h in logging.getLogger().handlers if isinstance(h, RunLog))


def worker_logs_to(files: Sequence[str], process: int) -> None:
    """In a worker: log to the harness's files; with none (a worker outside a run), drop
    the records rather than print them on the console."""
    for f in files:
        log_to(Path(f), f" [process {process}]")
    if not files:
        logging.getLogger().addHandler(logging.NullHandler())
