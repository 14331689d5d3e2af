"""The unique-key workload: the lock workload's protected work with no lock. A client takes
the next job not yet done, works, and records its effect under the job's idempotency key,
which a UNIQUE constraint lets in once (``workloads.guarded``); a repeated effect is
refused by the data. Judged by ``checkers.guarded``: every key's effect accepted once."""

from __future__ import annotations

from workloads.workload import lock_free

WORKLOAD = lock_free(
    "unique-key",
    "take the next job, work, insert its effect under a UNIQUE idempotency key (no lock)",
    "jobs",
)
