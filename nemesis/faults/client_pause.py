"""The client pause: a client's worker process frozen (SIGSTOP), like a GC pause; at
``--pause-at`` for ``--pause-for`` seconds, else taking turns with the other faults."""

from __future__ import annotations

from checkers.windows import CLIENT_PAUSE, FREEZES_CLIENT, WORDS
from core.cluster import Cluster
from core.option_checks import OptionError
from core.options import RunOptions
from nemesis.base import Nemesis
from nemesis.client_pause import ClientPause
from nemesis.spec import Aim, FaultSpec


def _build(cluster: Cluster, target: str, seed: int, opts: RunOptions) -> Nemesis:
    # Frozen into the critical section's work, not at its start (``ClientPause``).
    return ClientPause(seed, settle=opts.lock.work_time / 2)


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


FAULT = FaultSpec(
    name=CLIENT_PAUSE,
    help="freeze a client process (SIGSTOP, like a GC pause), at --pause-at for --pause-for",
    build=_build,
    describe=WORDS[CLIENT_PAUSE],
    effects=frozenset({FREEZES_CLIENT}),
    aim=Aim(("holder", "all"), "holder"),
    options=("pause_at", "pause_for"),
    timing=_timing,
    freezes=_freezes,
    check=_check,
)
