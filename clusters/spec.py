"""``TargetSpec``: everything about one target, one value; ``clusters.registry`` lists them.

A target's spec says what it is (name, description, default size, image, versions), how a
run gets its cluster (in Docker, as a local process, or on SSH hosts), the clients of each
workload and lock implementation, what it accepts (read modes, persistence, lease TTLs),
what faults may do to its cluster (``abilities``, ``core.abilities``) and whether its
locks claim linearizability (recorded in test.json, read by the checkers). Each
``clusters/<target>/spec.py`` writes one; nothing else names a target.

Everything heavy is lazy: clusters and clients are ``module:attribute`` references
imported when a run uses them, so importing the registry (and listing targets) needs
neither the Docker SDK nor paramiko, and ``sim`` runs without Docker.
"""

from __future__ import annotations

import importlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from checkers.windows import POWER_LOSS
from clusters.server import ClusterOptions
from core.abilities import SERVER_ABILITIES, Ability
from core.client import ClientFactory
from core.clock import RunClock
from core.cluster import Cluster, ClusterError
from core.option_checks import OptionError, nearest
from core.options import RunOptions

ClientBuilder = Callable[[RunOptions, Cluster, "str | None"], ClientFactory]
"""(options, cluster, resource address or None) -> a picklable client factory."""

CLIENT_CLOCK: Final = (
    "; to move the clients' clocks instead (which ids made in the client, like "
    "snowflake's, read), use --nemesis client-clock"
)
"""Said where a server's clock cannot move: the fault that moves the clients' clocks."""
GO_CLOCK = (
    "{target} is a Go program that reads the clock without libc, so libfaketime cannot move "
    "its clock inside a container; clock faults on {target} need real hosts (--ssh)" + CLIENT_CLOCK
)
NO_GO_CLOCK: Final = {Ability.CLOCK: GO_CLOCK}
"""What a Go server lacks in a container, and why."""


@dataclass(frozen=True, slots=True)
class Lazy:
    """A ``module:attribute`` reference, imported when first used."""

    path: str

    def load(self) -> Any:
        module, _, attr = self.path.partition(":")
        return getattr(importlib.import_module(module), attr)


LocalFactory = Callable[[RunOptions, RunClock], Cluster]


@dataclass(frozen=True, slots=True)
class Bug:
    """A bug ``--sim-bug`` injects into a target's service: what it does, the workloads
    whose operations meet it (empty: every one), and the fault it needs to show (None:
    none). A run that cannot meet it is refused: the bug would do nothing."""

    description: str
    workloads: tuple[str, ...] = ()
    fault: str | None = None


@dataclass(frozen=True, slots=True)
class LeaseTtl:
    """The lease TTLs (``--lease-ttl``) a target's service grants as asked: from ``low``
    to ``high`` seconds, in whole seconds when ``whole``."""

    low: float
    high: float | None = None
    whole: bool = False


def _lock_workload() -> str:
    """The name of the lock workload, the one a target backs with its ``locks`` (imported
    when asked: the registry of targets is listed without the workloads' checkers)."""
    from workloads.lock_workload import WORKLOAD

    return WORKLOAD.name


def _ids_workload() -> str:
    """The name of the unique-ids workload, the one a target backs with its
    ``id_generators`` (imported when asked, as ``_lock_workload``)."""
    from workloads.unique_ids_workload import WORKLOAD

    return WORKLOAD.name


@dataclass(frozen=True, slots=True)
class ServiceRule:
    """A rule of the service that a verdict on it depends on, said beside the verdict
    and recorded in test.json (``service_rules``): a setting the harness's clients change
    from the service's default (``default`` is the service's own), or a documented rule
    the checkers measure by. ``source`` is where the service documents it.

    ``when``: the runs it is about, as flat option names and the values they may have
    (``{"read_mode": ("sync",)}``); empty: every run on the target. ``explains``: the
    kind of anomaly (``checkers.anomalies``) the rule allows, which the checkers then
    name as its cause, with the run's evidence (``checkers.classify.classify_read``).
    ``expiry_ttls``: for a rule of when the service ends a lease its holder stopped
    renewing, the latest end it documents, in TTLs after the last renewal (Consul: 2); the
    checkers measure a handover by it (``checkers.expiry``)."""

    setting: str
    value: str
    default: str | None
    why: str
    source: str
    when: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    explains: str | None = None
    expiry_ttls: float | None = None
    lost_within_s: float | None = None
    """For a rule of what a power cut may take: the longest a write acknowledged before the
    cut may be lost, in seconds (0: the setting promises none is; ``checkers.durability``)."""

    def applies(self, opts: RunOptions) -> bool:
        """Whether the rule is about a run with these options."""
        return all(opts.get(name) in values for name, values in self.when.items())

    def line(self, target: str) -> str:
        """``consul: session lock-delay 0 s (Consul's default 15 s): ...``."""
        was = f" ({target}'s default: {self.default})" if self.default is not None else ""
        return f"{target}: {self.setting} {self.value}{was}: {self.why} [{self.source}]"

    def to_dict(self) -> dict[str, Any]:
        return {
            "setting": self.setting,
            "value": self.value,
            "default": self.default,
            "why": self.why,
            "source": self.source,
            "explains": self.explains,
            "expiry_ttls": self.expiry_ttls,
            "lost_within_s": self.lost_within_s,
        }


@dataclass(frozen=True)
class TargetSpec:
    """One target. ``workloads`` and ``locks`` map names to ``module:attribute`` of a
    ``ClientBuilder``; the lock workload is offered when ``locks`` is not empty."""

    name: str
    description: str
    default_nodes: int
    workloads: Mapping[str, str] = field(default_factory=dict)
    locks: Mapping[str, str] = field(default_factory=dict)
    default_lock: str | None = None
    refuses: Mapping[str, str] = field(default_factory=dict)
    """Workloads it does not offer -> why (said when one is asked for)."""
    id_generators: Mapping[str, str] = field(default_factory=dict)
    """Its id generators (``--id-generator``, the first is its default) -> ``module:attribute``
    of a ``ClientBuilder``; the unique-ids workload is offered when it is not empty."""
    server: str | None = None
    """``module:NAME`` of its ``ServerSpec`` (its ``server.py``): how to run its server,
    which the Docker backend runs in containers and the SSH backend on hosts."""
    local: LocalFactory | None = None
    """How to build its cluster as a local process (the sim), when it has no server."""
    image: str | None = None
    """The image definition it runs (``clusters/<image>/``); None for a target without one."""
    persistence: tuple[str, ...] = ()
    """Accepted ``persistence`` values; empty when the target has no such option."""
    read_modes: tuple[str, ...] = ()
    """``--read-mode`` values of its cas-register (the first is its default)."""
    lease_ttl: LeaseTtl | None = None
    """The lease TTLs its service grants as asked; None: any."""
    linearizable_locks: bool = False
    """Whether its locks claim linearizability (the mutex-linearizability check)."""
    service_log: str | None = None
    """Where its service's own event log (lease expiries, lock grants) lands, relative
    to the run directory; None: its service keeps none the checkers read."""
    deb_suites: Mapping[str, str] = field(default_factory=dict)
    """Packages current Debian releases lack -> the older suite to take them from (SSH)."""
    bugs: Mapping[str, Bug] = field(default_factory=dict)
    """Bugs ``--sim-bug`` can inject into it, by name."""
    unfenced_locks: tuple[str, ...] = ()
    """Its lock implementations that hand out no fencing token: ``--fencing on`` fences
    nothing with them (said as a warning; the unfenced outcome is what they show)."""
    version: str | None = None
    """Its fixed version; None: asked of the running cluster (``version()``)."""
    abilities: frozenset[Ability] = SERVER_ABILITIES
    """What faults may do to its cluster in Docker (``core.abilities``; on SSH hosts every
    target can move a clock: ``clusters.run_target``)."""
    lacks: Mapping[Ability, str] = field(default_factory=dict)
    """Why it lacks an ability, said when a fault needing it is refused (a line with
    ``{target}``, ``{fault}`` and ``{real}``, the targets with a real cluster)."""
    rules: tuple[ServiceRule, ...] = ()
    """Settings its clients change from the service's defaults and documented rules the
    verdict depends on, said with every run they are about (``ServiceRule``)."""

    @property
    def workload_names(self) -> tuple[str, ...]:
        names = set(self.workloads)
        if self.locks:
            names.add(_lock_workload())
        if self.id_generators:
            names.add(_ids_workload())
        return tuple(sorted(names))

    def rules_for(self, opts: RunOptions) -> tuple[ServiceRule, ...]:
        """The rules a run with ``opts`` depends on (``ServiceRule.when``)."""
        return tuple(r for r in self.rules if r.applies(opts))

    def check_options(self, opts: RunOptions) -> None:
        """OptionError (one line) for options this target cannot honour (on SSH hosts
        too: see ``clusters.run_target``; its faults: ``clusters.run_target.check_faults``)."""
        if opts.workload in self.refuses:
            raise OptionError(
                f"{self.name} has no {opts.workload} workload: {self.refuses[opts.workload]}"
            )
        if opts.workload not in self.workload_names:
            raise OptionError(
                f"{self.name} has no {opts.workload} workload; choose from "
                f"{', '.join(self.workload_names)}"
            )
        if opts.workload in self.workloads:
            check = getattr(self.client_builder(opts), "check_options", None)
            if check is not None:  # a builder that refuses some of its workload's options
                check(opts, self.name)
        if (
            opts.workload == _lock_workload()
            and opts.lock.impl is not None
            and opts.lock.impl not in self.locks
        ):
            near = nearest(opts.lock.impl, list(self.locks))
            raise OptionError(
                f"{self.name} has no lock implementation {opts.lock.impl!r}; "
                + (f"did you mean {near!r}?" if near else f"choose from {', '.join(self.locks)}")
            )
        if opts.workload == _ids_workload():
            from workloads.ids import check_id_options

            check_id_options(opts, self.name, tuple(self.id_generators))
        if opts.register.read_mode is not None and opts.register.read_mode not in self.read_modes:
            if not self.read_modes:
                raise OptionError(f"{self.name} has no read modes: leave out --read-mode")
            raise OptionError(
                f"{self.name} has no read mode {opts.register.read_mode!r}; choose from "
                f"{', '.join(self.read_modes)}"
            )
        if opts.backend.persistence is not None and not self.persistence:
            raise OptionError(f"{self.name} has no persistence option: leave out --persistence")
        self.check_persistence(opts.backend.persistence)
        if self.lease_ttl is not None:
            from workloads.factories import check_lease_ttl

            rule = self.lease_ttl
            check_lease_ttl(opts, self.name, rule.low, rule.high, whole=rule.whole)

    def decide(self, opts: RunOptions) -> RunOptions:
        """``opts`` with the defaults that depend on this target decided: the id generator
        of the unique-ids workload (its first), so test.json names the one that ran."""
        if opts.workload == _ids_workload() and opts.ids.generator is None and self.id_generators:
            return opts.with_(id_generator=next(iter(self.id_generators)))
        return opts

    def check_persistence(self, persistence: str | None) -> None:
        """ClusterError (one line) unless ``persistence`` is None or one this target takes
        (in Docker and over SSH alike)."""
        if persistence is not None and persistence not in self.persistence:
            choices = ", ".join(self.persistence) or "none: it has no persistence option"
            raise ClusterError(
                f"Target {self.name} does not accept persistence="
                f"{persistence!r}; choose from: {choices}"
            )

    def build(self, options: ClusterOptions) -> Cluster:
        """The (not yet started) Docker cluster for ``options``; ClusterError for a bad
        option or a target without one."""
        if self.server is None:
            raise ClusterError(f"Target {self.name} has no Docker cluster")
        self.check_persistence(options.persistence)
        backend = importlib.import_module("clusters.docker_cluster")
        cluster: Cluster = backend.docker_cluster(Lazy(self.server).load(), options)
        return cluster

    def make_cluster(self, opts: RunOptions, clock: RunClock) -> Cluster:
        """The run's cluster, not started, in Docker (or as a local process); on SSH
        hosts see ``clusters.run_target``."""
        if self.local is not None:
            return self.local(opts, clock)
        return self.build(
            ClusterOptions(
                run_id=secrets.token_hex(3),
                nodes=opts.backend.nodes,
                image=opts.backend.image,
                persistence=opts.backend.persistence,
                power_loss=POWER_LOSS in opts.fault_names(),
            )
        )

    def versions(self, cluster: Cluster) -> dict[str, str]:
        """What test.json records of the target's version."""
        if self.version is not None:
            return {self.name: self.version}
        version = getattr(cluster, "version", None)
        return {self.name: str(version() if callable(version) else "unknown")}

    def client_builder(self, opts: RunOptions) -> ClientBuilder:
        """The client builder of ``opts.workload`` (and of its lock implementation)."""
        if opts.workload == _lock_workload() and self.locks:
            impl = opts.lock.impl or self.default_lock or next(iter(self.locks))
            builder: ClientBuilder = Lazy(self.locks[impl]).load()
        elif opts.workload == _ids_workload() and self.id_generators:
            name = opts.ids.generator or next(iter(self.id_generators))
            builder = Lazy(self.id_generators[name]).load()
        else:
            builder = Lazy(self.workloads[opts.workload]).load()
        return builder

    def client_factory(
        self, opts: RunOptions, cluster: Cluster, resource: str | None
    ) -> ClientFactory:
        """The clients of ``opts.workload``; ``resource`` is the protected resource's
        address for lock and election workloads."""
        return self.client_builder(opts)(opts, cluster, resource)
