"""The clients' clock stepped: every client worker's wall clock moved at once, never the
machine's.

Clients that read the time (``workloads.wall_clock.WallClock``: Snowflake ids) read it
through libfaketime, whose offset comes from the run's client clock file. ``start-client-clock``
writes the step there (``--client-clock-delta``, e.g. ``-5``: five seconds back, an NTP step
or a VM restored from a snapshot), ``stop-client-clock`` writes ``+0``. Every change is
proven: ``date`` under the same libfaketime settings reads the clock back and its offset to
the machine's clock is the op's value (``offsets``), as for the servers' clocks
(``nemesis.faketime_skew``).
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from core.client import Completion, Invocation
from core.writes import write_text
from nemesis.base import RunView
from workloads.wall_clock import FAKETIME_LIB, clock_file, faketime_env

START, STOP = "start-client-clock", "stop-client-clock"
TOLERANCE_S = 1.5
CLIENTS = "clients"
"""The name the offsets are recorded under: every client process at once."""


@runtime_checkable
class ClientFiles(Protocol):
    """A run view that knows where the clients' side files go (the runner)."""

    events_path: Path | None


class ClientClock:
    """Steps the clients' wall clock by ``delta`` seconds; ``stop-client-clock`` resets it."""

    def __init__(self, delta: float, lib: str = FAKETIME_LIB) -> None:
        if not os.path.exists(lib):
            raise TypeError(
                f"libfaketime is not installed here ({lib}): apt-get install libfaketime"
            )
        self.delta = round(delta)
        self.lib = lib
        self.path: Path | None = None
        self._moved = False

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, view: RunView) -> None:
        events = view.events_path if isinstance(view, ClientFiles) else None
        self.path = clock_file(events)
        if self.path is None:
            raise TypeError("the run keeps no client files: no client clock to move")
        self._write(0)  # before the clients start: they read their clock through it

    def _write(self, offset: int) -> None:
        assert self.path is not None, "setup() first"
        write_text(self.path, f"{offset:+d}\n")  # whole: a client never reads half a line

    def invoke(self, inv: Invocation) -> Completion:
        target = 0 if inv.f == STOP else self.delta
        self._write(target)
        self._moved = target != 0
        measured = self.offset()
        value = {"delta": target, "offsets": {CLIENTS: measured}}
        if measured is None or abs(measured - target) > TOLERANCE_S:
            return Completion("fail", value=value, error=f"the clients' clock read {measured}")
        return Completion("ok", value=value)

    def offset(self) -> float | None:
        """The clients' faked wall clock minus the machine's, in seconds, read by ``date``
        under the clients' libfaketime settings."""
        assert self.path is not None, "setup() first"
        env = {**os.environ, "LD_PRELOAD": self.lib, **faketime_env(self.path)}
        before = time.time()
        try:
            out = subprocess.run(
                ["date", "+%s.%N"], env=env, capture_output=True, text=True, timeout=5
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        after = time.time()
        try:
            return round(float(out.strip()) - (before + after) / 2, 3)
        except ValueError:
            return None

    def teardown(self) -> None:
        if self._moved and self.path is not None:
            self._write(0)
            self._moved = False
