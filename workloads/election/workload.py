"""The election workload: clients loop campaign -> write as leader with the epoch
-> resign (``workloads.cycles``) through ``workloads.election``'s client and a target's
backend; its runs are checked for election safety (``checkers.election``) and statistics.
"""

from __future__ import annotations

from checkers import election, stats
from workloads.common.lock_options import LockOptions
from workloads.cycles import election_cycle
from workloads.holders import LEADER
from workloads.workload import holding

WORKLOAD = holding(
    "election",
    "campaign, write as leader with the epoch, resign, in --locks elections",
    lambda opts, seed: election_cycle(opts.record(LockOptions).locks),
    (election.check_record, stats.check_record),
    options=("lease_ttl", "keepalive", "work_time", "fencing", "holder_check"),
    holder=LEADER,
)
