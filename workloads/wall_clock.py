"""The wall clock a client reads its time from, which the client-clock fault can move.

A client that makes ids from the clock (``workloads.ids.snowflake``) reads the wall clock
through libfaketime, loaded in its worker process, whose offset comes from one file of the
run (``clock_file``: beside the clients' event log, re-read on every call). The client-clock
fault writes ``-5`` there and every client's clock is 5 s behind at once, as the servers'
clock fault moves a server's (``nemesis.faketime_skew``); the machine's own clock is never touched.

libfaketime is loaded with ``ctypes`` and only its ``clock_gettime`` is called: preloading it
into the whole Python worker (``LD_PRELOAD``) breaks ``time.sleep`` (Python's absolute
``clock_nanosleep`` on the monotonic clock fails with EINVAL under Debian's libfaketime
0.9.10), and the run's own clock (``core.run_clock``, monotonic) must not move anyway. Without
the file (no client-clock fault in the run) the clock is ``time.time_ns``.
"""

from __future__ import annotations

import ctypes
import os
import time
from pathlib import Path
from typing import Final

FAKETIME_LIB: Final = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
"""Debian's libfaketime (package ``libfaketime``) on the machine the clients run on."""
CLOCK_FILE: Final = "client-clock.faketime"
CLOCK_REALTIME: Final = 0


def clock_file(events_path: Path | None) -> Path | None:
    """The run's client clock file (offsets such as ``-5``), beside the clients' event log
    (``WorkerContext.events_path``); None outside a run."""
    return None if events_path is None else events_path.parent / CLOCK_FILE


def faketime_env(path: Path) -> dict[str, str]:
    """libfaketime's settings for an offset read from ``path`` on every call, the wall
    clock only."""
    return {
        "FAKETIME_TIMESTAMP_FILE": str(path),
        "FAKETIME_NO_CACHE": "1",
        "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    }


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class WallClock:
    """A client's wall clock in nanoseconds since the epoch (``__call__``): libfaketime's
    when the run's clock file exists, else the machine's."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fake: ctypes.CDLL | None = None
        if path is not None and path.exists():
            os.environ.update(faketime_env(path))  # read by libfaketime as it loads
            self._fake = ctypes.CDLL(FAKETIME_LIB)

    @property
    def faked(self) -> bool:
        """Whether the clock is read through libfaketime."""
        return self._fake is not None

    def __call__(self) -> int:
        if self._fake is None:
            return time.time_ns()
        ts = _Timespec()
        if self._fake.clock_gettime(CLOCK_REALTIME, ctypes.byref(ts)) != 0:
            raise OSError(ctypes.get_errno(), "clock_gettime through libfaketime failed")
        return int(ts.tv_sec) * 1_000_000_000 + int(ts.tv_nsec)
