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

Before the loop holds them, a stop handler raises wherever the main thread is, and that
may be a finalizer: a weakref callback of the garbage collector (``threading``'s set of
threads drops each dead thread so), where Python prints what it raised and drops it. The
stop handler had ignored the signals after it, so the run went on to its time limit, and
every later Ctrl-C with it (1 of about 20,000 runs of ``tests/unit/test_runner_races.py``'s
stop signal under pytest, whose collections of a bigger heap last tens of milliseconds:
the signal came during one, as ``held`` began). A stop handler made ``raising`` is not
lost so: what it raised and Python dropped, the loop raises at its next step.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

Handler = Callable[[int, FrameType | None], Any]

_raised: BaseException | None = None
"""What a ``raising`` handler raised last, until Python drops it (then ``_dropped``)."""
_dropped: list[BaseException] = []
"""What a ``raising`` handler raised and Python dropped (a finalizer's), for the loop."""
_previous_hook: Callable[[Any], Any] = sys.unraisablehook


def raising(handler: Handler) -> Handler:
    """``handler``, a stop signal's that raises to end the run, made so that what it
    raises is not lost when it runs in a finalizer, where Python drops it: the runner's
    loop raises it then (``HeldSignals.raise_held``)."""

    def stop(signum: int, frame: FrameType | None) -> None:
        global _raised, _previous_hook
        try:
            handler(signum, frame)
        except BaseException as e:
            if sys.unraisablehook is not _on_unraisable:
                _previous_hook, sys.unraisablehook = sys.unraisablehook, _on_unraisable
            _raised = e
            raise

    return stop


def _on_unraisable(args: Any) -> None:
    """``sys.unraisablehook`` once a ``raising`` handler has raised: what it raised is
    kept for the loop; anything else is the previous hook's."""
    global _raised
    if _raised is not None and args.exc_value is _raised:
        _dropped.append(_raised)
        _raised = None
        return
    _previous_hook(args)


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
        """Raise what a ``raising`` handler raised and Python dropped; then run the
        handlers of the signals noted, in the order they came (what one raises goes up
        from here; the signals after it stay noted)."""
        if _dropped:
            raise _dropped.pop(0)
        while self._noted:
            handler, signum, frame = self._noted.pop(0)
            handler(signum, frame)
