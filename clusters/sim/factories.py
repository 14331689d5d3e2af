"""Picklable client factories for the sim target: the runner sends one to each worker.

- ``SimLockClientFactory``: the lock workload (``workloads.lock``);
- ``SimRegisterClientFactory``: CAS registers (``workloads.register``);
- ``SimElectionClientFactory``: leader election (``workloads.election``);
- ``SimGuardedClientFactory``: the lock-free workloads (``workloads.guarded``) on its
  CAS registers.
- ``SimWatchClientFactory``: the watch workload (``workloads.watch``).

Defaults reproduce the domain notes' timeline: lease TTL 10 s, keepalive every 3 s.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from clusters.sim.client import Rejected, SimClient
from core.client import WorkerContext
from workloads.common.resource import ResourceClient
from workloads.election import ElectionClient
from workloads.guarded import GuardedClient
from workloads.guarded_register import RegisterKeys, RegisterVersions
from workloads.lock import LockClient
from workloads.register import RegisterClient
from workloads.watch import WatchClient

NODE = "sim"


@dataclass(frozen=True, slots=True)
class SimLockClientFactory:
    """Lock clients on the sim service at ``sim`` writing to the resource at ``resource``.

    ``ttl``: lease TTL (s); ``keepalive``: renewal interval (s); ``work``: time spent in
    the critical section before each write (s); ``wait``: how long ``acquire`` blocks
    before "not granted" (s); ``timeout``: per-request answer timeout (s); ``check``:
    whether a holder checks its lease before writing (``--holder-check``).
    """

    sim: str
    resource: str
    name: str = "lock"
    ttl: float = 10.0
    keepalive: float = 3.0
    work: float = 1.0
    wait: float = 30.0
    timeout: float = 5.0
    check: bool = True

    def __call__(self, ctx: WorkerContext) -> LockClient:
        return LockClient(
            ctx,
            partial(SimClient, self.sim, self.timeout),
            ResourceClient(self.resource, self.timeout),
            self.name,
            self.ttl,
            self.keepalive,
            self.work,
            self.wait,
            NODE,
            self.check,
        )


@dataclass(frozen=True, slots=True)
class SimElectionClientFactory:
    """Election clients on the sim service; the leader writes to resource ``name`` with
    its epoch as token. Fields as in ``SimLockClientFactory``."""

    sim: str
    resource: str
    name: str = "leader"
    ttl: float = 10.0
    keepalive: float = 3.0
    work: float = 1.0
    wait: float = 30.0
    timeout: float = 5.0
    check: bool = True

    def __call__(self, ctx: WorkerContext) -> ElectionClient:
        return ElectionClient(
            ctx,
            partial(SimClient, self.sim, self.timeout),
            ResourceClient(self.resource, self.timeout),
            self.name,
            self.ttl,
            self.keepalive,
            self.work,
            self.wait,
            NODE,
            self.check,
        )


@dataclass(frozen=True, slots=True)
class SimRegisterClientFactory:
    """CAS-register clients on the sim service at ``sim``."""

    sim: str
    timeout: float = 5.0

    def __call__(self, ctx: WorkerContext) -> RegisterClient:
        return RegisterClient(ctx, partial(SimClient, self.sim, self.timeout), NODE)


@dataclass(frozen=True, slots=True)
class SimGuardedClientFactory:
    """Lock-free clients on the sim service at ``sim``: version-cas (``keys`` False) or
    unique-key (``keys`` True), working ``work`` s before each write."""

    sim: str
    work: float
    keys: bool
    timeout: float = 5.0

    def __call__(self, ctx: WorkerContext) -> GuardedClient:
        store = RegisterKeys if self.keys else RegisterVersions
        return GuardedClient(
            ctx, lambda: store(SimClient(self.sim, self.timeout), Rejected), self.work
        )


@dataclass(frozen=True, slots=True)
class SimWatchClientFactory:
    """Watch workload clients (``workloads.watch``) on the sim service at ``sim``,
    following ``keys`` keys."""

    sim: str
    keys: int
    timeout: float = 5.0

    def __call__(self, ctx: WorkerContext) -> WatchClient:
        from clusters.sim.watch import SimWatch

        return WatchClient(ctx, partial(SimWatch, self.sim, self.timeout), self.keys, NODE)
