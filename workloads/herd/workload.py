"""The herd workload: ``--concurrency`` waiters contend for one lock, waiting by
``--recipe`` (naive: all watch the lock; queue: each watches its predecessor), through
``workloads.herd.client`` and a target's ``HerdBackend``.

Each holder works and writes to the protected resource with its token, as the lock
workload's do, so its runs are checked for mutual exclusion (``checkers.mutex``), fencing
(``checkers.fencing``), mutex linearizability where the target claims it, and statistics;
``checkers.herd`` measures what each handoff cost: notifications, failed attempts,
requests and latency.
"""

from __future__ import annotations

from operator import attrgetter

from checkers import fencing, herd, mutex, mutex_lin, stats
from workloads.herd.client import HerdOptions
from workloads.lock.ops import LOCK_HOLDER, LOCK_OPTIONS, lock_cycle
from workloads.workload import Variant, When, holding

WORKLOAD = holding(
    "herd",
    "--concurrency waiters on one lock, waiting by --recipe; notifications per handoff",
    lambda opts, seed: lock_cycle(1),
    (
        mutex.check_record,
        fencing.check_record,
        When(attrgetter("linearizable_locks"), mutex_lin.check_record),
        herd.check_record,
        stats.check_record,
    ),
    options=("recipe", "concurrency", *LOCK_OPTIONS),
    holder=LOCK_HOLDER,
    variant=Variant("recipe", "recipe"),
    records=(HerdOptions,),
    sections=("workloads.herd.report:section",),
    across="workloads.herd.report:ACROSS",
)
