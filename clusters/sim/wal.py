"""The sim service's write-ahead log: what makes its state survive kill -9 and restart.

One JSON object per line, appended as the state changes; ``sync`` fsyncs what was appended
since the last ``sync``, and the server calls it before it answers a request (and after
each sweep that expired leases), so an acknowledged change is on disk before the client
hears of it, as with a replicated service's log. On start the service replays
``records()``; a line cut short by the crash (never acknowledged) is skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
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

    @property
    def dirty(self) -> bool:
        """Something was appended since the last sync."""
        return self._dirty

    def detach_sync(self) -> Callable[[], None] | None:
        """The fsync of what was appended so far, to run in another thread (None: nothing
        to sync); what is appended from now on waits for the next sync."""
        if not self._dirty or self._out is None:
            return None
        self._dirty = False
        fd = self._out.fileno()

        def fsync() -> None:
            try:
                os.fsync(fd)
            except OSError:
                self._dirty = True  # not on disk: the next request's sync tries again
                raise

        return fsync

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


class GroupCommit:
    """Few fsyncs for many requests (group commit), each off the server's event loop: a
    request whose answer must wait for changes not yet on disk (its own, or another's it
    may have seen) awaits ``durable``. The changes of the requests the loop has ready in
    one turn go to disk in one fsync, run in a thread while the loop serves on; the
    changes made meanwhile wait for the next one, started when it ends. An fsync takes
    milliseconds on a disk (1.8 ms on the loaded machine issue 36 measures on), so one
    per request, in the loop, bounds the service to a few hundred writes a second. The
    rule stays the log's: nothing is answered before every change it could have seen is
    on disk. ``detach``: the fsync of every change so far, to run in another thread,
    the changes made after it waiting for the next (None: nothing to sync)."""

    def __init__(self, detach: Callable[[], Callable[[], None] | None]) -> None:
        self._detach = detach
        self._running: asyncio.Future[None] | None = None  # the fsync in its thread
        self._next: asyncio.Future[None] | None = None  # for the changes made since

    async def durable(self, unsynced: bool) -> None:
        """Return once every change made so far is on disk (``unsynced``: some change is
        in no fsync yet)."""
        if unsynced:
            if self._next is None:
                self._next = asyncio.get_running_loop().create_future()
                if self._running is None:
                    asyncio.get_running_loop().call_soon(self._start)
            await asyncio.shield(self._next)
        elif self._running is not None:
            await asyncio.shield(self._running)

    def _start(self) -> None:
        done, self._next = self._next, None
        if done is None:
            return
        sync = self._detach()
        if sync is None:  # synced meanwhile (the lease sweep syncs on its own)
            done.set_result(None)
            return
        self._running = done
        loop = asyncio.get_running_loop()
        loop.run_in_executor(None, sync).add_done_callback(lambda f: self._ended(done, f))

    def _ended(self, done: asyncio.Future[None], synced: asyncio.Future[None]) -> None:
        self._running = None
        error = synced.exception()
        if error is not None:  # each waiting request's answer says it (an internal error)
            done.set_exception(error)
        else:
            done.set_result(None)
        if self._next is not None:
            self._start()
