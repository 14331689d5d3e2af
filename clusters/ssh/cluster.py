"""The lifecycle every SSH target shares: hosts, packages, a background server, faults, undo.

A node is a whole host, named n1..nN in the order the hosts were given (``cluster.json`` in
the run directory maps names to hosts). ``start`` connects to every host, checks what the
run needs there (root or passwordless sudo, the tools faults use, free ports), installs
the target's packages (``clusters.ssh.packages``), writes its configuration and launcher
under ``/var/lib/harness/<run id>`` and starts the server in the background
(``clusters.ssh.process``), then waits until the cluster serves. With ``power_loss`` (the
power-loss fault) each host is probed first and the run's data directory is served through
the power-loss layer before anything is installed (``clusters.ssh.power``); the cluster is
then ``PowerCuttable``.

``stop`` undoes everything ``start`` did, on every host, whatever state it is in: it
thaws and kills the server, deletes the harness's firewall rules, unmounts the power-loss
layer, removes the run's directory and purges the packages it installed (unless
``keep_packages``). It is safe to call twice or after a failed start, and it tries every
step on every host before reporting what it could not undo.

What runs there is a target's ``ServerSpec`` (``clusters/<target>/server.py``): its
packages, process name, ports, files, argv and probes, with its configuration under the
run's ``conf/`` and its data under ``data/``. The cluster implements ``Cluster``,
``Killable``, ``Pausable`` and the nemeses' ``NodeControl`` (``exec``, ``ip``), plus ``host``
for the host clock nemesis, and ``HasLeader`` for a spec with a leader (``ssh_cluster``
picks the class). It only ever drives a ``Remote``: SSH in a run, a fake in unit tests.
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from clusters._backend import RUN_ID, LeadingMixin, ServerCluster
from clusters._powerfs import node as powerfs
from clusters.remote.base import Exec, Remote, RemoteError, as_root, must, put_text
from clusters.remote.clock_shell import measure_offset
from clusters.remote.hosts import HostSpec
from clusters.server import Launch, Peer, Place, ServerSpec
from clusters.ssh import power
from clusters.ssh.firewall import remove_harness_rules
from clusters.ssh.packages import Installed, InstallFailed, PackageInstaller
from clusters.ssh.process import Layout, RemoteProcess
from core.cluster import ClusterError
from core.writes import write_text

log = logging.getLogger(__name__)

RemoteFactory = Callable[[HostSpec], Remote]
T = TypeVar("T")

TOOLS = ("sh", "bash", "setsid", "nohup", "timeout", "iptables", "dpkg", "date", "tail")
"""Commands every host needs: the launcher, the faults' iptables and probes, packages."""


class SshCluster(ServerCluster):
    """A ``ServerSpec``'s servers on SSH hosts (see the module docstring)."""

    def __init__(
        self,
        server: ServerSpec,
        hosts: list[HostSpec],
        *,
        run_id: str,
        remote: RemoteFactory,
        installer: PackageInstaller | None = None,
        keep_packages: bool = False,
        resolve: Callable[[str], str] | None = None,
        power_loss: bool = False,
    ) -> None:
        if not RUN_ID.fullmatch(run_id):
            raise ClusterError(
                f"Run id {run_id!r} cannot name a directory; use 1-40 letters, "
                "digits, '_', '.' or '-'"
            )
        server.check_size(len(hosts), "hosts")
        self.server = server
        self.name = server.name
        self.run_id = run_id
        self.size = len(hosts)
        self.layout = Layout.for_run(run_id)
        self.place = Place(self.layout.conf, self.layout.data, image=False, run_id=run_id)
        self.keep_packages = keep_packages
        self.power_loss = power_loss
        """Serve the data directory through the power-loss layer (``clusters.ssh.power``)."""
        self.installer = installer or PackageInstaller(
            server.packages, server.services, commands=server.commands
        )
        self._make_remote = remote
        self._resolve = resolve or resolve_ipv4
        self._hosts = {f"n{i}": spec for i, spec in enumerate(hosts, start=1)}
        self._remotes: dict[str, Remote] = {}
        self._procs: dict[str, RemoteProcess] = {}
        self._ips: dict[str, str] = {}
        self._installed: dict[str, Installed] = {}
        self._touched: set[str] = set()
        """Nodes on which start() may have changed something (what stop() undoes)."""

    def launch(self, node: str) -> Launch:
        """What the spec runs on ``node``, with the hosts' addresses."""
        peers = [Peer(n, i, self.ip(n), self.port(n)) for i, n in enumerate(self.nodes(), start=1)]
        return self.server.launch(peers[self.nodes().index(node)], peers, self.place)

    # -- Cluster ----------------------------------------------------------------------

    def nodes(self) -> list[str]:
        """Node names n1..nN, in the order the hosts were given."""
        return list(self._hosts)

    def start(self, run_dir: Path) -> None:
        """Prepare every host, start the servers, return once the cluster serves."""
        self._ips = {n: self._address(n) for n in self._hosts}
        self._each(self._connect_and_check)
        self._touched = set(self._hosts)
        if self.power_loss:
            self._each(self._mount_layer)
        self._each(self._install)
        self._each(self._configure)
        _write_cluster_file(run_dir, self)
        self._each(self._launch)
        self.wait_ready()
        if self.power_loss:  # what the servers wrote while starting is taken as on disk
            self._each(lambda n: powerfs.ask(self.exec, n, "sync", self._site))

    def collect_logs(self, dest: Path) -> None:
        """Copy each node's server log and configuration to ``dest/<node>/``."""
        for node in sorted(self._touched):
            out = dest / node
            out.mkdir(parents=True, exist_ok=True)
            write_text(out / "host.txt", f"{self._hosts[node]}\n")
            paths = {self.layout.log: out / "server.log", self.layout.launcher: out / "start.sh"}
            if self.power_loss:
                paths[self._site.log] = out / "powerfs.log"
            for path in self.launch(node).files if node in self._ips else {}:
                paths[path] = out / "conf" / Path(path).name
            for remote_path, local in paths.items():
                try:
                    self._remote(node).download(remote_path, local)
                except (RemoteError, OSError) as e:
                    log.info("%s: no %s to collect (%s)", node, remote_path, e)

    def stop(self) -> None:
        """Undo everything on every host start() touched; safe to call twice."""
        nodes = sorted(self._touched)
        problems: list[str] = []

        def undo(node: str) -> None:
            problems.extend(self._undo(node))

        with ThreadPoolExecutor(max_workers=max(1, len(nodes))) as pool:
            list(pool.map(undo, nodes))
        self._touched.clear()
        for remote in self._remotes.values():
            remote.close()
        if problems:
            raise ClusterError(
                f"{self.name} over SSH: could not undo everything: " + "; ".join(problems)
            )

    # -- for nemeses and tests ----------------------------------------------------------

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
        """Run ``cmd`` (argv, or a string for ``sh -c``) on ``node``'s host as root; exit
        code and output (stdout then stderr)."""
        result = self._remote(node).run(cmd, sudo=True)
        return result.exit, result.output

    def ip(self, node: str) -> str:
        """The address of ``node``'s host, as the control machine and the peers reach it."""
        self._check_node(node)
        if node not in self._ips:
            self._ips[node] = self._address(node)
        return self._ips[node]

    def host(self, node: str) -> str:
        """The host ``node`` runs on, as the user named it (``user@host:port``)."""
        self._check_node(node)
        return str(self._hosts[node])

    def remote(self, node: str) -> Remote:
        """The remote control of ``node``'s host."""
        return self._remote(node)

    def where(self, node: str) -> str:
        return f"{node} ({self.host(node)})"

    def power_cut(self, node: str) -> dict[str, int]:
        """PowerCuttable: kill -9 the server on ``node`` and have the layer discard what it
        had not fsynced; the bytes discarded per file. ClusterError without the layer."""
        if not self.power_loss:
            raise ClusterError(
                f"The {self.name} cluster on SSH hosts was started without the power-loss "
                "layer; start it with power_loss=True (--nemesis power-loss does)"
            )
        self.kill(node)
        return powerfs.cut(self.exec, node, self._site)

    def log_tail(self, node: str, lines: int = 15) -> str:
        return self._proc(node).log_tail(lines)

    def _signal(self, node: str, sig: str) -> None:
        self._proc(node).signal(sig)

    def _launch(self, node: str) -> None:
        self._proc(node).start()

    def _states(self, node: str) -> list[str]:
        st = self._proc(node).state()
        return [] if st is None else [st.state]

    def clock_offsets(self) -> dict[str, float | None]:
        """Each node's clock minus the control machine's, in seconds (None: no answer)."""
        return self._each(lambda n: measure_offset(self._exec_on(n)))

    # -- internals ----------------------------------------------------------------------

    @property
    def _site(self) -> powerfs.Site:
        return power.site(self.layout)

    def _check_node(self, node: str) -> None:
        if node not in self._hosts:
            raise ClusterError(
                f"No node {node!r} in the {self.name} cluster; nodes: {', '.join(self._hosts)}"
            )

    def _exec_on(self, node: str) -> Exec:
        return as_root(self._remote(node))

    def _address(self, node: str) -> str:
        return self._resolve(self._hosts[node].host)

    def _remote(self, node: str) -> Remote:
        self._check_node(node)
        if node not in self._remotes:
            self._remotes[node] = self._make_remote(self._hosts[node])
        return self._remotes[node]

    def _proc(self, node: str) -> RemoteProcess:
        if node not in self._procs:
            self._procs[node] = RemoteProcess(
                self._remote(node),
                self.server.process,
                self.layout,
                f"{self.name} {node} on {self.host(node)}",
            )
        return self._procs[node]

    def _each(self, fn: Callable[[str], T]) -> dict[str, T]:
        """``fn`` on every node in parallel; the first error is raised after all finish."""
        nodes = list(self._hosts)
        with ThreadPoolExecutor(max_workers=len(nodes)) as pool:
            futures = {n: pool.submit(fn, n) for n in nodes}
        for f in futures.values():
            error = f.exception()
            if error is not None:
                raise error
        return {n: f.result() for n, f in futures.items()}

    def _connect_and_check(self, node: str) -> None:
        """Connect, and refuse a host that lacks what the run needs (one line per host)."""
        remote = self._remote(node)
        sudo = remote.run("true", sudo=True, timeout=30)
        if not sudo.ok:
            raise ClusterError(
                f"{remote.host}: cannot run commands as root "
                f"({sudo.output.strip()}); log in as root or give the user "
                "passwordless sudo (`USER ALL=(ALL) NOPASSWD: ALL` in "
                "/etc/sudoers.d/harness)"
            )
        tools = " ".join(TOOLS)
        missing = remote.run(
            f"for t in {tools}; do command -v $t >/dev/null 2>&1 || echo $t; done",
            sudo=True,
            timeout=30,
        ).stdout.split()
        if missing:
            raise ClusterError(
                f"{remote.host}: missing {', '.join(missing)}; install them "
                "(apt-get install iptables coreutils util-linux bash)"
            )
        busy = self._busy_ports(remote)
        if busy:
            raise ClusterError(
                f"{remote.host}: port(s) {', '.join(map(str, busy))} already in "
                f"use (another {self.name}?); stop it or use other hosts"
            )
        if remote.run(["test", "-e", self.layout.root], timeout=30).ok:
            raise ClusterError(
                f"{remote.host}: {self.layout.root} already exists; a run with "
                "this id is in progress or crashed there"
            )

    def _busy_ports(self, remote: Remote) -> list[int]:
        """Which of the spec's ports something listens on (``ss``; none known without it)."""
        if not self.server.ports:
            return []
        out = remote.run("command -v ss >/dev/null 2>&1 && ss -Hltn || true", timeout=30).stdout
        listening = set()
        for line in out.splitlines():
            words = line.split()
            if len(words) >= 4 and words[3].rsplit(":", 1)[-1].isdigit():
                listening.add(int(words[3].rsplit(":", 1)[-1]))
        return sorted(p for p in self.server.ports if p in listening)

    def _mount_layer(self, node: str) -> None:
        power.mount(self._remote(node), self.exec, node, self.layout)

    def _install(self, node: str) -> None:
        try:
            record = None if self.keep_packages else self.layout.install_record
            self._installed[node] = self.installer.install(self._remote(node), record)
        except InstallFailed as e:
            self._installed[node] = e.partial  # stop() purges what did get installed
            raise

    def _configure(self, node: str) -> None:
        remote = self._remote(node)
        lay = self.layout
        must(
            remote,
            ["mkdir", "-p", lay.conf, lay.data, lay.log_dir],
            f"creating {lay.root}",
            sudo=True,
        )
        launch = self.launch(node)
        for path, text in launch.files.items():
            put_text(remote, path, text)
        self._proc(node).install(launch)

    def _undo(self, node: str) -> list[str]:
        """Undo start() on one host; what could not be undone."""
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("stop the server", lambda: self._stop_server(node)),
            ("remove firewall rules", lambda: remove_harness_rules(self._remote(node))),
        ]
        if self.power_loss:  # after the server: nothing of it holds a file there any more
            remote = self._remote(node)
            steps.append(("unmount the power-loss layer", lambda: power.down(remote, self.layout)))
        installed = self._installed.pop(node, None)
        if installed is not None and not self.keep_packages:
            steps.append(
                ("purge packages", lambda: self.installer.remove(self._remote(node), installed))
            )
        steps.append(
            (
                f"remove {self.layout.root}",  # last: it holds the install record
                lambda: must(
                    self._remote(node),
                    ["rm", "-rf", self.layout.root],
                    f"removing {self.layout.root}",
                    sudo=True,
                ),
            )
        )
        problems = []
        for what, step in steps:
            try:
                step()
            except Exception as e:  # undo the rest even when one step fails
                problems.append(f"{node} ({self.host(node)}): could not {what}: {e}")
        return problems

    def _stop_server(self, node: str) -> None:
        proc = self._proc(node)
        if proc.state() is None:
            return
        proc.signal("CONT")  # a paused server still dies of SIGKILL; thaw it anyway
        self.kill(node)


class LeadingSshCluster(LeadingMixin, SshCluster):
    """An ``SshCluster`` whose spec has a leader; also HasLeader."""


def ssh_cluster(server: ServerSpec, hosts: list[HostSpec], **options: Any) -> SshCluster:
    """The (not started) cluster of ``server`` on ``hosts`` (``SshCluster``'s options)."""
    cls = LeadingSshCluster if server.has_leader else SshCluster
    return cls(server, hosts, **options)


def resolve_ipv4(host: str) -> str:
    """The IPv4 address of ``host`` as this machine resolves it; ClusterError if it has none."""
    try:
        return str(socket.getaddrinfo(host, None, socket.AF_INET, socket.SOCK_STREAM)[0][4][0])
    except OSError as e:
        raise ClusterError(
            f"Cannot resolve {host} to an IPv4 address ({e.strerror or e}); "
            "name the host by a resolvable name or its address"
        ) from None


def _write_cluster_file(run_dir: Path, cluster: SshCluster) -> None:
    """``run_dir/cluster.json``: which hosts this run used, what it installed, clock offsets."""
    info: dict[str, Any] = {
        "target": cluster.name,
        "backend": "ssh",
        "run_id": cluster.run_id,
        "directory": cluster.layout.root,
        "power_loss": cluster.power_loss,
        "nodes": {
            n: {
                "host": cluster.host(n),
                "ip": cluster.ip(n),
                "installed": cluster._installed.get(n, Installed()).packages,
                "install": cluster._installed.get(n, Installed()).how,
            }
            for n in cluster.nodes()
        },
        "clock_offsets_s": cluster.clock_offsets(),
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text(run_dir / "cluster.json", json.dumps(info, indent=2) + "\n")
