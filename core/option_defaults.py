"""The defaults that adapt to the options the user gave (``RunOptions.given``), so that a
default never refuses a run: a refusal is only ever about a value the user wrote.

Each default is kept when it fits the options given; otherwise it becomes the value that
keeps the classic scenario's proportions (``core.options``: a 35 s run, faults every 10 s)
and ``RunOptions.adapted`` says what changed and why. When no value fits, the one-line
OptionError names the options the user wrote. The faults' own defaults adapt by their
rules (``FaultRules.adapts``: the client pause's time), first; then the workloads'
records' by their own ``fit`` (the keepalive to a shorter lease:
``workloads.common.lock_options``).
"""

from __future__ import annotations

import math
from typing import Final

from core.option_checks import OptionError
from core.option_records import FaultOptions
from core.options import HANDED, FaultRules, RunOptions, metadata_of

CLASSIC_TIME_LIMIT: Final = RunOptions().time_limit
CLASSIC_INTERVAL: Final = FaultOptions().nemesis_interval


def fit_defaults(opts: RunOptions, rules: FaultRules, shaping: tuple[str, ...]) -> RunOptions:
    """``opts`` with every default the user did not write fitted to those they did: the
    faults' own (``rules.adapts``), the workloads' records' own (their ``fit``), the
    interval between faults to the time limit (or the time limit to the interval given),
    and the clients of a role to ``--concurrency`` (the options of the workload,
    ``shaping``, whose record says they take some of the clients: ``shares``)."""
    for adapt in rules.adapts:
        opts = adapt(opts)
    for kind in HANDED:
        fit = getattr(kind, "fit", None)
        if fit is not None:
            opts = fit(opts.record(kind), opts)
    opts = _fit_interval(opts, len(rules.periodic))
    for name in shaping:
        other = metadata_of(name).get("shares")
        if other is not None:
            opts = _fit_share(opts, name, other)
    return opts


def round_down(x: float, step: float = 0.001) -> float:
    """``x`` rounded down to ``step``: a fitted value never overshoots what it must fit."""
    return round(math.floor(x / step + 1e-9) * step, 3)


def round_up(x: float, step: float = 0.001) -> float:
    """``x`` rounded up to ``step``."""
    return round(math.ceil(x / step - 1e-9) * step, 3)


def _fit_interval(opts: RunOptions, periodic: int) -> RunOptions:
    """The faults taking turns start and stop inside the time limit: an interval not
    given keeps its classic share of the time limit; a time limit not given keeps its
    classic multiple of the interval given. With both given, ``RunOptions.validate``
    refuses what does not fit."""
    if not periodic or _interval_fits(opts, periodic):
        return opts
    interval, limit = opts.faults.nemesis_interval, opts.time_limit
    room = "leaves no room to start and stop each fault"
    if not opts.was_given("nemesis_interval"):
        name, value = "nemesis_interval", round_down(CLASSIC_INTERVAL * limit / CLASSIC_TIME_LIMIT)
        why = f"the default {interval:g} s {room} inside time_limit {limit:g} s; " + (
            f"{CLASSIC_INTERVAL:g}/{CLASSIC_TIME_LIMIT:g} of it"
        )
    elif not opts.was_given("time_limit"):
        name, value = "time_limit", round_up(CLASSIC_TIME_LIMIT * interval / CLASSIC_INTERVAL)
        why = f"the default {limit:g} s {room} every nemesis_interval {interval:g} s; " + (
            f"{CLASSIC_TIME_LIMIT / CLASSIC_INTERVAL:g} times it"
        )
    else:
        return opts
    return opts.adapt(
        f"{name} {value:g} s (not given): {why}, as in the classic scenario", **{name: value}
    )


def _interval_fits(opts: RunOptions, periodic: int) -> bool:
    """Whether the last of ``periodic`` faults taking turns stops inside the time limit
    (the rule ``RunOptions.validate`` enforces)."""
    k = (2 * periodic - 1) / periodic
    return opts.first_fault_at() + opts.faults.nemesis_interval * k <= opts.time_limit


def _fit_share(opts: RunOptions, name: str, other: str) -> RunOptions:
    """Clients of a role (the option ``name``) not given leave at least one client of the
    ``other`` role among ``--concurrency``; none can when it is 1, which names
    ``--concurrency``."""
    default = RunOptions().get(name)
    share, concurrency = opts.get(name), opts.concurrency
    if share < concurrency or opts.was_given(name):
        return opts  # fits, or given: the workload's check refuses what does not fit
    if concurrency < 2:
        raise OptionError(
            f"--concurrency {concurrency} leaves no {other} beside the {name}: the "
            f"{opts.workload} workload needs --concurrency 2 or more"
        )
    fitted = concurrency - 1
    return opts.adapt(
        f"{name} {fitted} (not given): the default {default} leaves no {other} among "
        f"concurrency {concurrency}; all clients but one",
        **{name: fitted},
    )
