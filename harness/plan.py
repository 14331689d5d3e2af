"""From run options to what the runner drives: the client factory and the generator.

A workload is target-independent: its operations (``cycles``, ``cas_gen``), whether it
needs the protected resource, and its checkers (``workloads.checks``). The target supplies
only the clients. The schedule is: client operations for ``time_limit + recovery_time``,
and on the nemesis thread the fault schedule for ``time_limit``, then the final heal, so
clients keep running for ``recovery_time`` on a healed cluster (as Jepsen does).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from clusters.spec import TargetSpec
from core import gen
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster
from core.options import RunOptions
from core.store import RESOURCE_FILE
from workloads.cas_gen import CasRegisterGen
from workloads.cycles import election_cycle, lock_cycle
from workloads.resource import ResourceServer

RESOURCE_WORKLOADS = frozenset({"lock", "election"})


@dataclass(frozen=True)
class Plan:
    """The clients and the schedule of one run."""

    client: ClientFactory
    client_gen: Any
    time_limit: float
    recovery_time: float
    seed: int

    def generator(self, nemesis_gen: Any, final_gen: Any, start: float = 0.0) -> gen.Generator:
        """The whole schedule; ``start`` is the run-clock time (s) the workload starts at.

        Deadlines are absolute: a limit that started counting at its first ``op()`` would
        restart whenever the runner re-asks after an event without acting on the answer.
        """
        clients = gen.clients(_until(start + self.time_limit + self.recovery_time, self.client_gen))
        if nemesis_gen is None:
            return gen.seeded(self.seed, clients)
        faults = gen.nemesis(gen.phases(_until(start + self.time_limit, nemesis_gen), final_gen))
        return gen.seeded(self.seed, gen.any_of(clients, faults))


def _until(deadline_s: float, g: Any) -> Any:
    """``g`` until an absolute run-clock time."""
    return replace(gen.time_limit(0, g), deadline=gen.to_ns(deadline_s))


def client_generator(opts: RunOptions, seed: int) -> Any:
    if opts.workload == "lock":
        g: Any = lock_cycle(opts.locks)
    elif opts.workload == "election":
        g = election_cycle(opts.locks)
    else:
        g = CasRegisterGen(keys=opts.keys, seed=seed)
    if opts.rate:
        g = gen.rate(opts.rate, g)
    return g


def build_plan(
    opts: RunOptions,
    target: TargetSpec,
    cluster: Cluster,
    clock: RunClock,
    run_dir: Path,
    seed: int,
    stack: ExitStack,
) -> Plan:
    """Start the protected resource when the workload needs it (stopped by ``stack``)
    and build the clients and their schedule."""
    resource: str | None = None
    if opts.workload in RESOURCE_WORKLOADS:
        server = ResourceServer(run_dir / RESOURCE_FILE, clock, fencing=opts.fencing)
        stack.enter_context(server)
        resource = server.address
    client = target.client_factory(opts, cluster, resource)
    return Plan(client, client_generator(opts, seed), opts.time_limit, opts.recovery_time, seed)
