"""From a run's SSH options to a cluster on real hosts: the one call the run makes.

``make_ssh_cluster("etcd", ["n1.lab", "root@n2.lab:2222", ...], SshClusterOptions(...))``
returns a not-yet-started ``Cluster``; bad input (an unknown target, a bad host spec, a
host named twice, an even number of hosts) raises ``ClusterError`` with one line saying
what to fix. Targets are imported only when chosen, so importing this module needs
neither paramiko nor a host.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from clusters.remote.base import Remote
from clusters.remote.hosts import HostSpec, hosts_from, parse_host
from clusters.server import ServerSpec
from clusters.spec import Lazy
from clusters.ssh.packages import INSTALL_MODES, PackageInstaller
from clusters.target_registry import TARGETS, ssh_targets
from core.cluster import Cluster, ClusterError


@dataclass(frozen=True, slots=True)
class SshClusterOptions:
    """What a run may choose about a cluster on SSH hosts."""

    run_id: str = field(default_factory=lambda: f"ssh-{secrets.token_hex(3)}")
    """Names the run's directory on each host (``/var/lib/harness/<run id>``)."""
    user: str | None = None
    """``--ssh-user``: login name (a host's own ``user@`` wins; default: local user)."""
    port: int = 22
    """``--ssh-port`` (a host's own ``:port`` wins)."""
    key: str | None = None
    """``--ssh-key``: private key file (default: the SSH agent, then ~/.ssh/id_*)."""
    strict: bool = True
    """False with ``--ssh-no-strict``: accept unknown host keys (lab machines only)."""
    known_hosts: str | None = None
    """A known_hosts file to check host keys against (default: the user's and system's)."""
    install: str = "auto"
    """How packages get onto the hosts: auto, apt, upload or present (docs/ssh.md)."""
    keep_packages: bool = False
    """Leave the packages the run installed in place at the end (config, data and
    processes are removed regardless)."""
    deb_dir: str | None = None
    """Upload the .deb files of this directory instead of downloading them."""
    timeout: float = 60.0
    """Seconds any one command on a host may take (package installs take up to 10 min)."""
    persistence: str | None = None
    """``--persistence`` (redis and redlock: none, aof-everysec, aof-always), as in Docker."""
    power_loss: bool = False
    """Serve each host's data directory through the power-loss layer, for the power-loss
    fault (``clusters.ssh.power``: a host that cannot is refused at setup)."""


def check_login_options(options: SshClusterOptions) -> None:
    """ClusterError (one line) unless the port, key and known_hosts options make sense."""
    if not 0 < options.port < 65536:
        raise ClusterError(f"--ssh-port {options.port} is not a port number (1-65535)")
    if options.key is not None and not Path(options.key).expanduser().is_file():
        raise ClusterError(f"--ssh-key {options.key} is not a file; give the private key's path")
    if options.known_hosts is not None and not Path(options.known_hosts).expanduser().is_file():
        raise ClusterError(f"--ssh-known-hosts {options.known_hosts} is not a file")


def ssh_remotes(options: SshClusterOptions) -> Callable[[HostSpec], Remote]:
    """Makes the ``SshRemote`` of a host, logging in as ``options`` say (not connected)."""
    from clusters.remote.ssh import SshOptions, SshRemote

    ssh = SshOptions(
        user=options.user,
        port=options.port,
        key=str(Path(options.key).expanduser()) if options.key else None,
        strict=options.strict,
        known_hosts=options.known_hosts,
        timeout=options.timeout,
    )
    return lambda spec: SshRemote(spec, ssh)


def check_ssh_options(
    target: str, hosts: Sequence[str | HostSpec], options: SshClusterOptions
) -> list[HostSpec]:
    """The hosts, parsed, when ``target``, ``hosts`` and ``options`` make sense (nothing is
    contacted); ClusterError with one line saying what to fix otherwise."""
    spec = TARGETS.get(target)
    if spec is None or target not in ssh_targets():
        raise ClusterError(
            f"Target {target!r} cannot run over SSH yet; choose from: {', '.join(ssh_targets())}"
        )
    if options.install not in INSTALL_MODES:
        raise ClusterError(
            f"Unknown --ssh-install {options.install!r}; choose from: {', '.join(INSTALL_MODES)}"
        )
    check_login_options(options)
    if options.deb_dir is not None and not Path(options.deb_dir).is_dir():
        raise ClusterError(f"--ssh-debs {options.deb_dir} is not a directory of .deb files")
    spec.check_persistence(options.persistence)  # the same choices as in Docker
    specs = [h if isinstance(h, HostSpec) else parse_host(h) for h in hosts]
    specs = hosts_from([str(s) for s in specs])  # none, or a host named twice: one line
    server_spec(target).check_size(len(specs), "hosts")
    return specs


def server_spec(target: str) -> ServerSpec:
    """The ``ServerSpec`` of a target that runs over SSH (``TargetSpec.server``), imported now."""
    server: ServerSpec = Lazy(str(TARGETS[target].server)).load()
    return server


def make_ssh_cluster(
    target: str, hosts: Sequence[str | HostSpec], options: SshClusterOptions | None = None
) -> Cluster:
    """The cluster of ``target`` on ``hosts`` (``[user@]host[:port]`` each), not started;
    ClusterError (one line) for bad input, before any host is contacted."""
    opts = options or SshClusterOptions()
    specs = check_ssh_options(target, hosts, opts)
    from clusters.ssh.cluster import ssh_cluster

    server = server_spec(target).with_persistence(opts.persistence)
    deb_dir = Path(opts.deb_dir) if opts.deb_dir else None
    installer = PackageInstaller(
        server.packages, server.services, opts.install, deb_dir, commands=server.commands
    )
    return ssh_cluster(
        server,
        specs,
        run_id=opts.run_id,
        remote=ssh_remotes(opts),
        installer=installer,
        keep_packages=opts.keep_packages,
        power_loss=opts.power_loss,
    )
