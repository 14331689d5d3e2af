"""Fault schedules: generators for the nemesis thread.

A schedule only decides *when* the nemesis is asked to do *what*; the nemesis itself (what
"start" and "stop" mean: a partition, a pause, a kill) lives with the faults. Nemesis ops
are invoked on the ``"nemesis"`` thread, whose process is never retired.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core.gen.context import PENDING, Context, GeneratorError, Pending, Request, to_ns
from core.gen.lift import EXHAUSTED, check_template
from core.gen.rng import rng_float
from core.ops import NEMESIS, Op

OpSpec = tuple[str, Any, Any]  # (f, value, key)


@dataclass(frozen=True, slots=True)
class NemesisSchedule:
    """Emits ``ops[0]``, ``ops[1]``, ``ops[0]``... on the nemesis thread, each ``interval``
    ns (plus a seeded jitter uniform in [-jitter, +jitter]) after the previous one
    *completed*; the first after ``first`` ns (default one interval) from the schedule's
    start (its first ``op()`` or ``update()``). ``remaining`` ops in all (None: forever).

    Counting from the completion is what makes a fault last what it was asked to: a start
    that takes seconds to take effect (a holder looked for, a node's rules written) would
    otherwise eat its own window, and the stop would come early (a 10 s partition that
    took effect 8.4 s late lasted 1.6 s). ``awaiting`` is set between an op's invocation
    and its completion, when the next time cannot be known yet."""

    interval: int
    ops: tuple[OpSpec, ...]
    jitter: int = 0
    first: int | None = None
    remaining: int | None = None
    i: int = 0
    next_time: int | None = None
    state: int = 0
    awaiting: str | None = None
    """The f of the op invoked and not yet completed: the next op is timed from its end."""
    until: int | None = None
    """No fault is started (``ops[0]``) that could not last its interval before this run
    clock time (ns): a fault started just before the end of a phase would be cut short
    by the final heal and show nothing (None: no such bound)."""

    def _gap(self, state: int) -> tuple[int, int]:
        if not self.jitter:
            return self.interval, state
        u, state = rng_float(state)
        return max(0, self.interval + int((2 * u - 1) * self.jitter)), state

    def _start(self, now: int) -> tuple[int, int]:
        if self.next_time is not None:
            return self.next_time, self.state
        if self.first is not None:
            return now + self.first, self.state
        gap, state = self._gap(self.state)
        return now + gap, state

    def op(self, ctx: Context) -> tuple[Request | Pending | None, Any]:
        if self.remaining is not None and self.remaining <= 0:
            return None, EXHAUSTED
        if NEMESIS not in ctx.all_threads:
            raise GeneratorError(
                "nemesis_schedule needs the nemesis thread, but this context has none: do not "
                "wrap it in clients(...), and run with a nemesis thread"
            )
        if self.awaiting is not None:
            return PENDING, self
        nt, state = self._start(ctx.time)
        if NEMESIS not in ctx.free_threads:
            if nt == self.next_time:
                return PENDING, self
            return PENDING, self._with(self.i, nt, state, self.remaining)
        if (
            self.until is not None
            and self.i == 0
            and max(nt, ctx.time) + self.interval > self.until
        ):
            return None, EXHAUSTED  # a start that cannot last its interval: none
        f, value, key = self.ops[self.i]
        req = Request(ctx.thread_process[NEMESIS], f, value, key, nt)
        rem = None if self.remaining is None else self.remaining - 1
        return req, self._with((self.i + 1) % len(self.ops), None, state, rem, awaiting=f)

    def update(self, ctx: Context, event: Op) -> Any:
        if self.awaiting is not None:
            if event.process != NEMESIS or event.type == "invoke" or event.f != self.awaiting:
                return self
            gap, state = self._gap(self.state)  # the op ended: the next one is due a gap on
            return self._with(self.i, event.time + gap, state, self.remaining)
        if self.next_time is not None:
            return self
        nt, state = self._start(ctx.time)
        return self._with(self.i, nt, state, self.remaining)

    def reseed(self, seed: int) -> Any:
        return NemesisSchedule(
            self.interval,
            self.ops,
            self.jitter,
            self.first,
            self.remaining,
            self.i,
            self.next_time,
            seed,
            self.awaiting,
            self.until,
        )

    def _with(
        self,
        i: int,
        next_time: int | None,
        state: int,
        remaining: int | None,
        awaiting: str | None = None,
    ) -> NemesisSchedule:
        return NemesisSchedule(
            self.interval,
            self.ops,
            self.jitter,
            self.first,
            remaining,
            i,
            next_time,
            state,
            awaiting,
            self.until,
        )


def _spec(d: Mapping[str, Any]) -> OpSpec:
    check_template(d)
    return (d["f"], d.get("value"), d.get("key"))


def nemesis_schedule(
    interval: float,
    start: Mapping[str, Any] | None = None,
    stop: Mapping[str, Any] | None = None,
    *,
    jitter: float = 0.0,
    first: float | None = None,
    cycles: int | None = None,
) -> NemesisSchedule:
    """Alternating fault ``start`` / ``stop`` ops on the nemesis thread, each ``interval``
    seconds after the previous one completed (± ``jitter`` seconds, seeded), the first
    ``first`` seconds after the schedule starts (default: one interval, so a run begins
    healthy). ``cycles`` start/stop pairs,
    or forever. Defaults: ``{"f": "start"}`` and ``{"f": "stop"}``.

    Forever schedules are bounded from outside and followed by a heal, e.g.
    ``phases(time_limit(60, any_of(clients(w), nemesis_schedule(5))),
    nemesis(once({"f": "stop"})))``.
    """
    if interval <= 0:
        raise ValueError(f"nemesis_schedule needs interval > 0 seconds, not {interval}")
    if jitter < 0 or jitter > interval:
        raise ValueError(f"jitter must be within [0, interval], not {jitter}")
    if cycles is not None and cycles < 0:
        raise ValueError(f"cycles must be >= 0 or None, not {cycles}")
    ops = (_spec(start or {"f": "start"}), _spec(stop or {"f": "stop"}))
    return NemesisSchedule(
        to_ns(interval),
        ops,
        to_ns(jitter),
        None if first is None else to_ns(first),
        None if cycles is None else 2 * cycles,
    )
