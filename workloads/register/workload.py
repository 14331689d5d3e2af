"""The CAS-register workload: read, write and compare-and-set on independent keys
with unique written values (``workloads.register.gen``) through ``workloads.register``'s client
and a target's backend; its runs are checked for linearizability per key, against a
register that starts empty (nil) and where a failed CAS did not happen, and statistics.
"""

from __future__ import annotations

from checkers import linearizability, stats
from workloads.register.client import RegisterOptions
from workloads.register.gen import CasRegisterGen
from workloads.workload import Variant, Workload

WORKLOAD = Workload(
    name="cas-register",
    help="read, write and compare-and-set on --keys independent registers",
    generator=lambda opts, seed: CasRegisterGen(keys=opts.record(RegisterOptions).keys, seed=seed),
    needs_resource=False,
    holds=False,
    default_fault="none",
    checkers=(linearizability.check_record, stats.check_record),
    options=("keys", "read_mode"),
    model="register",
    variant=Variant("read_mode", "read mode"),
    records=(RegisterOptions,),
)
