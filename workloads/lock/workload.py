"""The lock workload: clients loop acquire -> write with the token -> release
(``workloads.lock.ops``) through ``workloads.lock``'s clients and a target's backend.

Its runs are checked for mutual exclusion with the cause of every overlap and stale write
(``checkers.mutex``), fencing-number monotonicity and enforcement (``checkers.fencing``),
lease-aware owner-aware mutex linearizability when the run recorded that the target's
locks claim it (``checkers.mutex_lin``), and statistics (``checkers.stats``).
"""

from __future__ import annotations

from operator import attrgetter

from checkers import fencing, mutex, mutex_lin, stats
from workloads.common.lock_options import LockOptions
from workloads.lock.ops import LOCK_HOLDER, LOCK_OPTIONS, lock_cycle
from workloads.workload import Variant, When, holding

WORKLOAD = holding(
    "lock",
    "acquire, write with the token, release, on --locks locks",
    lambda opts, seed: lock_cycle(opts.record(LockOptions).locks),
    (
        mutex.check_record,
        fencing.check_record,
        When(attrgetter("linearizable_locks"), mutex_lin.check_record),
        stats.check_record,
    ),
    options=(*LOCK_OPTIONS, "locks"),
    holder=LOCK_HOLDER,
    model="mutex",
    variant=Variant("lock", "lock implementation", own="workloads.libraries.resolve:OWN_LOCKS"),
)
