"""The ``sim`` target's clients: the built-in service, no Docker needed.

One client builder per workload (``clusters/sim/spec.py`` maps the workloads to them),
each the shared one every target uses (``workloads.common.factories`` and the workloads'
own) over a connection to the sim: the sim has no client factories of its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clusters.sim.client import Rejected, SimClient
from clusters.sim.discovery import SimRegistry
from clusters.sim.herd import SimHerd
from clusters.sim.watch import SimWatch
from workloads.common.factories import holder_clients, register_clients
from workloads.discovery import registry_clients
from workloads.election import ElectionClient
from workloads.guarded import guarded_clients
from workloads.guarded_register import RegisterKeys, RegisterVersions
from workloads.herd import herd_clients
from workloads.ids import CasCounter
from workloads.ids.factories import id_clients, snowflake_clients
from workloads.lock import LockClient
from workloads.watch.factory import watch_clients


def sim_client(addresses: Sequence[str], *, timeout: float, **_: Any) -> SimClient:
    """A connection to the sim service, as the shared factories open a driver's
    (``workloads.common.factories.Connector``): its one address; the run's key prefix and
    read mode are not the sim's (one server, its own keys per run, every read linearizable)."""
    return SimClient(addresses[0], timeout)


def sim_versions(addresses: Sequence[str], *, timeout: float, **_: Any) -> RegisterVersions:
    """version-cas on the sim's CAS registers (``workloads.guarded_register``)."""
    return RegisterVersions(sim_client(addresses, timeout=timeout), Rejected)


def sim_keys(addresses: Sequence[str], *, timeout: float, **_: Any) -> RegisterKeys:
    """unique-key on the sim's CAS registers (``workloads.guarded_register``)."""
    return RegisterKeys(sim_client(addresses, timeout=timeout), Rejected)


def sim_watch(addresses: Sequence[str], *, timeout: float, **_: Any) -> SimWatch:
    """The sim's watch primitive (``kv_*``) on its one address."""
    return SimWatch(addresses[0], timeout)


def sim_counter(addresses: Sequence[str], *, timeout: float, prefix: str) -> CasCounter:
    """The sim service's counter: a register's compare-and-set loop (``CasCounter``)."""
    return CasCounter(SimClient(addresses[0], timeout), key=f"{prefix}/ids")


LOCK = holder_clients(LockClient, sim_client)
ELECTION = holder_clients(ElectionClient, sim_client, name="leader")
CAS_REGISTER = register_clients(sim_client, definite_reads=False)
VERSION_CAS = guarded_clients(sim_versions)
UNIQUE_KEY = guarded_clients(sim_keys)
WATCH = watch_clients(sim_watch)
REGISTRY = registry_clients(SimRegistry)
COUNTER_IDS = id_clients(sim_counter)
SNOWFLAKE_IDS = snowflake_clients(sim_counter)
HERD = herd_clients(SimHerd)
