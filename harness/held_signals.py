"""Signal handlers held to the runner loop's steps.

A Python signal handler runs in the main thread between any two of its bytecodes, and a
stop signal's raises (``harness.orchestrate``: the run ends through its teardown). In the
runner's loop that could be anywhere: an operation taken out of the open ones and not yet
recorded, a worker out of the runner's lists and not yet among the abandoned, or the
runner's lock let go of and not yet taken back (waiting for it while a client thread
holds it, the loop then let go of a lock that thread held: ``release unlocked lock``
instead of the interruption: 16 of 400 runs of 8 client threads stopped by SIGTERM at a
random moment, measured before this module, as ``tests/unit/test_runner_races.py``
stops them, at a load average of 8). So while the loop
runs, every Python handler is replaced by one that notes its signal and wakes the loop
(``held``); the loop runs the handlers noted between its steps (``raise_held``), where
what they raise leaves nothing half done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

Handler = Callable[[int, FrameType | None], Any]


class HeldSignals:
    """The signals noted while ``held``, to be handled by ``raise_held``."""

    def __init__(self, wake: Callable[[], None]) -> None:
        """``wake``: wakes the loop from its wait (called in the handler: a write to a
        pipe it polls)."""
        self._wake = wake
        self._noted: list[tuple[Handler, int, FrameType | None]] = []

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold every Python signal handler until ``raise_held``; on leaving, each one
        handed back unless something replaced it meanwhile (the stop handler ignores the
        signals after the first one: that stays). Outside the main thread, where Python
        runs no handler, nothing to hold."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        replaced: dict[signal.Signals, tuple[Handler, Handler]] = {}
        try:  # a signal whose handler is not replaced yet may raise here: undone then too
            for signum in signal.valid_signals():
                handler = signal.getsignal(signum)
                if callable(handler):
                    note = self._noting(handler)
                    replaced[signum] = (handler, note)
                    signal.signal(signum, note)
            yield
        finally:
            for held, (handler, note) in replaced.items():
                if signal.getsignal(held) is note:
                    signal.signal(held, handler)

    def _noting(self, handler: Handler) -> Handler:
        def note(signum: int, frame: FrameType | None) -> None:
            self._noted.append((handler, signum, frame))
            self._wake()

        return note

    def raise_held(self) -> None:
        """Run the handlers of the signals noted, in the order they came (what one
        raises goes up from here; the signals after it stay noted)."""
        while self._noted:
            handler, signum, frame = self._noted.pop(0)
            handler(signum, frame)
