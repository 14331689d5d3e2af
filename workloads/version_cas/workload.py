"""The version-cas workload: the lock workload's protected work with no lock. A client
reads a row and its version, works, and writes only if the version is unchanged
(``workloads.guarded``); a write on a stale version is refused by the data, and the client
begins again. Judged by ``checkers.guarded``: every version written at most once."""

from __future__ import annotations

from workloads.workload import lock_free

WORKLOAD = lock_free(
    "version-cas",
    "read a row with its version, work, write if the version is unchanged (no lock)",
    "cell",
)
