"""The registry workload (service registration): instances register themselves with the
service's mechanism and keep the registration alive, discovery clients list the live
ones (``workloads.discovery``, on the schedule of ``workloads.discovery.gen``); its runs
are checked for dead instances listed past their TTL plus the service's grace
(``checkers.discovery``) and statistics. Its default fault freezes an instance (a client
pause of the latest to register: the ``holder``)."""

from __future__ import annotations

from checkers import discovery, stats
from core.faults import CLIENT_PAUSE
from core.option_checks import OptionError
from core.options import RunOptions
from workloads.common.lock_options import LockOptions
from workloads.discovery.client import DiscoveryOptions
from workloads.discovery.gen import Discovery
from workloads.holders import INSTANCE
from workloads.workload import Workload


def _check(opts: RunOptions) -> None:
    """At least one discovery client besides the instances."""
    instances = opts.record(DiscoveryOptions).instances
    if instances >= opts.concurrency:
        raise OptionError(
            f"--instances {instances} leaves no discovery client among --concurrency "
            f"{opts.concurrency}: give --concurrency {instances + 2} or fewer instances"
        )


WORKLOAD = Workload(
    name="registry",
    help="instances register with a TTL and keep it alive, discovery clients list them",
    generator=lambda opts, seed: Discovery(opts.record(DiscoveryOptions).instances),
    needs_resource=False,
    holds=True,
    default_fault=CLIENT_PAUSE.name,
    checkers=(discovery.check_record, stats.check_record),
    options=("instances", "lease_ttl", "keepalive"),
    check=_check,
    holder=INSTANCE,
    records=(LockOptions, DiscoveryOptions),
    sections=("workloads.discovery.report:section",),
)
