"""Stand-in SSH hosts for the integration tests: ``sshhost`` containers on a network of
their own (tests/integration/test_ssh*.py).

``ssh_lab(run, tmp)`` starts N containers of the ``sshhost`` image (Debian trixie with
openssh-server, sudo and a user ``harness`` with passwordless sudo) on an internal
network, gives them a fresh login key and writes a known_hosts file from their own host
keys, so the harness logs in with strict host key checking as on real machines. The
hosts get ``NET_ADMIN`` (iptables in their own network namespace) but never ``SYS_TIME``;
with ``fuse=True`` also what mounting FUSE inside takes (``/dev/fuse``, ``SYS_ADMIN``, no
AppArmor profile: ``clusters._powerfs.node.CONTAINER``), for the power-loss fault, whose
layer runs on the image's ``python3-fuse``; without it a host is refused that fault.
The network is internal: the hosts reach no mirror, so targets are installed from .debs
the control machine downloads and uploads.

Everything created carries ``harness=1`` and the caller's own ``harness.run`` label, and
is removed by that label when the block ends. A module passes its own ``subnet`` when it
must not depend on which /24 of the pool is free (the default picks one).
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from clusters import _docker, cleanup
from clusters._network import create_network, node_ip
from clusters._powerfs.node import CONTAINER as FUSE
from clusters._probe import tcp_exchange, wait_until
from clusters.image_build import ensure_image
from clusters.remote.base import Remote, get_text
from clusters.remote.hosts import HostSpec
from clusters.remote.ssh import SshOptions, SshRemote
from clusters.ssh.factory import SshClusterOptions
from clusters.ssh.packages import installed_packages
from tests.support.docker_remote import DockerRemote

SSHHOST = "tests.support.sshhost.image"
"""The stand-in hosts' image definition (``load_imagedef`` takes a module's name)."""

log = logging.getLogger(__name__)
USER = "harness"


@dataclass
class Lab:
    """The stand-in hosts: addresses, the login key, a known_hosts file, the containers."""

    ips: list[str]
    key: Path
    known_hosts: Path
    docker: list[DockerRemote]
    packages: list[set[str]] = field(default_factory=list)
    """The packages each host had at the start (what every run must leave behind)."""

    def hosts(self, n: int | None = None) -> list[str]:
        """``harness@ip`` of the first ``n`` hosts (all by default)."""
        return [f"{USER}@{ip}" for ip in self.ips[:n]]

    def options(self, run_id: str, **kw: Any) -> SshClusterOptions:
        return SshClusterOptions(
            run_id=run_id,
            key=str(self.key),
            known_hosts=str(self.known_hosts),
            install="upload",
            **kw,
        )

    def ssh(self, i: int, **kw: Any) -> SshRemote:
        opts = SshOptions(key=str(self.key), known_hosts=str(self.known_hosts), **kw)
        return SshRemote(HostSpec(self.ips[i], USER), opts)


def sshd_up(remote: DockerRemote, ip: str) -> bool:
    """Whether the host made its keys and its sshd greets us."""
    return (
        remote.run("test -s /etc/ssh/ssh_host_ed25519_key.pub").ok
        and tcp_exchange(ip, 22, b"", until=b"SSH-") is not None
    )


@contextmanager
def ssh_lab(
    run: str, tmp: Path, hosts: int = 3, subnet: str | None = None, *, fuse: bool = False
) -> Iterator[Lab]:
    """``hosts`` sshhost containers labelled ``run``, able to mount FUSE with ``fuse`` (see
    the module docstring)."""
    client = _docker.connect()
    image = ensure_image(SSHHOST, log.info, client=client)
    key = tmp / "id_ed25519"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", run, "-f", str(key)], check=True
    )
    try:
        network, subnet = create_network(
            client, f"harness-{run}-sshhost", _docker.labels(run, "sshhost"), subnet
        )
        ips, remotes, known = [], [], []
        rights: dict[str, Any] = {"cap_add": ["NET_ADMIN"]}  # iptables in its own namespace
        if fuse:
            rights = {**FUSE, "cap_add": ["NET_ADMIN", *FUSE["cap_add"]]}
        for i in range(1, hosts + 1):
            ip = node_ip(subnet, i)
            endpoint = client.api.create_endpoint_config(ipv4_address=ip)
            container = client.containers.create(
                image,
                name=f"harness-{run}-h{i}",
                hostname=f"h{i}",
                labels=_docker.labels(run, "sshhost", f"h{i}"),
                init=True,
                **rights,
                network=network.name,
                networking_config={network.name: endpoint},
            )
            container.start()
            remote = DockerRemote(container)
            for home, owner in ((f"/home/{USER}", USER), ("/root", "root")):
                remote.upload(Path(f"{key}.pub"), f"{home}/.ssh/authorized_keys", 0o600)
                remote.run(f"chown -R {owner}: {home}/.ssh && chmod 700 {home}/.ssh", sudo=True)
            assert wait_until(partial(sshd_up, remote, ip), 30, 0.2), f"no sshd on {ip}"
            pub = get_text(remote, "/etc/ssh/ssh_host_ed25519_key.pub").split()
            known.append(f"{ip} {pub[0]} {pub[1]}\n")
            ips.append(ip)
            remotes.append(remote)
        known_hosts = tmp / "known_hosts"
        known_hosts.write_text("".join(known))
        yield Lab(
            ips, key, known_hosts, remotes, [installed_packages(r, partly=True) for r in remotes]
        )
    finally:
        cleanup.down(run)  # exactly what carries this lab's run label


def whole_run(lab: Lab, opts: Any, hosts: int | None = None) -> Any:
    """``harness run`` of ``opts`` (``RunOptions``) over SSH on the lab's first ``hosts``
    hosts (all by default), wired as ``--ssh`` wires it; its ``RunOutcome``."""
    from harness import orchestrate
    from harness.terminal import Terminal
    from harness.validate import check_run

    on_lab = opts.with_(
        ssh=True,
        ssh_hosts=lab.hosts(hosts),
        ssh_key=str(lab.key),
        ssh_known_hosts=str(lab.known_hosts),
        ssh_install="upload",
    )
    return orchestrate.run_test(check_run(on_lab), Terminal.silent())


def leftovers(lab: Lab, i: int, process: str) -> list[str]:
    """What runs left on the lab's host ``i`` (``host_leftovers``; empty when clean)."""
    return host_leftovers(lab.docker[i], lab.packages[i], process)


def host_leftovers(remote: Remote, packages: set[str], process: str) -> list[str]:
    """What runs left on a host that had ``packages`` at the start: packages it did not
    have, a run directory (or clock record), the server ``process``, harness firewall
    rules, a policy-rc.d, staged uploads, a JVM's perf data, a FUSE mount or the power-loss
    layer's process (empty when clean)."""
    found = []
    added = installed_packages(remote, partly=True) - packages
    if added:
        found.append(f"packages: {', '.join(sorted(added))}")
    checks = {
        "a run directory": "ls /var/lib/harness 2>/dev/null",
        f"a {process} process": f"pgrep -a -x {process}",
        "firewall rules": "iptables -S | grep harness-",
        "a policy-rc.d": "ls /usr/sbin/policy-rc.d 2>/dev/null",
        "staged files": "ls -d /var/cache/harness-debs-* /tmp/.harness-xfer* 2>/dev/null",
        "JVM perf data": "ls /tmp/hsperfdata_* 2>/dev/null",
        "a FUSE mount": "grep -E ' fuse(\\.[^ ]+)? ' /proc/mounts",
        "a power-loss layer": "pgrep -a -f 'clusters[.]_powerfs[.]mount'",
    }
    for what, cmd in checks.items():
        out = remote.run(cmd, sudo=True).stdout.strip()
        if out:
            found.append(f"{what}: {out}")
    return found


def assert_clean(lab: Lab, process: str) -> None:
    """Every host of the lab is as it was at the start (``leftovers`` finds nothing)."""
    for i in range(len(lab.docker)):
        assert not leftovers(lab, i, process), lab.ips[i]
