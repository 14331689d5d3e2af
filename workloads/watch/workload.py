"""The watch workload: writers change ``--keys`` keys with unique values while
``--watchers`` clients follow them with the target's own mechanism
(``workloads.watch.gen``, ``workloads.watch``'s client and a target's backend); its runs
are checked for delivery (``checkers.watch_delivery``: every change once and in order
where the mechanism promises it, missed changes counted where it does not, the final
values) and notification latency (``checkers.watch_latency``).
"""

from __future__ import annotations

from checkers import stats, watch_delivery, watch_latency
from core.option_checks import OptionError
from core.options import RunOptions
from workloads.holders import WRITER
from workloads.register import RegisterOptions
from workloads.watch.client import WatchOptions
from workloads.watch.gen import WatchGen
from workloads.workload import Workload


def _check(opts: RunOptions) -> None:
    """At least one writer besides the watchers."""
    watchers = opts.record(WatchOptions).watchers
    if watchers >= opts.concurrency:
        raise OptionError(
            f"--watchers {watchers} leaves no writer among --concurrency "
            f"{opts.concurrency} clients: raise --concurrency to {watchers + 1} or more"
        )


WORKLOAD = Workload(
    name="watch",
    help="--watchers clients follow --keys keys that the other clients write",
    generator=lambda opts, seed: WatchGen(
        keys=opts.record(RegisterOptions).keys,
        watchers=opts.record(WatchOptions).watchers,
        compact_every=opts.record(WatchOptions).compact_every,
        seed=seed,
    ),
    recovery=lambda opts, seed: WatchGen(
        keys=opts.record(RegisterOptions).keys,
        watchers=opts.record(WatchOptions).watchers,
        writes=False,
    ),
    needs_resource=False,
    holds=False,
    default_fault="none",
    checkers=(watch_delivery.check_record, watch_latency.check_record, stats.check_record),
    options=("keys", "watchers", "watch_mode", "compact_every"),
    check=_check,
    holder=WRITER,
    records=(WatchOptions, RegisterOptions),
    sections=("workloads.watch.report:section",),
)
