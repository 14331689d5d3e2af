"""From run options to what the runner drives: the client factory and the generator.

A workload is target-independent (``workloads.workload_registry``): its operations, whether it
needs the protected resource, and its checkers. The target supplies only the clients; the
run starts the protected resource and passes its address here. The schedule is: client
operations for ``time_limit + recovery_time`` (those of the workload's ``recovery``
generator in the recovery time, when it has one), and on the nemesis thread the fault schedule
for ``time_limit``, then the final heal, so clients keep running for ``recovery_time`` on a
healed cluster (as Jepsen does).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from clusters.spec import TargetSpec
from core import gen
from core.client import ClientFactory
from core.cluster import Cluster
from core.options import RunOptions
from nemesis.build import asked_durations
from nemesis.fault_registry import spec_of
from nemesis.targets import target_of
from workloads.overlap import FaultLength
from workloads.workload_registry import get_workload


@dataclass(frozen=True)
class Plan:
    """The clients and the schedule of one run."""

    client: ClientFactory
    client_gen: Any
    time_limit: float
    recovery_time: float
    seed: int
    recovery_gen: Any = None
    """The clients' operations during the recovery time (``Workload.recovery``); None:
    ``client_gen`` goes on."""

    def generator(self, nemesis_gen: Any, final_gen: Any, start: float = 0.0) -> gen.Generator:
        """The whole schedule; ``start`` is the run-clock time (s) the workload starts at.

        Deadlines are absolute: a limit that started counting at its first ``op()`` would
        restart whenever the runner re-asks after an event without acting on the answer.
        """
        end = start + self.time_limit + self.recovery_time
        work = _until(end, self.client_gen)
        if self.recovery_gen is not None:
            main = _until(start + self.time_limit, self.client_gen)
            work = gen.phases(main, _until(end, self.recovery_gen))
        clients = gen.clients(work)
        if nemesis_gen is None:
            return gen.seeded(self.seed, clients)
        faults = gen.nemesis(gen.phases(_until(start + self.time_limit, nemesis_gen), final_gen))
        return gen.seeded(self.seed, gen.any_of(clients, faults))


def _until(deadline_s: float, g: Any) -> Any:
    """``g`` until an absolute run-clock time."""
    return replace(gen.time_limit(0, g), deadline=gen.to_ns(deadline_s))


def build_plan(
    opts: RunOptions, target: TargetSpec, cluster: Cluster, seed: int, resource: str | None
) -> Plan:
    """The clients of the run's workload and their schedule; ``resource`` is the protected
    resource's address when the workload needs it (``Workload.needs_resource``)."""
    client = target.client_factory(opts, cluster, resource)
    workload = get_workload(opts.workload)
    generator = workload.client_generator(opts, seed)
    recovery = workload.recovery_generator(opts, seed)
    return Plan(client, generator, opts.time_limit, opts.recovery_time, seed, recovery)


def warnings_at_start(opts: RunOptions, target: TargetSpec) -> list[str]:
    """What the run's workload says its settings cannot produce under its faults
    (``Workload.warn``), one sentence each: printed under the start line and recorded in
    test.json (``warnings``); the run goes on, as asked."""
    nodes = len(opts.ssh.hosts) if opts.ssh.enabled else opts.backend.nodes or target.default_nodes
    asked = asked_durations(opts)
    faults = [
        FaultLength(
            name, spec_of(name).effects, asked[name], nodes == 1 or target_of(name, opts) == "all"
        )
        for name in opts.fault_names()
    ]
    return get_workload(opts.workload).warn(opts, faults)
