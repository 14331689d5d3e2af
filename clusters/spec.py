"""``TargetSpec``: everything about one target, one value; ``clusters.target_registry`` lists them.

A target's spec says what it is (name, description, default size, image), how a run gets
its cluster (a ``ServerSpec``: in Docker or on SSH hosts, or as local processes), what it
offers of each workload (``Offer``: the clients of each variant, or why not), what it
accepts (persistence, and its own rules on the options, ``checks``: the lease TTLs its
service grants, the bugs it injects), what faults may do to its cluster (``abilities``,
``core.abilities``), the service's rules a verdict depends on (``ServiceRule``) and
whether its locks claim linearizability (recorded in test.json, read by the checkers).
Each ``clusters/<target>/spec.py`` writes one; nothing else names a target, and nothing of
it names a workload but the keys of its offers.

Everything heavy is lazy: clusters and clients are ``module:attribute`` references
imported when a run uses them, so importing the registry (and listing targets) needs
neither the Docker SDK nor paramiko, and ``sim`` runs without Docker.
"""

from __future__ import annotations

import importlib
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Protocol

from clusters.releases import Release
from clusters.server import ClusterOptions, RunSettings, ServerSpec
from core.abilities import SERVER_ABILITIES, Ability
from core.client import ClientFactory
from core.cluster import Cluster, ClusterError
from core.faults import POWER_LOSS
from core.option_checks import OptionError, UnknownName, nearest, unknown_name
from core.options import RunOptions
from core.run_clock import RunClock
from workloads.common.lock_options import LockOptions

if TYPE_CHECKING:
    from workloads.workload import Variant

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
KERNEL_WRITEBACK_S: Final = 35.0
"""What a Linux kernel may hold unwritten by default, for the rule of a setting that leaves
a service's writes to it (``ServiceRule.lost_within_s``): dirty pages older than 30 s
(``vm.dirty_expire_centisecs``) written by a flusher that wakes every 5 s
(``vm.dirty_writeback_centisecs``, https://docs.kernel.org/admin-guide/sysctl/vm.html)."""


@dataclass(frozen=True, slots=True)
class Lazy:
    """A ``module:attribute`` reference, imported when first used."""

    path: str

    def load(self) -> Any:
        module, _, attr = self.path.partition(":")
        return getattr(importlib.import_module(module), attr)


@dataclass(frozen=True, slots=True)
class Bug:
    """A bug ``--sim-bug`` injects into a target's service: what it does, the workloads
    whose operations meet it (empty: every one), and the fault it needs to show (None:
    none). A run that cannot meet it is refused: the bug would do nothing."""

    description: str
    workloads: tuple[str, ...] = ()
    fault: str | None = None


class OptionRule(Protocol):
    """A rule of a target's own on a run's options (the lease TTLs its service grants as
    asked, the bugs it can inject): ``TargetSpec.checks``."""

    def check(self, opts: RunOptions, target: str) -> None:
        """OptionError (one line) for options the target cannot honour."""


@dataclass(frozen=True, slots=True)
class Bugs:
    """The bugs ``--sim-bug`` injects into a target's service, by name; a run that cannot
    meet one is refused (``check``): the bug would do nothing."""

    table: Mapping[str, Bug]

    def check(self, opts: RunOptions, target: str) -> None:
        """The bugs asked for are these, and each one the run can meet: its workload's
        operations reach it and the fault it needs is asked for."""
        for name in opts.backend.sim_bugs:
            bug = self.table.get(name)
            if bug is None:
                raise UnknownName(unknown_name("sim bug", name, list(self.table), "for --sim-bug"))
            if bug.workloads and opts.workload not in bug.workloads:
                raise OptionError(
                    f"--sim-bug {name} does nothing to the {opts.workload} workload: it "
                    f"affects {', '.join(bug.workloads)}; use --workload {bug.workloads[0]}"
                )
            if bug.fault is not None and bug.fault not in opts.fault_names():
                raise OptionError(
                    f"--sim-bug {name} does nothing without the {bug.fault} fault: add "
                    f"--nemesis {bug.fault}"
                )


@dataclass(frozen=True, slots=True)
class LeaseTtl:
    """The lease TTLs (``--lease-ttl``) a target's service grants as asked: from ``low``
    to ``high`` seconds, in whole seconds when ``whole``."""

    low: float
    high: float | None = None
    whole: bool = False

    def check(self, opts: RunOptions, target: str) -> None:
        """Refuse (``OptionError``) a ``--lease-ttl`` the target's service would not grant
        as asked, of a workload whose options it shapes: below ``low``, above ``high``, or
        fractional when it counts in ``whole`` seconds. Silently granting another TTL
        would make the recorded one a lie."""
        from workloads.workload_registry import WORKLOADS

        workload = WORKLOADS.get(opts.workload)
        if workload is None or "lease_ttl" not in workload.options:
            return
        low, high, ttl = self.low, self.high, opts.record(LockOptions).lease_ttl
        fits = ttl >= low and (high is None or ttl <= high) and (not self.whole or ttl == int(ttl))
        if fits:
            return
        span = f"from {low:g} s" + (f" to {high:g} s" if high is not None else "")
        unit = " in whole seconds" if self.whole else ""
        near = round(ttl) if self.whole else ttl
        suggestion = min(max(low, near), high if high is not None else ttl)
        raise OptionError(
            f"{target} grants lease TTLs {span}{unit}, not --lease-ttl {ttl:g}; "
            f"use --lease-ttl {suggestion:g}"
        )


@dataclass(frozen=True, slots=True)
class Offer:
    """What a target offers of one workload: the client builder of each of its variants
    (``module:attribute`` of a ``ClientBuilder``; the option the workload names picks one,
    ``workloads.workload.Variant``, the first the default), or its one ``client`` for a
    workload it runs one way; or, with neither, why it does not offer it (``why_not``,
    said when the workload is asked for)."""

    client: str | None = None
    variants: Mapping[str, str] = field(default_factory=dict)
    why_not: str | None = None
    lacks: Mapping[str, str] = field(default_factory=dict)
    """Variants of the workload it does not offer -> why (said when one is asked for)."""
    unfenced: tuple[str, ...] = ()
    """Its variants that hand out no fencing token: ``--fencing on`` fences nothing with
    them (said as a warning; the unfenced outcome is what they show)."""
    threads: bool = False
    """Whether its clients were measured in threads of the harness, under the target's
    server faults: ``--clients auto`` then takes threads where no fault acts on a client
    (``harness.client_mode``); otherwise a real target keeps a process per client."""

    @property
    def offered(self) -> bool:
        return self.why_not is None

    @property
    def default(self) -> str | None:
        """Its default variant, the first; None: it has no variants."""
        return next(iter(self.variants), None)

    def builder(self, variant: str | None) -> ClientBuilder:
        """The client builder of ``variant`` (None: the default)."""
        ref = self.variants[variant or next(iter(self.variants))] if self.variants else self.client
        if ref is None:
            raise ClusterError(f"not offered: {self.why_not}")
        builder: ClientBuilder = Lazy(ref).load()
        return builder


def run_settings(opts: RunOptions, clock: RunClock) -> RunSettings:
    """What a run with ``opts`` on ``clock`` tells its servers (``ServerSpec.for_run``)."""
    return RunSettings(clock.origin, opts.seed, tuple(opts.backend.sim_bugs))


def variants(client: str, names: tuple[str, ...], **more: Any) -> Offer:
    """An offer of one ``client`` under each of ``names`` (read modes, recipes: one
    builder that reads the option itself)."""
    return Offer(variants=dict.fromkeys(names, client), **more)


def refused(why: str) -> Offer:
    """An offer of nothing: the target does not offer the workload, because ``why``."""
    return Offer(why_not=why)


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
        """Whether the rule is about a run with these options; of a list option (the
        faults: ``{"nemesis": ("power-loss",)}``), whether any of its values is named."""
        return all(_among(opts.get(name), values) for name, values in self.when.items())

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


def _among(value: Any, values: tuple[Any, ...]) -> bool:
    """``value`` is one of ``values``; a tuple (a list option's) when one of its own is."""
    if isinstance(value, tuple):
        return any(v in values for v in value)
    return value in values


DURING_POWER_LOSS: Final = {"nemesis": (POWER_LOSS.name,)}
"""The ``when`` of a rule of what a power cut may take: runs that cut the power."""


@dataclass(frozen=True)
class TargetSpec:
    """One target. ``offers``: workload name -> what it offers of it (``Offer``: the
    clients of each variant, or why not); a workload it has no offer for it does not run."""

    name: str
    description: str
    default_nodes: int
    offers: Mapping[str, Offer] = field(default_factory=dict)
    server: str | None = None
    """``module:NAME`` of its ``ServerSpec`` (its ``server.py``): how to run its server,
    which the Docker backend runs in containers and the SSH backend on hosts, or, for a
    server the harness ships (``ServerSpec.local``: the sim), the local-process backend."""
    image: str | None = None
    """The image definition it runs (``clusters/<image>/``); None for a target without one."""
    persistence: tuple[str, ...] = ()
    """Accepted ``persistence`` values; empty when the target has no such option."""
    checks: tuple[OptionRule, ...] = ()
    """Its own rules on a run's options (``LeaseTtl``: the lease TTLs its service grants
    as asked, none: any; ``Bugs``: the bugs it can inject)."""
    linearizable_locks: bool = False
    """Whether its locks claim linearizability (the mutex-linearizability check)."""
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
    def service_log(self) -> str | None:
        """Where its service's own event log lands in the run directory (its server's,
        ``ServerSpec.service_log``); None: its service keeps none the checkers read."""
        return self._server(None).service_log if self.server is not None else None

    @property
    def local(self) -> bool:
        """Whether its server runs as processes of this machine (``ServerSpec.local``: the
        sim), not in Docker or on SSH hosts."""
        return self.server is not None and self._server(None).local

    @property
    def bugs(self) -> Mapping[str, Bug]:
        """The bugs ``--sim-bug`` can inject into it, by name (its ``Bugs`` rule)."""
        return next((r.table for r in self.checks if isinstance(r, Bugs)), {})

    @property
    def workload_names(self) -> tuple[str, ...]:
        """The workloads it offers."""
        return tuple(sorted(name for name, o in self.offers.items() if o.offered))

    def rules_for(self, opts: RunOptions) -> tuple[ServiceRule, ...]:
        """The rules a run with ``opts`` depends on (``ServiceRule.when``)."""
        return tuple(r for r in self.rules if r.applies(opts))

    def offer(self, opts: RunOptions) -> Offer:
        """Its offer of ``opts.workload``; OptionError (one line) when it makes none."""
        offer = self.offers.get(opts.workload)
        if offer is not None and offer.why_not is not None:
            raise OptionError(f"{self.name} has no {opts.workload} workload: {offer.why_not}")
        if offer is None:
            raise OptionError(
                f"{self.name} has no {opts.workload} workload; choose from "
                f"{', '.join(self.workload_names)}"
            )
        return offer

    def check_options(self, opts: RunOptions) -> None:
        """OptionError (one line) for options this target cannot honour (on SSH hosts
        too, and its faults: ``harness.validate``)."""
        from workloads.workload_registry import WORKLOADS

        offer = self.offer(opts)
        for workload in WORKLOADS.values():
            v = workload.variant
            if v is None:
                continue
            if workload.name == opts.workload:
                self._check_variant(workload.name, v, opts.get(v.option), offer, opts)
            elif opts.was_given(v.option):  # another workload's: it must name something
                self._check_variant(
                    workload.name, v, opts.get(v.option), self.offers.get(workload.name), opts
                )
        if opts.backend.image is not None and self.local:
            raise OptionError(
                f"{self.name} runs as a local process, not in Docker: leave out --image"
            )
        named = self._server(None).node_names if self.server is not None else ()
        if named and opts.backend.nodes not in (None, len(named)) and not opts.ssh.enabled:
            raise OptionError(
                f"{self.name} runs {len(named)} node(s) ({', '.join(named)}), "
                f"not {opts.backend.nodes}: leave out --nodes"
            )
        if opts.backend.persistence is not None and not self.persistence:
            raise OptionError(f"{self.name} has no persistence option: leave out --persistence")
        self.check_persistence(opts.backend.persistence)
        self.check_release(opts.backend.server_version, opts.backend.persistence)
        for rule in self.checks:
            rule.check(opts, self.name)

    def _check_variant(
        self, workload: str, v: Variant, value: Any, offer: Offer | None, opts: RunOptions
    ) -> None:
        """OptionError (one line) unless ``value`` of ``v``'s option (None: the default)
        names one of the variants ``offer`` offers of ``workload``, or one that is no
        target's own that ``v.own`` takes here (a lock library, a lock of one's own)."""
        if value is None:
            return
        offered = offer is not None and offer.offered
        if v.own is not None and offered and Lazy(v.own).load().accepts(value, self.name, opts):
            return
        choices = list(offer.variants) if offer is not None else []
        if not choices:
            raise OptionError(f"{self.name} has no {v.words}s: leave out {v.flag}")
        if offer is not None and value in offer.lacks:
            raise OptionError(
                f"{self.name} has no {value} {v.words} for the {workload} workload: "
                f"{offer.lacks[value]}; use {v.flag} {', '.join(choices)}"
            )
        if value not in choices:
            near = nearest(str(value), choices)
            raise OptionError(
                f"{self.name} has no {v.words} {value!r}; "
                + (f"did you mean {near!r}?" if near else f"choose from {', '.join(choices)}")
            )

    def variant(self, opts: RunOptions) -> str | None:
        """The variant of ``opts.workload`` a run with ``opts`` gets (None: it has none)."""
        from workloads.workload_registry import get_workload

        v = get_workload(opts.workload).variant
        offer = self.offers.get(opts.workload)
        if offer is None or not offer.variants:
            return None
        chosen = opts.get(v.option) if v is not None else None
        return chosen if isinstance(chosen, str) else offer.default

    def decide(self, opts: RunOptions) -> RunOptions:
        """``opts`` with the defaults that depend on this target decided: the variant of
        a workload whose option says so (``Variant.decided``: the unique-ids workload's
        generator), so test.json names the one that ran."""
        from workloads.workload_registry import get_workload

        v = get_workload(opts.workload).variant
        if v is None or not v.decided or opts.get(v.option) is not None:
            return opts
        chosen = self.variant(opts)
        return opts if chosen is None else opts.with_(**{v.option: chosen})

    def check_persistence(self, persistence: str | None) -> None:
        """ClusterError (one line) unless ``persistence`` is None or one this target takes
        (in Docker and over SSH alike)."""
        if persistence is not None and persistence not in self.persistence:
            choices = ", ".join(self.persistence) or "none: it has no persistence option"
            raise ClusterError(
                f"Target {self.name} does not accept persistence="
                f"{persistence!r}; choose from: {choices}"
            )

    def release(self, suite: str | None) -> Release | None:
        """Its server's release ``suite`` (None when not named, or not one it has)."""
        if suite is None or self.server is None:
            return None
        releases: Mapping[str, Release] = Lazy(self.server).load().releases
        return releases.get(suite)

    def check_release(self, suite: str | None, persistence: str | None = None) -> None:
        """OptionError (one line, naming the releases it has) unless ``suite`` is None or
        a Debian release its server comes from (``ServerSpec.releases``) that takes
        ``persistence``."""
        if suite is None:
            return
        if self.server is None:
            raise OptionError(f"{self.name} has one version only: leave out --server-version")
        try:
            Lazy(self.server).load().with_release(suite).with_persistence(persistence)
        except ClusterError as e:
            raise OptionError(str(e)) from None

    def build(self, options: ClusterOptions, run: RunSettings | None = None) -> Cluster:
        """The (not yet started) Docker cluster for ``options`` (its servers set up for
        ``run``, ``ServerSpec.for_run``); ClusterError for a bad option or a target
        without one."""
        if self.server is None or self.local:
            raise ClusterError(f"Target {self.name} has no Docker cluster")
        self.check_persistence(options.persistence)
        backend = importlib.import_module("clusters.docker_cluster")
        cluster: Cluster = backend.docker_cluster(self._server(run), options)
        return cluster

    def _server(self, run: RunSettings | None) -> ServerSpec:
        """Its ``ServerSpec``, set up for ``run`` when given."""
        server: ServerSpec = Lazy(str(self.server)).load()
        return server if run is None else server.for_run(run)

    def make_cluster(self, opts: RunOptions, clock: RunClock) -> Cluster:
        """The run's cluster, not started, in Docker (or as local processes,
        ``clusters._local``); on SSH hosts see ``clusters.run_target``."""
        if self.local:
            backend = importlib.import_module("clusters._local")
            local: Cluster = backend.local_cluster(
                self._server(run_settings(opts, clock)), opts.backend.nodes
            )
            return local
        return self.build(
            ClusterOptions(
                run_id=secrets.token_hex(3),
                nodes=opts.backend.nodes,
                image=opts.backend.image,
                persistence=opts.backend.persistence,
                release=opts.backend.server_version,
                power_loss=POWER_LOSS.name in opts.fault_names(),
            ),
            run_settings(opts, clock),
        )

    def versions(self, cluster: Cluster) -> dict[str, str]:
        """What test.json records of the target's version."""
        version = getattr(cluster, "version", None)
        release = getattr(cluster, "release", None)  # the Docker backend's Debian release
        return {
            self.name: str(version() if callable(version) else "unknown"),
            **(release() if callable(release) else {}),
        }

    def client_builder(self, opts: RunOptions) -> ClientBuilder:
        """The client builder of ``opts.workload`` (of the variant its options pick; one
        that is no target's own: its workload's ``Variant.own``)."""
        from workloads.workload_registry import get_workload

        offer, variant, v = (
            self.offer(opts),
            self.variant(opts),
            get_workload(opts.workload).variant,
        )
        if variant is not None and variant not in offer.variants and v is not None and v.own:
            builder: ClientBuilder = Lazy(v.own).load()
            return builder
        return offer.builder(variant)

    def client_factory(
        self, opts: RunOptions, cluster: Cluster, resource: str | None
    ) -> ClientFactory:
        """The clients of ``opts.workload``; ``resource`` is the protected resource's
        address for lock and election workloads."""
        return self.client_builder(opts)(opts, cluster, resource)
