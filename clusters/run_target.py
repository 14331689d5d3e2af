"""A run's target's cluster, in Docker, as a local process or on the SSH hosts of
``--ssh``.

Over SSH the workloads, clients and versions stay the target's own; only the cluster is
built on the hosts (``clusters.ssh.factory``). What changes there for the options (the
host list's length is ``--nodes``; every target takes clock faults, which set the hosts'
real clocks, ``nemesis.host_skew``, that Go servers read too; power cuts on the hosts
whose probe at setup finds FUSE, ``clusters.ssh.power``) is checked with the rest of a
run's options, in ``harness.validate``.
"""

from __future__ import annotations

import dataclasses
import secrets

from clusters.spec import TargetSpec
from clusters.ssh.factory import SshClusterOptions, make_ssh_cluster
from core.cluster import Cluster
from core.faults import POWER_LOSS
from core.options import RunOptions
from core.run_clock import RunClock


def make_cluster(spec: TargetSpec, opts: RunOptions, clock: RunClock) -> Cluster:
    """The run's cluster, not started: on the hosts with ``opts.ssh.enabled`` (under a fresh run
    id: one directory per run), else the spec's own."""
    if not opts.ssh.enabled:
        return spec.make_cluster(opts, clock)
    run_id = f"{spec.name}-{secrets.token_hex(3)}"
    return make_ssh_cluster(spec.name, opts.ssh.hosts, ssh_cluster_options(opts, run_id))


def ssh_cluster_options(opts: RunOptions, run_id: str | None = None) -> SshClusterOptions:
    """The SSH options of a run (``--ssh-*``, ``--persistence``, the power-loss layer when
    a fault cuts the power); a fresh run id unless
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
        power_loss=POWER_LOSS.name in opts.fault_names(),
    )
    return options if run_id is None else dataclasses.replace(options, run_id=run_id)
