"""The local-process backend: a ``ServerSpec``'s servers as processes of this machine.

A node is one process of the control machine on loopback, with a client port of its own
(``stable_port``: below the kernel's ephemeral range, so no other process takes it while
the node is down, and a restart comes back on it) and a folder of its own in the run
directory, ``<run_dir>/<node>/``: its configuration and data (the spec's ``Place``) and
``server.log`` (its stdout and stderr, appended across restarts, each start and the
stop said in a line of the harness's, the stop's saying whether the process ran until
then or had ended, and whether the harness had killed it). Nothing is written
outside that folder, nor through a link (``core.writes``). A node is started with the
spec's argv and environment (over the harness's own) in its folder, killed, paused and
continued by its pid, and its state read from ``/proc/<pid>/stat``.

``exec`` is refused: a node is a process, not a host, so a command "on" it would run on the
control machine itself, as the harness's user, where an iptables rule or a clock offset
would hit everything else; the faults that need it (network, clock, power loss) are what
a local target lacks (``TargetSpec.abilities``). ``stop`` ends every process it started
(thawed first, then terminated, then killed), and each dies with the harness
(``popen_tied``) should the harness itself be killed, and only then: a node the kill
fault restarts from the nemesis thread outlives that thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import signal
import subprocess
from datetime import UTC, datetime
from pathlib import Path

from clusters._backend import LeadingMixin, ServerCluster
from clusters._probe import wait_until
from clusters.server import Launch, Peer, Place, ServerSpec
from core.cluster import ClusterError
from core.procutil import popen_tied
from core.writes import make_dirs, open_append, write_bytes, write_text
from workloads.common.service import stable_port

log = logging.getLogger("clusters.local")

LOOPBACK = "127.0.0.1"
SERVER_LOG = "server.log"
"""Each node's log, in its folder."""


class LocalCluster(ServerCluster):
    """A ``ServerSpec``'s servers as local processes (see the module docstring);
    Cluster, Killable, Pausable (``local_cluster`` adds HasLeader for a spec with one)."""

    def __init__(self, server: ServerSpec, *, nodes: int | None = None) -> None:
        size = server.default_nodes if nodes is None else nodes
        server.check_size(size)
        names = server.node_names or tuple(f"n{i}" for i in range(1, size + 1))
        if len(names) != size:
            raise ClusterError(
                f"{server.name} runs {len(names)} node(s) ({', '.join(names)}), not {size}: "
                "leave out --nodes"
            )
        self.server = server
        self.name = server.name
        self.run_id = secrets.token_hex(3)
        self.place = Place("", "", image=False, run_id=self.run_id)
        self._names = list(names)
        self._ports: dict[str, int] = {}
        self._procs: dict[str, subprocess.Popen[bytes]] = {}
        self._killed: set[str] = set()  # nodes whose process the harness killed
        self._run_dir: Path | None = None

    # -- Cluster ----------------------------------------------------------------------

    def nodes(self) -> list[str]:
        return list(self._names)

    def start(self, run_dir: Path) -> None:
        """Give each node its port and folder, write its files, start its process, and
        return once the cluster serves (ClusterError with the log tails otherwise).
        The folder is made absolute first (not resolved: a link is never followed), since
        each node's process runs in its own folder and a relative path would lead there."""
        run_dir = Path(os.path.abspath(run_dir))
        self._run_dir = run_dir
        run_dir.mkdir(parents=True, exist_ok=True)
        for node in self._names:
            port = stable_port(LOOPBACK)
            while port and port in self._ports.values():  # free, but another node's
                port = stable_port(LOOPBACK)
            if not port:
                raise ClusterError(
                    f"no free port below the ephemeral range for {self.name} node {node}; "
                    "free one, or lower the range's start (/proc/sys/net/ipv4/ip_local_port_range)"
                )
            self._ports[node] = port
        for node in self._names:
            folder = make_dirs(self.folder(node), root=run_dir)
            for path, text in self.launch(node).files.items():
                write_text(self._inside(node, Path(path)), text, root=folder, parents=True)
        for node in self._names:
            self._launch(node)
        self.wait_ready()

    def launch(self, node: str) -> Launch:
        """What the spec runs on ``node`` (after ``start`` gave it its port)."""
        peers = [Peer(n, i, LOOPBACK, self.port(n)) for i, n in enumerate(self._names, 1)]
        here = str(self.folder(node))
        place = Place(here, here, image=False, run_id=self.run_id)
        launch = self.server.launch(peers[self._names.index(node)], peers, place)
        if launch.prelude:
            raise ClusterError(
                f"{self.name}'s launch has shell lines to run first, which the local backend "
                "does not run; give its server a launch without a prelude"
            )
        return launch

    def folder(self, node: str) -> Path:
        """``node``'s folder in the run directory."""
        self._check(node)
        if self._run_dir is None:
            raise ClusterError(f"the {self.name} cluster has not been started; call start()")
        return self._run_dir / node

    def collect_logs(self, dest: Path) -> None:
        """Copy each node's log to ``dest/<node>/`` and the files it was given to
        ``dest/<node>/conf/`` (its data stays in its folder of the run directory)."""
        if self._run_dir is None or len(self._ports) < len(self._names):
            return  # not started, or stopped before its nodes had ports
        dest.mkdir(parents=True, exist_ok=True)
        for node in self._names:
            sources = {self.folder(node) / SERVER_LOG: dest / node / SERVER_LOG}
            for path in self.launch(node).files:
                sources[self._inside(node, Path(path))] = dest / node / "conf" / Path(path).name
            for src, out in sources.items():
                try:
                    data = src.read_bytes()
                except FileNotFoundError:
                    continue
                write_bytes(out, data, root=dest, parents=True)

    def stop(self) -> None:
        """End every process this cluster started, saying in each node's log how it
        ended; safe to call twice or before start."""
        ended = {}
        for node, proc in self._procs.items():
            ended[node] = proc.poll()
            _end(proc)
        self._procs.clear()
        for node, code in ended.items():
            self._note_end(node, code)

    def _note_end(self, node: str, code: int | None) -> None:
        """The last line of ``node``'s log: its process ran until the stop (``code``
        None), or had ended before it. One that ended though the harness never killed
        it is a server that vanished during the run: a warning in the harness's log too."""
        stamp, process = _stamp(), self.server.process
        if code is None:
            line = f"stopped {process} at {stamp}: it ran until the stop"
        else:
            line = f"{process} had ended ({_exit_words(code)}) before the stop at {stamp}"
            if node not in self._killed:
                line += ", and the harness had not killed it"
                log.warning("%s node %s %s", self.name, node, line)
        folder = self.folder(node)
        with open_append(folder / SERVER_LOG, root=folder) as out:
            out.write(f"=== harness: {line}\n".encode())

    # -- transport for ServerCluster ----------------------------------------------------

    def ip(self, node: str) -> str:
        self._check(node)
        return LOOPBACK

    def port(self, node: str) -> int:
        """``node``'s own client port (given at ``start``)."""
        self._check(node)
        if node not in self._ports:
            raise ClusterError(f"the {self.name} cluster has not been started; call start()")
        return self._ports[node]

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
        """Refused: a local node is a process of this machine, not a host (see the
        module docstring)."""
        raise ClusterError(
            f"{self.name} node {node} is a process of this machine, not a host: the harness "
            "runs no command on it (faults that need one need a target in Docker or --ssh)"
        )

    def log_tail(self, node: str, lines: int = 15) -> str:
        try:
            text = (self.folder(node) / SERVER_LOG).read_bytes()[-16384:].decode(errors="replace")
        except OSError:
            return "(no log)"
        tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
        return " | ".join(tail)

    def pause(self, node: str) -> None:
        """SIGSTOP ``node``'s process and return once ``/proc`` says it stopped (or it
        is gone), so the pause fault's proof reads what the signal did."""
        super().pause(node)
        wait_until(lambda: self.is_paused(node) or not self.is_running(node), 2.0, 0.005)

    def resume(self, node: str) -> None:
        """SIGCONT ``node``'s process and return once ``/proc`` says it runs again."""
        super().resume(node)
        wait_until(lambda: not self.is_paused(node), 2.0, 0.005)

    def _launch(self, node: str) -> None:
        launch = self.launch(node)
        folder = self.folder(node)
        out = open_append(folder / SERVER_LOG, root=folder)
        self._killed.discard(node)
        try:
            out.write(f"=== harness: starting {self.server.process} at {_stamp()}\n".encode())
            self._procs[node] = popen_tied(  # a kill -9 of the harness takes it along
                launch.argv,
                cwd=folder,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env={**os.environ, **launch.env},
            )
        except OSError as e:
            raise ClusterError(f"{self.name} node {node} did not start: {e}") from None
        finally:
            out.close()  # the process has its own

    def _signal(self, node: str, sig: str) -> None:
        self._check(node)
        proc = self._procs.get(node)
        if proc is not None and proc.poll() is None:
            if sig == "KILL":
                self._killed.add(node)
            with contextlib.suppress(ProcessLookupError):
                os.kill(proc.pid, signal.Signals[f"SIG{sig}"])

    def _states(self, node: str) -> list[str]:
        self._check(node)
        proc = self._procs.get(node)
        if proc is None or proc.poll() is not None:  # poll() reaps a killed one
            return []
        try:
            stat = Path(f"/proc/{proc.pid}/stat").read_text()
        except OSError:
            return []
        state = stat[stat.rindex(")") + 2]
        return [] if state in "ZX" else [state]

    def _check(self, node: str) -> None:
        if node not in self._names:
            raise ClusterError(
                f"No node {node!r} in the {self.name} cluster; nodes: {', '.join(self._names)}"
            )

    def _inside(self, node: str, path: Path) -> Path:
        """``path`` (a launch's file) when it lies in ``node``'s folder; ClusterError
        otherwise: the backend writes nothing outside the run directory."""
        folder = self.folder(node)
        full = path if path.is_absolute() else folder / path
        if ".." in full.parts or not full.is_relative_to(folder):
            raise ClusterError(
                f"{self.name}'s launch writes {path}, outside node {node}'s folder {folder}; "
                "a local server's files must lie in its Place"
            )
        return full


class LeadingLocalCluster(LeadingMixin, LocalCluster):
    """A ``LocalCluster`` whose spec has a leader; also HasLeader."""


def local_cluster(server: ServerSpec, nodes: int | None = None) -> LocalCluster:
    """The (not started) local cluster of ``server``."""
    cls = LeadingLocalCluster if server.has_leader else LocalCluster
    return cls(server, nodes=nodes)


def _stamp() -> str:
    """Now, in UTC, as the harness's lines in a node's log say it."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _exit_words(code: int) -> str:
    """A process's return code as words: ``exit code 3``, ``signal SIGKILL``."""
    if code >= 0:
        return f"exit code {code}"
    try:
        return f"signal {signal.Signals(-code).name}"
    except ValueError:
        return f"signal {-code}"


def _end(proc: subprocess.Popen[bytes], timeout: float = 5.0) -> None:
    """Thaw, terminate and reap ``proc``; kill it if it lingers."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGCONT)
            proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
