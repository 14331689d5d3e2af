"""A run's target: its spec's checks and cluster, in Docker, as a local process or on the
SSH hosts of ``--ssh``.

Over SSH the workloads, clients, option checks and versions stay the target's own; only
the cluster is built on the hosts (``clusters.ssh.factory``). Two checks change there:
``--nodes`` is the host list's length, so a different size is refused, and clock faults
are allowed for every target, since they set the hosts' real clocks (``nemesis.host_clock``),
which Go servers read too.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Mapping, Set

from clusters.registry import TARGETS
from clusters.spec import TargetSpec
from clusters.ssh.factory import SshClusterOptions, check_ssh_options, make_ssh_cluster
from core.abilities import Ability, check_abilities
from core.clock import RunClock
from core.cluster import Cluster
from core.option_checks import OptionError
from core.options import RunOptions


def check_options(spec: TargetSpec, opts: RunOptions) -> None:
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


NO_POWER_LOSS_ON_HOSTS = {
    Ability.POWER_LOSS: "no {fault} faults over SSH yet: a host's data directory is not on "
    "the power-loss layer (clusters/_powerfs), so a cut would discard nothing; run {target} "
    "in Docker",
}
"""Why power cuts stay in Docker for now."""


def check_faults(spec: TargetSpec, opts: RunOptions, needs: Mapping[str, Set[Ability]]) -> None:
    """OptionError (one line, the target's reason) unless the target has every ability
    the run's faults need (``needs``: fault -> abilities, from the faults' registry). On
    SSH hosts every target can move a clock: the hosts' own, which Go servers read too;
    no target can lose power there (``NO_POWER_LOSS_ON_HOSTS``); in Docker a server
    release whose clock cannot move (``Release.no_faketime``) cannot take clock faults."""
    has = spec.abilities
    lacks: Mapping[Ability, str] = spec.lacks
    release = spec.release(opts.backend.server_version)
    if release is not None and release.no_faketime is not None:
        has = has - {Ability.CLOCK}
        lacks = {**lacks, Ability.CLOCK: release.no_faketime}
    if opts.ssh.enabled:
        has = (has | {Ability.CLOCK}) - {Ability.POWER_LOSS}
        lacks = {**spec.lacks, **NO_POWER_LOSS_ON_HOSTS}
    real = ", ".join(name for name, t in TARGETS.items() if t.local is None)
    check_abilities(spec.name, has, lacks, needs, real=real)


def make_cluster(spec: TargetSpec, opts: RunOptions, clock: RunClock) -> Cluster:
    """The run's cluster, not started: on the hosts with ``opts.ssh.enabled`` (under a fresh run
    id: one directory per run), else the spec's own."""
    if not opts.ssh.enabled:
        return spec.make_cluster(opts, clock)
    run_id = f"{spec.name}-{secrets.token_hex(3)}"
    return make_ssh_cluster(spec.name, opts.ssh.hosts, ssh_cluster_options(opts, run_id))


def ssh_cluster_options(opts: RunOptions, run_id: str | None = None) -> SshClusterOptions:
    """The SSH options of a run (``--ssh-*``, ``--persistence``); a fresh run id unless
    ``run_id`` is given."""
    options = SshClusterOptions(
        user=opts.ssh.user,
        port=opts.ssh.port,
        key=opts.ssh.key,
        strict=opts.ssh.strict,
        known_hosts=opts.ssh.known_hosts,
        install=opts.ssh.install,
        keep_packages=opts.ssh.keep_packages,
        deb_dir=opts.ssh.debs,
        persistence=opts.backend.persistence,
    )
    return options if run_id is None else dataclasses.replace(options, run_id=run_id)
