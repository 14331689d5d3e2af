"""Every check of a run's options before anything starts, in one place for the command
line and suite files alike.

``decide`` is the one place where the defaults that depend on the workload are decided
from its registry entry (``workloads.workload_registry``): the fault of a run that names none and
the op timeout that follows the work of a holding workload. ``RunOptions.validate`` checks
what the options say on their own (ranges, names, the schedule, the op timeout); this adds
what needs the registries: the workload and the target exist and the target can honour the
workload, lock, read mode and persistence (on SSH hosts too, none contacted: a host list
as long as ``--nodes``, no ``--image``); the faults are registered ones
(``nemesis.fault_registry``) the target has the abilities for (``core.abilities``; over SSH
every target's clock can move, and no power can be cut); bugs to inject are the target's;
``--nemesis-target`` is a value each fault takes. Each concept's own rule is asked here
and nowhere else: the target's (``TargetSpec.check_options``), the workload's
(``Workload.check``) and the faults' (``FaultSpec.check``, in their ``rules_of``, which
``RunOptions.validate`` applies). What only the running cluster can tell (node names in
``--nemesis-target``) is checked when it exists. Errors are one line (``HarnessError``).
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from dataclasses import fields, replace
from typing import NamedTuple

from clusters.run_target import ssh_cluster_options
from clusters.spec import Lazy, Offer, TargetSpec
from clusters.ssh.factory import check_ssh_options
from clusters.target_registry import TARGETS, resolve
from core.abilities import Ability, check_abilities
from core.option_checks import NUMBERS, OptionError
from core.option_defaults import fit_defaults
from core.option_records import SshOptions
from core.options import RunOptions, flag_of
from harness.client_mode import client_mode
from harness.live_check import checked_live
from nemesis.fault_registry import needs_of, parse_nemesis, rules_of, spec_of
from nemesis.nodes import node_names
from nemesis.targets import MAX_NODES, NEEDS_HOLDERS, NODE_NAME, parse_targets
from workloads.workload_registry import WORKLOADS, get_workload

SEED = NUMBERS["seed"]


def decide(opts: RunOptions) -> RunOptions:
    """``opts`` with the defaults that depend on its workload and faults decided from
    their registry entries: the workload (the registry's default when none is named), its
    fault when none is named, every default the user did not write fitted to those they
    did (``core.option_defaults``), the op timeout when it follows (a one-line OptionError
    for an unknown workload, or for options nothing fits)."""
    workload = get_workload(opts.workload)
    named = opts.with_(
        workload=workload.name, nemesis=opts.faults.nemesis or (workload.default_fault,)
    )
    fitted = fit_defaults(named, rules_of(named), workload.options)
    return fitted.follow_op_timeout(workload.hold(fitted), rules_of(fitted))


def check_options(opts: RunOptions) -> RunOptions:
    """The options on their own: the workload's defaults decided, then
    ``RunOptions.validate`` with its facts and its faults' rules (one-line OptionError);
    returns the decided options."""
    opts = decide(opts)
    workload = get_workload(opts.workload)
    opts.validate(workload.hold(opts), rules_of(opts))
    workload.check(opts)
    return opts


class Checked(NamedTuple):
    """A run's options checked and decided, once (``check_run``: the workload's defaults,
    the target's name and its defaults), with their target: the one value
    ``harness.orchestrate.run_test`` runs, which the run only reads."""

    options: RunOptions
    target: TargetSpec

    def placed(self, out_dir: str | None = None, seed: int | None = None) -> Checked:
        """The same run written under ``out_dir`` or with ``seed`` (a suite's folder, a
        repeat's seeds): no default depends on either, so nothing is checked or decided
        again (a seed outside ``--seed``'s range: a one-line OptionError)."""
        opts = self.options
        if seed is not None:
            SEED.check(seed)
            opts = replace(opts, seed=seed)
        if out_dir is not None:
            opts = replace(opts, out_dir=out_dir)
        return Checked(opts, self.target)


def check_run(opts: RunOptions) -> Checked:
    """The options to run (the workload's defaults decided, the target's name filled in
    when left to the default) and their target, or a one-line HarnessError for anything
    ``opts`` cannot run as asked."""
    opts = check_options(opts)
    parse_nemesis(opts.faults.nemesis)
    check_nemesis_target(opts)
    target = resolve(opts.target)
    opts = target.decide(replace(opts, target=target.name))
    _check_own_variant(opts)
    check_target(target, opts)
    _check_bugs(target, opts)
    check_given(target, opts)
    _check_min_rate(opts)
    client_mode(opts, target)  # a mode the clients cannot run in: refused here
    return Checked(opts, target)


def _check_own_variant(opts: RunOptions) -> None:
    """A variant that is no target's own (a lock library, a lock of one's own:
    ``Variant.own``) is one that loads, told with the targets where it could run."""
    v = get_workload(opts.workload).variant
    if v is None or v.own is None:
        return
    offers = {n: t.offers.get(opts.workload, Offer()) for n, t in TARGETS.items()}
    Lazy(v.own).load().check(opts, {n: list(o.variants) for n, o in offers.items() if o.variants})


def _check_min_rate(opts: RunOptions) -> None:
    """A load floor above the rate asked could never be met: refused, not run to end
    unknown."""
    if opts.min_rate is not None and opts.rate is not None and opts.min_rate > opts.rate:
        raise OptionError(
            f"--min-rate {opts.min_rate:g} is above --rate {opts.rate:g}: no run at that "
            "rate can reach it; give a --min-rate at most the --rate"
        )


def check_target(target: TargetSpec, opts: RunOptions) -> None:
    """OptionError (one line) for options ``target`` cannot honour, a fault it has not
    the abilities for included (with the target's reason)."""
    _check_target_options(target, opts)
    _check_faults(target, opts, needs_of(opts.fault_names()))


def _check_target_options(spec: TargetSpec, opts: RunOptions) -> None:
    """A one-line OptionError or ClusterError for options ``spec`` cannot honour, before
    anything starts (no host is contacted)."""
    if opts.ssh.enabled:
        check_ssh_options(spec.name, opts.ssh.hosts, ssh_cluster_options(opts))
        if opts.backend.nodes is not None and opts.backend.nodes != len(opts.ssh.hosts):
            raise OptionError(
                f"--nodes {opts.backend.nodes} but {len(opts.ssh.hosts)} hosts were named: "
                "over SSH the cluster has one node per host"
            )
        for flag, value in (
            ("--image", opts.backend.image),
            ("--server-version", opts.backend.server_version),
        ):
            if value is not None:
                raise OptionError(
                    f"{flag} chooses a Docker image; over SSH the hosts' packages "
                    "are used: leave it out"
                )
    if opts.backend.image is not None and opts.backend.server_version is not None:
        raise OptionError(
            "--image names the image the nodes run, whatever its release: "
            "leave out --server-version (or --image)"
        )
    spec.check_options(opts)


def _check_faults(spec: TargetSpec, opts: RunOptions, needs: Mapping[str, Set[Ability]]) -> None:
    """OptionError (one line, the target's reason) unless the target has every ability
    the run's faults need (``needs``: fault -> abilities, from the faults' registry). On
    SSH hosts every target can move a clock: the hosts' own, which Go servers read too;
    a target that can lose power can there too, on hosts whose probe at setup finds
    FUSE (``clusters.ssh.power``: one that cannot is refused then, in one line); in Docker
    a server release whose clock cannot move (``Release.no_faketime``) cannot take clock faults."""
    has = spec.abilities
    lacks: Mapping[Ability, str] = spec.lacks
    release = spec.release(opts.backend.server_version)
    if release is not None and release.no_faketime is not None:
        has = has - {Ability.CLOCK}
        lacks = {**lacks, Ability.CLOCK: release.no_faketime}
    if opts.ssh.enabled:
        has = has | {Ability.CLOCK}
    if all(needs[fault] <= has for fault in needs):
        return  # nothing to refuse: not worth importing every target's server to name them
    real = ", ".join(name for name, t in TARGETS.items() if not t.local)
    check_abilities(spec.name, has, lacks, needs, real=real)


def _check_bugs(target: TargetSpec, opts: RunOptions) -> None:
    """Bugs are asked for of a target that has some (the target's ``Bugs`` rule checks
    which: ``clusters.spec``)."""
    if opts.backend.sim_bugs and not target.bugs:
        buggy = [name for name, t in TARGETS.items() if t.bugs]
        raise OptionError(
            f"--sim-bug injects bugs into the {', '.join(buggy)} target only: add "
            f"--target {buggy[0]} or leave it out"
        )


def check_given(target: TargetSpec, opts: RunOptions) -> None:
    """OptionError (one line) for an option the user wrote that would do nothing, naming
    what would: an SSH option without --ssh, a --nemesis-target without a fault."""
    if not opts.ssh.enabled:
        default = RunOptions().ssh
        for f in fields(SshOptions):
            flag = f.metadata.get("flat", f.name)
            if opts.was_given(flag) and getattr(opts.ssh, f.name) != getattr(default, f.name):
                raise OptionError(
                    f"{flag_of(flag)} does nothing without --ssh, which runs the "
                    "target on real hosts: add --ssh --nodes host1,host2,... or leave it out"
                )
    if opts.stop_on_anomaly and not checked_live(get_workload(opts.workload)):
        raise OptionError(
            f"--stop-on-anomaly does nothing to the {opts.workload} workload, checked only "
            "at the end: use a workload checked while it runs (cas-register, lock), or leave "
            "it out"
        )
    if opts.faults.nemesis_target is not None and not opts.fault_names():
        asked = (
            "--nemesis none"
            if opts.was_given("nemesis")
            else (f"the {opts.workload} workload's default, no fault")
        )
        raise OptionError(
            f"--nemesis-target {opts.faults.nemesis_target} does nothing with {asked}: "
            "name the faults it aims, e.g. --nemesis partition"
        )


def check_nemesis_target(opts: RunOptions) -> None:
    """OptionError unless every requested fault takes the value aimed at it (node names
    are checked against the cluster's nodes when it exists)."""
    parsed = parse_targets(opts.faults.nemesis_target)
    faults = opts.fault_names()
    for key in parsed:
        if key is not None and key not in faults:
            raise OptionError(
                f"--nemesis-target aims {key}, which is not in "
                f"--nemesis {','.join(opts.faults.nemesis)}"
            )
    for fault in faults:
        spec = parsed.get(fault, parsed.get(None))
        if spec is None:
            continue
        aimed = spec_of(fault).aim
        if spec not in aimed.targets and not (aimed.node_names and _named_nodes(spec, opts)):
            raise OptionError(
                f"--nemesis-target {spec!r} is not a target of the {fault} "
                f"fault: it takes {aimed.takes() or 'no target'} (one value for every "
                "fault, or fault=value pairs separated by ;)"
            )
        if spec in NEEDS_HOLDERS and get_workload(opts.workload).holder is None:
            having = ", ".join(w.name for w in WORKLOADS.values() if w.holder is not None)
            raise OptionError(
                f"--nemesis-target {spec}: the {opts.workload} workload has no holder; "
                f"aim elsewhere, or use a workload that has one ({having})"
            )


def _named_nodes(spec: str, opts: RunOptions) -> bool:
    """Whether ``spec`` lists node names of the run's cluster (n1..nN, every cluster's
    naming), as far as the options tell its size."""
    size = len(opts.ssh.hosts) if opts.ssh.enabled else opts.backend.nodes or MAX_NODES
    named = node_names(spec)
    return bool(named) and all(NODE_NAME.fullmatch(n) and int(n[1:]) <= size for n in named)


def warnings_of(target: TargetSpec, opts: RunOptions) -> list[str]:
    """What the user wrote that changes less than they may think, without refusing the
    run: ``--fencing on`` with a lock that hands out no token (unfenced is the point)."""
    found = []
    offer, lock = target.offers.get(opts.workload), target.variant(opts)
    unfenced = offer is not None and lock in offer.unfenced
    if opts.was_given("fencing") and opts.get("fencing") and unfenced:
        found.append(
            f"--fencing on fences nothing with the {lock} lock of {target.name}: it hands "
            "out no fencing token, so the resource accepts every write (the run shows what "
            "that costs)"
        )
    return found


def sim_bugs() -> tuple[str, ...]:
    """The bugs the targets can inject (``--sim-bug``)."""
    return tuple(dict.fromkeys(b for t in TARGETS.values() for b in t.bugs))


def bugs_help() -> str:
    """Each bug the targets inject, what it does and the workloads it affects, one a line."""
    return "\n".join(
        f"{name}: {bug.description} ("
        + (f"{', '.join(bug.workloads)}" if bug.workloads else "every workload")
        + (f", with --nemesis {bug.fault}" if bug.fault else "")
        + ")"
        for t in TARGETS.values()
        for name, bug in t.bugs.items()
    )


def _offers(option: str) -> dict[str, list[Offer]]:
    """Each target's offers of the workloads whose variant ``option`` picks."""
    named = [w.name for w in WORKLOADS.values() if w.variant and w.variant.option == option]
    return {name: [t.offers[w] for w in named if w in t.offers] for name, t in TARGETS.items()}


def variants_of(option: str) -> dict[str, tuple[str, ...]]:
    """Each target's variants that ``option`` picks (a workload's ``Variant.option``:
    ``lock``, ``read_mode``...; its first the default), for the targets that have some."""
    out = {}
    for name, offers in _offers(option).items():
        found = tuple(dict.fromkeys(v for o in offers for v in o.variants))
        if found:
            out[name] = found
    return out


def per_target(option: str) -> str:
    """Each target's variants that ``option`` picks (``variants_of``), one target a line,
    a target handing out no fencing token with one of them said, then what takes the
    variants that are no target's own (``Variant.own``: its ``described``), for an
    option's reference."""
    offers = _offers(option)
    lines = [
        f"{name}: {', '.join(names)}"
        + (" (no token)" if any(o.unfenced for o in offers[name]) else "")
        for name, names in variants_of(option).items()
    ]
    owners = [w.variant.own for w in WORKLOADS.values() if w.variant and w.variant.option == option]
    lines += [Lazy(own).load().described for own in dict.fromkeys(owners) if own is not None]
    return "\n".join(lines)


def every(option: str) -> tuple[str, ...]:
    """The variants some target has that ``option`` picks, in order, for completion."""
    return tuple(dict.fromkeys(v for names in variants_of(option).values() for v in names))


def targets_described() -> str:
    """Each target with its description and workloads, one a line, for ``--target``'s
    reference."""
    return "\n".join(
        f"{name}: {t.description} (workloads {', '.join(t.workload_names)})"
        for name, t in TARGETS.items()
    )
