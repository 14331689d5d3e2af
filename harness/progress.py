"""The live progress display: elapsed and remaining time, ops/s, outcomes, active faults.

On a terminal it is a rich live panel refreshed a few times a second; elsewhere (CI logs)
one plain line every few seconds. It is written on the console it is given, stderr for a
run (``harness.terminal``): what a run found goes to stdout.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from types import TracebackType

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from harness.runner import Stats


def _fmt(s: float) -> str:
    s = max(0, int(s))
    return f"{s // 60}:{s % 60:02d}"


class Rate:
    """Operations per second, smoothed: an exponential moving average with a time
    constant of ``tau`` seconds over readings taken at any pace. The first reading is
    the average since the last reading at which no operation had completed (never a 0.0
    that only says no interval was measured yet); None until an operation completes."""

    def __init__(self, tau: float = 5.0) -> None:
        self.tau = tau
        self._last: tuple[float, int] | None = None
        self._rate: float | None = None
        self._idle = 0.0

    def __call__(self, elapsed: float, done: int) -> float | None:
        """The rate after ``done`` operations at ``elapsed`` seconds since the start."""
        if self._last is None:
            if done <= 0:
                self._idle = elapsed  # the ops have not begun: their time starts later
            elif elapsed > self._idle:
                self._last, self._rate = (elapsed, done), done / (elapsed - self._idle)
            return self._rate
        t0, d0 = self._last
        dt = elapsed - t0
        if dt <= 0:
            return self._rate
        weight = 1.0 - math.exp(-dt / self.tau)
        now = (done - d0) / dt
        self._rate = now if self._rate is None else self._rate + weight * (now - self._rate)
        self._last = (elapsed, done)
        return self._rate


def _rate_text(rate: float | None) -> str:
    return f"{'…':>6}" if rate is None else f"{rate:6.1f}"


class Progress:
    """Shows ``Stats`` while a run goes on. A context manager; safe when not a TTY."""

    def __init__(
        self,
        console: Console,
        stats: Stats,
        elapsed: Callable[[], float],
        total: float,
        title: str,
        note: Callable[[], str | None] | None = None,
    ) -> None:
        """``elapsed``: a clock in seconds; what it shows is the time since the progress
        began (``__enter__``: the workload's start, not the run's, whose cluster may take
        a minute to start), against ``total``. ``note``: a line of news to show beside the
        counts (the first anomaly the run's live check found, ``harness.live_check``), None
        while there is none."""
        self.note = note
        self.console = console
        self.stats = stats
        self.clock = elapsed
        self.origin = 0.0
        self.total = total
        self.title = title
        self._live: Live | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._rate = Rate()

    def elapsed(self) -> float:
        """Seconds since the progress began."""
        return self.clock() - self.origin

    def render(self) -> Table:
        st = self.stats
        el = self.elapsed()
        t = Table.grid(padding=(0, 2))
        t.add_row(
            f"[bold]{self.title}[/]",
            f"elapsed {_fmt(el)}",
            f"remaining {_fmt(self.total - el)}",
            f"{_rate_text(self._rate(el, st.completed))} ops/s",
            f"[green]ok {st.ok}[/]",
            f"[yellow]fail {st.fail}[/]",
            f"[magenta]info {st.info}[/]",
            "[red]fault: " + ", ".join(sorted(st.active_faults)) + "[/]"
            if st.active_faults
            else "no fault",
        )
        said = self.note() if self.note is not None else None
        if said:
            t.add_row(f"[red]{escape(said)}[/]")
        return t

    def line(self) -> str:
        st = self.stats
        el = self.elapsed()
        faults = ",".join(sorted(st.active_faults)) or "none"
        said = self.note() if self.note is not None else None
        return (
            f"[{_fmt(el)} / {_fmt(self.total)}] ops/s "
            f"{_rate_text(self._rate(el, st.completed)).strip()} "
            f"ok {st.ok} fail {st.fail} info {st.info} fault {faults}"
        ) + (f"; {said}" if said else "")

    def _plain_loop(self) -> None:
        while not self._stop.wait(5.0):
            self.console.print(self.line(), highlight=False)

    def __enter__(self) -> Progress:
        self.origin = self.clock()
        if self.console.is_terminal:
            self._live = Live(
                self.render(),
                console=self.console,
                refresh_per_second=4,
                get_renderable=self.render,
                transient=False,
                redirect_stdout=False,  # results go to stdout: never into the panel
            )
            try:
                self._live.__enter__()
            except BaseException:  # a Ctrl-C as the panel starts: the cursor back first
                self._live.stop()
                self.console.show_cursor(True)
                raise
        else:
            self._thread = threading.Thread(target=self._plain_loop, daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._live is not None:
            self._live.__exit__(et, e, tb)
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1)
