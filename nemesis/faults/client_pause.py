"""The client pause: a client's worker process frozen (SIGSTOP), like a GC pause; at
``--pause-at`` for ``--pause-for`` seconds, else taking turns with the other faults.

The classic scenario pauses the lock holder at 12 s for 14 s of a 35 s run, with a lease
TTL of 10 s: the pause outlasts the lease, another client takes the lock, and the paused
one writes late. Where the user did not give the pause, it keeps that shape in the run
they asked for (``_adapt``).
"""

from __future__ import annotations

import math
from typing import Final

from checkers.windows import FREEZES_CLIENT, WORDS
from core.cluster import Cluster
from core.faults import CLIENT_PAUSE
from core.option_checks import OptionError
from core.option_defaults import CLASSIC_TIME_LIMIT, round_down
from core.option_records import FaultOptions
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.client_pause import ClientPause
from nemesis.spec import Aim, FaultSpec
from workloads.common.lock_options import LockOptions


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    # Frozen into the critical section's work, not at its start (``ClientPause``).
    return ClientPause(seed, settle=opts.record(LockOptions).work_time / 2)


def _timing(opts: RunOptions) -> tuple[float, float] | None:
    """At ``--pause-at`` for ``--pause-for``; without ``--pause-at``, taking turns."""
    return None if opts.faults.pause_at is None else (opts.faults.pause_at, opts.faults.pause_for)


def _freezes(opts: RunOptions) -> tuple[float, str]:
    """The holder frozen mid-work: for ``--pause-for``, or an interval when taking turns."""
    pause = (
        opts.faults.pause_for if opts.faults.pause_at is not None else opts.faults.nemesis_interval
    )
    return pause, f"client pause {pause:g} s"


def _check(opts: RunOptions) -> None:
    """A pause at ``--pause-at`` must end inside the time limit."""
    if opts.faults.pause_at is None:
        return
    end = opts.faults.pause_at + opts.faults.pause_for
    if end > opts.time_limit:
        raise OptionError(
            f"the client pause (--pause-at {opts.faults.pause_at:g} + --pause-for "
            f"{opts.faults.pause_for:g} = {end:g} s) does not end inside --time-limit "
            f"{opts.time_limit:g}: raise --time-limit to {end:g} or pause earlier"
        )


CLASSIC_AT: Final = FaultOptions().pause_at or 12.0
CLASSIC_FOR: Final = FaultOptions().pause_for
OUTLAST: Final = CLASSIC_FOR / LockOptions().lease_ttl
"""How much longer than the lease TTL the classic pause is (14 s of 10 s): the time in
which the lease expires and another client takes the lock."""
SHARE: Final = CLASSIC_FOR / CLASSIC_TIME_LIMIT
"""The classic pause's share of its run (14 s of 35)."""
BEFORE: Final = CLASSIC_AT / (CLASSIC_TIME_LIMIT - CLASSIC_FOR)
"""The share of the time outside the classic pause that comes before it (12 s of 21)."""
CLASSIC_END: Final = (CLASSIC_AT + CLASSIC_FOR) / CLASSIC_TIME_LIMIT
"""Where the classic pause ends in its run (26 s of 35)."""
AROUND: Final = 2.0
"""The least seconds outside a fitted pause: a holder to freeze before it, its late write
after it."""


def _adapt(opts: RunOptions) -> RunOptions:
    """The pause's time fitted to the options given, in the classic scenario's shape: a
    length not given outlasts the lease TTL as the classic one does; a pause that then
    ends after the time limit makes a time limit not given longer, else (a pause not
    given) takes its classic share of the time limit, no less than that outlasting, and
    starts at the classic share of the time outside it. One line naming what the user
    wrote when nothing fits."""
    at = opts.faults.pause_at
    if at is None:  # taking turns: --nemesis-interval times it
        return opts
    opts = _outlast(opts)
    length = opts.faults.pause_for
    if at + length <= opts.time_limit:
        return opts
    if not opts.was_given("time_limit"):
        longer = float(math.ceil((at + length) / CLASSIC_END))
        return opts.adapt(
            f"time_limit {longer:g} s (not given): the client pause at {at:g} s for "
            f"{length:g} s ends at {CLASSIC_END * 100:.0f} % of the run, as the classic one does",
            time_limit=longer,
        )
    if opts.was_given("pause_at") and opts.was_given("pause_for"):
        return opts  # all three given: ``_check`` refuses, naming them
    if opts.was_given("pause_at"):
        raise OptionError(
            f"the client pause at --pause-at {at:g} for {length:g} s ends at {at + length:g} "
            f"s, after --time-limit {opts.time_limit:g}: raise --time-limit to "
            f"{at + length:g} or pause earlier"
        )
    return _fit_in(opts)


def _outlast(opts: RunOptions) -> RunOptions:
    """A pause length not given outlasts a longer lease TTL as the classic one does."""
    ttl = opts.record(LockOptions).lease_ttl
    least = round(OUTLAST * ttl, 3)
    if opts.was_given("pause_for") or opts.faults.pause_for >= least:
        return opts
    return opts.adapt(
        f"pause_for {least:g} s (not given): {OUTLAST:g} times lease_ttl "
        f"{ttl:g} s, so that the pause outlasts the lease as the classic "
        f"{CLASSIC_FOR:g} s pause outlasts {LockOptions().lease_ttl:g} s",
        pause_for=least,
    )


def _fit_in(opts: RunOptions) -> RunOptions:
    """A pause not given (its start, and its length when not given either) inside the
    time limit given, or one line naming the options given when it cannot fit."""
    limit, ttl = opts.time_limit, opts.record(LockOptions).lease_ttl
    length = opts.faults.pause_for
    least = length if opts.was_given("pause_for") else round(OUTLAST * ttl, 3)
    if not opts.was_given("pause_for"):
        length = max(least, min(length, round_down(limit * SHARE, 0.1)))
    length = min(length, limit - AROUND)
    if length < least:
        pause = (
            f"--pause-for {least:g}"
            if opts.was_given("pause_for")
            else f"a client pause longer than the lease TTL ({ttl:g} s)"
        )
        shorter = " or give a shorter --lease-ttl" if opts.was_given("lease_ttl") else ""
        raise OptionError(
            f"--time-limit {limit:g} is too short for {pause}: raise --time-limit to at "
            f"least {least + AROUND:g}{shorter}"
        )
    if length != opts.faults.pause_for:
        opts = opts.adapt(
            f"pause_for {length:g} s (not given): the classic {CLASSIC_FOR:g} s does not fit "
            f"time_limit {limit:g} s; {SHARE:g} of it, as in the classic run, and still "
            f"longer than lease_ttl {ttl:g} s",
            pause_for=length,
        )
    start = round_down((limit - length) * BEFORE, 0.1)
    return opts.adapt(
        f"pause_at {start:g} s (not given): the classic start at {opts.faults.pause_at:g} s "
        f"would not end the pause inside time_limit {limit:g} s; it starts "
        f"{CLASSIC_AT:g}/{CLASSIC_TIME_LIMIT - CLASSIC_FOR:g} of the way through the "
        f"{limit - length:g} s outside it, as the classic one does",
        pause_at=start,
    )


FAULT = FaultSpec(
    kind=CLIENT_PAUSE,
    help="freeze a client process (SIGSTOP, like a GC pause), at --pause-at for --pause-for",
    build=_build,
    describe=WORDS[CLIENT_PAUSE.name],
    effects=frozenset({FREEZES_CLIENT}),
    aim=Aim(("holder", "all"), "holder"),
    options=("pause_at", "pause_for"),
    timing=_timing,
    freezes=_freezes,
    check=_check,
    adapt=_adapt,
)
