"""The lifecycle every SSH target shares: hosts, packages, a background server, faults, undo.

A node is a whole host, named n1..nN in the order the hosts were given (``cluster.json`` in
the run directory maps names to hosts). ``start`` connects to every host, checks what the
run needs there (root or passwordless sudo, the tools faults use, free ports), installs
the target's packages (``clusters.ssh.packages``), writes its configuration and launcher
under ``/var/lib/harness/<run id>`` and starts the server in the background
(``clusters.ssh.process``), then waits until the cluster serves.

``stop`` undoes everything ``start`` did, on every host, whatever state it is in: it
thaws and kills the server, deletes the harness's firewall rules, removes the run's
directory and purges the packages it installed (unless ``keep_packages``). It is safe to
call twice or after a failed start, and it tries every step on every host before
reporting what it could not undo.

A target subclasses ``SshCluster`` and fills in the hooks, like a ``DockerCluster``: its
packages, process name, ports, configuration files, server command and health probe (see
``clusters/ssh/etcd.py``). It implements ``Cluster``, ``Killable``, ``Pausable`` and the
nemeses' ``NodeControl`` (``exec``, ``ip``), plus ``host`` for the host clock nemesis. It
only ever drives a ``Remote``: SSH in a run, a fake in unit tests.
"""

from __future__ import annotations

import json
import logging
import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from clusters._probe import wait_until
from clusters.docker_cluster import RUN_ID
from clusters.remote.base import Exec, Remote, RemoteError, as_root, must, put_text
from clusters.remote.clock import measure_offset
from clusters.remote.hosts import HostSpec
from clusters.ssh.firewall import remove_harness_rules
from clusters.ssh.packages import Installed, InstallFailed, PackageInstaller
from clusters.ssh.process import Layout, RemoteProcess
from core.cluster import ClusterError, server_version

log = logging.getLogger(__name__)

RemoteFactory = Callable[[HostSpec], Remote]
T = TypeVar("T")

TOOLS = ("sh", "bash", "setsid", "nohup", "timeout", "iptables", "dpkg", "date", "tail")
"""Commands every host needs: the launcher, the faults' iptables and probes, packages."""


class SshCluster:
    """Common lifecycle of an SSH target (see the module docstring)."""

    name: str = "?"
    process: ClassVar[str]
    """The server's process name (``/proc/PID/comm``)."""
    port: ClassVar[int]
    """The client port endpoints() reports."""
    ports: ClassVar[tuple[int, ...]] = ()
    """Every port the server listens on: must be free on the host before it starts."""
    packages: ClassVar[tuple[str, ...]] = ()
    """Debian packages that provide the server."""
    services: ClassVar[tuple[str, ...]] = ()
    """The packages' own systemd units, kept from starting (they would take the ports)."""
    commands: ClassVar[dict[str, str]] = {}
    """Package -> command: the command on a host's PATH counts as the package installed."""
    start_timeout: ClassVar[float] = 60.0
    version_argv: ClassVar[tuple[str, ...] | None] = None
    """The command whose first line of output names the server's version (on n1)."""
    version_prefix: ClassVar[str] = ""

    def __init__(
        self,
        hosts: list[HostSpec],
        *,
        run_id: str,
        remote: RemoteFactory,
        installer: PackageInstaller | None = None,
        keep_packages: bool = False,
        resolve: Callable[[str], str] | None = None,
    ) -> None:
        if not RUN_ID.fullmatch(run_id):
            raise ClusterError(
                f"Run id {run_id!r} cannot name a directory; use 1-40 letters, "
                "digits, '_', '.' or '-'"
            )
        self.check_size_of(len(hosts))
        self.run_id = run_id
        self.size = len(hosts)
        self.layout = Layout.for_run(run_id)
        self.keep_packages = keep_packages
        self.installer = installer or PackageInstaller(
            self.packages, self.services, commands=self.commands
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

    # -- hooks for targets ------------------------------------------------------------

    @classmethod
    def check_size_of(cls, n: int) -> None:
        """Raise ClusterError when ``n`` hosts make no sense (default: odd, 1 to 7)."""
        if n < 1 or n > 7 or n % 2 == 0:
            raise ClusterError(f"{cls.name} needs an odd number of hosts from 1 to 7, not {n}")

    def node_files(self, node: str) -> dict[str, str]:
        """Configuration files to write on ``node``'s host (absolute path -> content)."""
        return {}

    def server_command(self, node: str) -> list[str]:
        """The server's argv on ``node``."""
        raise NotImplementedError

    def server_env(self, node: str) -> dict[str, str]:
        """Extra environment of the server on ``node``."""
        return {}

    def is_healthy(self, node: str) -> bool:
        """Whether ``node``'s server answers its probe from the control machine now."""
        raise NotImplementedError

    def is_ready(self) -> bool:
        """Whether the whole cluster serves (default: every node healthy)."""
        return all(self.is_healthy(n) for n in self._hosts)

    # -- Cluster ----------------------------------------------------------------------

    def nodes(self) -> list[str]:
        """Node names n1..nN, in the order the hosts were given."""
        return list(self._hosts)

    def endpoints(self) -> dict[str, str]:
        """Node name -> "ip:port" of its client port."""
        return {n: f"{self.ip(n)}:{self.port}" for n in self._hosts}

    def start(self, run_dir: Path) -> None:
        """Prepare every host, start the servers, return once the cluster serves."""
        self._ips = {n: self._address(n) for n in self._hosts}
        self._each(self._connect_and_check)
        self._touched = set(self._hosts)
        self._each(self._install)
        self._each(self._configure)
        _write_cluster_file(run_dir, self)
        self._each(lambda n: self._proc(n).start())
        self._wait_ready()

    def collect_logs(self, dest: Path) -> None:
        """Copy each node's server log and configuration to ``dest/<node>/``."""
        for node in sorted(self._touched):
            out = dest / node
            out.mkdir(parents=True, exist_ok=True)
            (out / "host.txt").write_text(f"{self._hosts[node]}\n")
            paths = {self.layout.log: out / "server.log", self.layout.launcher: out / "start.sh"}
            for path in self.node_files(node) if node in self._ips else {}:
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

    # -- Killable and Pausable ----------------------------------------------------------

    def kill(self, node: str) -> None:
        """kill -9 the server on ``node`` and wait until it is gone."""
        self._proc(node).signal("KILL")
        if not wait_until(lambda: not self.is_running(node), 10, 0.1):
            raise ClusterError(
                f"{self.process} on {node} ({self.host(node)}) survived kill -9 for 10 s"
            )

    def restart(self, node: str) -> None:
        """Start the server on ``node`` again (a no-op while it runs); does not wait."""
        if not self.is_running(node):
            self._proc(node).start()

    def pause(self, node: str) -> None:
        """SIGSTOP the server process on ``node`` (the host and its network stay up)."""
        self._proc(node).signal("STOP")

    def resume(self, node: str) -> None:
        """SIGCONT the server process on ``node``."""
        self._proc(node).signal("CONT")

    def is_paused(self, node: str) -> bool:
        """Whether the server on ``node`` is stopped (state T in /proc)."""
        st = self._proc(node).state()
        return st is not None and st.paused

    def is_running(self, node: str) -> bool:
        """Whether a (possibly paused) server process exists on ``node``."""
        return self._proc(node).state() is not None

    # -- for nemeses and tests ----------------------------------------------------------

    def version(self) -> str:
        """The server's version as the package says it (``version_argv`` on n1)."""
        return server_version(self, self.version_argv, self.version_prefix)

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

    def wait_healthy(self, node: str, timeout: float = 60.0) -> None:
        """Wait until ``node`` answers its probe; ClusterError with its log tail otherwise."""
        if not wait_until(lambda: self.is_healthy(node), timeout, 0.2):
            raise ClusterError(
                f"{self.name} node {node} ({self.host(node)}) not healthy after "
                f"{timeout:.0f}s; its log ends with: {self.log_tail(node)}"
            )

    def log_tail(self, node: str, lines: int = 15) -> str:
        return self._proc(node).log_tail(lines)

    def clock_offsets(self) -> dict[str, float | None]:
        """Each node's clock minus the control machine's, in seconds (None: no answer)."""
        return self._each(lambda n: measure_offset(self._exec_on(n)))

    # -- internals ----------------------------------------------------------------------

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
                self.process,
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
        """Which of ``ports`` something already listens on (``ss``; none known without it)."""
        if not self.ports:
            return []
        out = remote.run("command -v ss >/dev/null 2>&1 && ss -Hltn || true", timeout=30).stdout
        listening = set()
        for line in out.splitlines():
            words = line.split()
            if len(words) >= 4 and words[3].rsplit(":", 1)[-1].isdigit():
                listening.add(int(words[3].rsplit(":", 1)[-1]))
        return sorted(p for p in self.ports if p in listening)

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
        for path, text in self.node_files(node).items():
            put_text(remote, path, text)
        self._proc(node).install(self.server_command(node), self.server_env(node))

    def _undo(self, node: str) -> list[str]:
        """Undo start() on one host; what could not be undone."""
        steps: list[tuple[str, Callable[[], Any]]] = [
            ("stop the server", lambda: self._stop_server(node)),
            ("remove firewall rules", lambda: remove_harness_rules(self._remote(node))),
        ]
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

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        next_liveness = time.monotonic() + 1.0
        while not self.is_ready():
            now = time.monotonic()
            if now >= next_liveness:
                next_liveness = now + 1.0
                for node in self._hosts:
                    if not self.is_running(node):
                        raise ClusterError(
                            f"{self.name} server on {node} ({self.host(node)}) exited during "
                            f"start; its log ends with: {self.log_tail(node)}"
                        )
            if now >= deadline:
                lagging = [n for n in self._hosts if not self.is_healthy(n)] or list(self._hosts)
                tails = "; ".join(f"{n}: {self.log_tail(n)}" for n in lagging)
                raise ClusterError(
                    f"{self.name} cluster not healthy after "
                    f"{self.start_timeout:.0f}s; logs end with: {tails}"
                )
            time.sleep(0.2)


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
    (run_dir / "cluster.json").write_text(json.dumps(info, indent=2) + "\n")
