"""The sim service's write-ahead log: what makes its state survive kill -9 and restart.

One JSON object per line, appended as the state changes; ``sync`` fsyncs what was appended
since the last ``sync``, and the server calls it before it answers a request (and after
each sweep that expired leases), so an acknowledged change is on disk before the client
hears of it, as with a replicated service's log. On start the service replays
``records()``; a line cut short by the crash (never acknowledged) is skipped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from core.writes import open_append


class WriteAheadLog:
    """An append-only JSON Lines file at ``path``, fsynced on ``sync``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._out: IO[bytes] | None = None
        self._dirty = False

    def records(self) -> Iterator[dict[str, Any]]:
        """The complete records written by earlier lives of the server, oldest first."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        for line in data.split(b"\n"):
            try:
                rec = json.loads(line)
            except ValueError:
                continue  # the torn last line of a crash, or the empty tail
            if isinstance(rec, dict):
                yield rec

    def append(self, record: dict[str, Any]) -> None:
        """Append one record (written to the OS at once, on disk after ``sync``)."""
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._cut_torn_tail()
            self._out = open_append(self.path)  # never through a link; closed in close
        self._out.write(json.dumps(record, separators=(",", ":")).encode() + b"\n")
        self._dirty = True

    def _cut_torn_tail(self) -> None:
        """Drop a line an earlier life left cut short, so that this life's first record
        starts a line of its own instead of joining the torn one (and being lost)."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return
        if data and not data.endswith(b"\n"):
            os.truncate(self.path, data.rfind(b"\n") + 1)

    def sync(self) -> None:
        """fsync what was appended since the last sync (nothing to do if nothing was)."""
        if self._dirty and self._out is not None:
            os.fsync(self._out.fileno())
            self._dirty = False

    def close(self) -> None:
        if self._out is not None:
            self.sync()
            self._out.close()
            self._out = None
