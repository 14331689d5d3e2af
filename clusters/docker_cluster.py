"""The lifecycle every Docker target shares: nodes, server process, faults, logs, teardown.

A node is a container on the cluster's internal network, at a fixed address, that only runs
``sleep infinity`` under an init. The server runs beside it, started by ``docker exec`` of a
launcher script written into the node (``/harness/start.sh``, output appended to
``/var/log/harness/server.log``). Killing and restarting the server thus keeps the node, its
network namespace and any iptables rules a nemesis put there; data lives on a tmpfs at
``/data`` that survives the server's restarts (not the node's removal).

A target subclasses ``DockerCluster`` and fills in a few hooks: its configuration files, the
server command, and a host-side health probe (see ``clusters/etcd/cluster.py`` for the
shortest one). Everything created is labelled (``clusters._docker``) and ``stop`` removes
exactly what carries this run's and target's labels.
"""

from __future__ import annotations

import io
import json
import logging
import re
import shlex
import tarfile
import time
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from clusters import _docker
from clusters._network import create_network, node_ip
from clusters._probe import wait_until
from core.cluster import ClusterError, server_version

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

    from clusters.spec import ClusterOptions

log = logging.getLogger(__name__)

CONF_DIR = "/harness"
LOG_DIR = "/var/log/harness"
DATA_DIR = "/data"
LAUNCHER = f"{CONF_DIR}/start.sh"
SERVER_LOG = f"{LOG_DIR}/server.log"
FAKETIME_LIB = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
FAKETIME_FILE = "/tmp/faketime"
"""A nemesis writes an offset such as ``+20`` here to move the server's clock."""
FAKETIME_ENV = {
    "LD_PRELOAD": FAKETIME_LIB,
    "FAKETIME_TIMESTAMP_FILE": FAKETIME_FILE,
    "FAKETIME_NO_CACHE": "1",
    "FAKETIME_DONT_FAKE_MONOTONIC": "1",
    # Without this, trixie's libfaketime (0.9.10, 2024-06 snapshot) still rewrites the
    # timeouts of monotonic pthread_cond_timedwait calls, and a JVM's timed waits return at
    # once: each idle ZooKeeper server spun about a core and a 3-node ensemble on 2 cores
    # never formed. With it: normal CPU, and +/- offsets still move the JVM's wall clock.
    "FAKETIME_FORCE_MONOTONIC_FIX": "0",
}
"""The server's environment with ``faketime``: only the wall clock is faked."""

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
"""Run ids name containers and networks, so they must be valid Docker names."""

C = TypeVar("C", bound="DockerCluster")


@dataclass(frozen=True, slots=True)
class Node:
    """One node: its name (n1, n2...), 1-based index, fixed address and container name."""

    name: str
    index: int
    ip: str
    container: str


class DockerCluster:
    """Common lifecycle of a Docker target; implements Cluster, Killable and Pausable.

    Subclasses set the class attributes and override ``node_files``, ``server_command``
    and ``is_healthy`` (plus ``launch_prelude``/``is_ready``/``check_size`` when needed).
    """

    name: str = "?"
    """The target's name (also the ``harness.target`` label)."""
    image_name: ClassVar[str]
    """The image definition it runs (``clusters/<image_name>/``)."""
    process: ClassVar[str]
    """The server's process name, for ``pkill -x``/``pgrep -x``."""
    port: ClassVar[int]
    """The client port endpoints() reports."""
    default_nodes: ClassVar[int] = 3
    faketime_default: ClassVar[bool] = False
    start_timeout: ClassVar[float] = 60.0
    """Seconds from launching the servers to healthy before start() gives up."""
    version_argv: ClassVar[tuple[str, ...] | None] = None
    """The command whose first line of output names the server's version (on n1)."""
    version_prefix: ClassVar[str] = ""

    def __init__(
        self,
        *,
        run_id: str,
        nodes: int | None = None,
        image: str | None = None,
        faketime: bool | None = None,
        subnet: str | None = None,
    ) -> None:
        if not RUN_ID.fullmatch(run_id):
            raise ClusterError(
                f"Run id {run_id!r} cannot name containers; use 1-40 letters, "
                "digits, '_', '.' or '-', starting with a letter or digit"
            )
        self.size = self.default_nodes if nodes is None else nodes
        self.check_size(self.size)
        self.run_id = run_id
        self.image = image
        self.faketime = self.faketime_default if faketime is None else faketime
        self.subnet = subnet
        self.network_name = f"harness-{run_id}-{self.name}"
        self._nodes: dict[str, Node] = {}
        self._client: docker.DockerClient | None = None

    @classmethod
    def from_options(cls: type[C], options: ClusterOptions) -> C:
        """The cluster for the registry's options (see ``clusters.spec``)."""
        return cls(
            run_id=options.run_id,
            nodes=options.nodes,
            image=options.image,
            faketime=options.faketime,
        )

    # -- hooks for targets ------------------------------------------------------------

    def check_size(self, n: int) -> None:
        """Raise ClusterError when ``n`` nodes make no sense (default: odd, 1 to 7)."""
        if n < 1 or n > 7 or n % 2 == 0:
            raise ClusterError(f"{self.name} needs an odd number of nodes from 1 to 7, not {n}")

    def node_files(self, node: Node) -> dict[str, str]:
        """Configuration files to write into ``node`` (absolute path -> content)."""
        return {}

    def launch_prelude(self, node: Node) -> list[str]:
        """Shell lines the launcher runs before starting the server (mkdir, env...)."""
        return []

    def server_command(self, node: Node) -> list[str]:
        """The server's argv on ``node``."""
        raise NotImplementedError

    def is_healthy(self, node: str) -> bool:
        """Whether ``node``'s server answers its probe from the host now."""
        raise NotImplementedError

    def is_ready(self) -> bool:
        """Whether the whole cluster serves (default: every node healthy)."""
        return all(self.is_healthy(n) for n in self._nodes)

    # -- Cluster ----------------------------------------------------------------------

    def nodes(self) -> list[str]:
        """Node names, n1..nN."""
        return [f"n{i}" for i in range(1, self.size + 1)]

    def endpoints(self) -> dict[str, str]:
        """Node name -> "ip:port" of its client port (reachable from the host)."""
        return {n.name: f"{n.ip}:{self.port}" for n in self._nodes.values()}

    def start(self, run_dir: Path) -> None:
        """Create network and nodes, launch the servers, return once the cluster serves."""
        from docker.errors import DockerException

        self._client = _docker.connect()
        try:
            self._start(self._client, run_dir)
        except DockerException as e:
            explanation = getattr(e, "explanation", None) or str(e)
            raise ClusterError(
                f"Starting {self.name} failed in Docker: {explanation}; "
                "`harness clusters down` removes earlier runs' leftovers"
            ) from None

    def _start(self, client: docker.DockerClient, run_dir: Path) -> None:
        from clusters.images import ensure_image

        image = self.image or ensure_image(self.image_name, log.info, client=client)
        if self.image:
            self._check_image(client, self.image)
        network, subnet = create_network(
            client, self.network_name, _docker.labels(self.run_id, self.name), self.subnet
        )
        self.layout(subnet)
        _write_cluster_file(run_dir, self, image)
        with ThreadPoolExecutor(max_workers=len(self._nodes)) as pool:
            list(
                pool.map(
                    lambda n: self._create_node(client, image, network.name, n),
                    self._nodes.values(),
                )
            )
            list(pool.map(lambda n: self._launch(n.name), self._nodes.values()))
        self._wait_ready()

    def layout(self, subnet: str) -> list[Node]:
        """Give the nodes their addresses in ``subnet`` (``start`` does it once it has one)."""
        self.subnet = subnet
        self._nodes = {
            name: Node(name, i, node_ip(subnet, i), f"{self.network_name}-{name}")
            for i, name in enumerate(self.nodes(), start=1)
        }
        return list(self._nodes.values())

    def collect_logs(self, dest: Path) -> None:
        """Copy each node's log directory and configuration to ``dest/<node>/``."""
        if self._client is None:
            return
        from docker.errors import APIError

        for node in self._nodes.values():
            out = dest / node.name
            out.mkdir(parents=True, exist_ok=True)
            for src, sub in ((LOG_DIR, "."), (CONF_DIR, "conf")):
                try:
                    stream, _ = self._client.api.get_archive(node.container, src)
                    _extract(b"".join(stream), out / sub)
                except APIError:
                    continue

    def stop(self) -> None:
        """Remove this run's nodes and network; safe to call twice or after a failed start."""
        if self._client is None:
            return
        from docker.errors import NotFound

        client = self._client
        filters = {
            "label": [f"{_docker.LABEL_RUN}={self.run_id}", f"{_docker.LABEL_TARGET}={self.name}"]
        }
        containers = client.containers.list(all=True, filters=filters)

        def remove(c: Container) -> None:
            try:
                c.remove(force=True)
            except NotFound:
                pass

        if containers:
            with ThreadPoolExecutor(max_workers=len(containers)) as pool:
                list(pool.map(remove, containers))
        for net in client.networks.list(filters=filters):
            try:
                net.remove()
            except NotFound:
                pass

    # -- Killable and Pausable ----------------------------------------------------------

    def kill(self, node: str) -> None:
        """kill -9 the server on ``node`` and wait until it is gone."""
        self.exec(node, ["pkill", "-9", "-x", self.process])
        if not wait_until(lambda: not self.is_running(node), 10, 0.05):
            raise ClusterError(f"{self.process} on {node} survived kill -9 for 10 s")

    def restart(self, node: str) -> None:
        """Start the server on ``node`` again (a no-op while it runs); does not wait."""
        if not self.is_running(node):
            self._launch(node)

    def pause(self, node: str) -> None:
        """SIGSTOP the server process on ``node`` (not the node: its network stays up)."""
        self.exec(node, ["pkill", "-STOP", "-x", self.process])

    def resume(self, node: str) -> None:
        """SIGCONT the server process on ``node``."""
        self.exec(node, ["pkill", "-CONT", "-x", self.process])

    def is_paused(self, node: str) -> bool:
        """Whether the server on ``node`` is stopped (state T in /proc)."""
        states = self._states(node)
        return bool(states) and all(s in "Tt" for s in states)

    def is_running(self, node: str) -> bool:
        """Whether a (possibly paused) server process exists on ``node``."""
        return bool(self._states(node))

    def version(self) -> str:
        """The server's version as its image says it (``version_argv`` on n1)."""
        return server_version(self, self.version_argv, self.version_prefix)

    # -- for nemeses and tests ----------------------------------------------------------

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
        """Run ``cmd`` (argv, or a string for ``sh -c``) in ``node``; exit code and output.

        It runs in the node's namespaces (network included), as root with NET_ADMIN, so
        ``iptables`` works there. Output is stdout and stderr together.
        """
        argv = ["sh", "-c", cmd] if isinstance(cmd, str) else cmd
        result = self._container(node).exec_run(argv)
        output = result.output.decode(errors="replace") if result.output else ""
        return int(result.exit_code or 0), output

    def pid(self, node: str) -> int:
        """The host pid of ``node``'s init, for ``nsenter -t PID -n`` from the host."""
        container = self._container(node)
        container.reload()
        return int(container.attrs["State"]["Pid"])

    def ip(self, node: str) -> str:
        """The fixed address of ``node`` on the cluster network."""
        return self._node(node).ip

    def wait_healthy(self, node: str, timeout: float = 60.0) -> None:
        """Wait until ``node`` answers its probe; ClusterError with its log tail otherwise."""
        if not wait_until(lambda: self.is_healthy(node), timeout, 0.2):
            raise ClusterError(
                f"{self.name} node {node} not healthy after {timeout:.0f}s; "
                f"its log ends with: {self.log_tail(node)}"
            )

    def log_tail(self, node: str, lines: int = 15) -> str:
        """The last ``lines`` lines of the server log of ``node``, joined with " | "."""
        _, out = self.exec(node, ["tail", "-n", str(lines), SERVER_LOG])
        return " | ".join(line.strip() for line in out.splitlines() if line.strip())

    # -- internals ----------------------------------------------------------------------

    def _node(self, node: str) -> Node:
        if node not in self._nodes:
            known = ", ".join(self._nodes) or "none: not started"
            raise ClusterError(f"No node {node!r} in the {self.name} cluster; nodes: {known}")
        return self._nodes[node]

    def _container(self, node: str) -> Container:
        from docker.errors import NotFound

        if self._client is None:
            raise ClusterError(f"The {self.name} cluster is not started; call start() first")
        name = self._node(node).container
        try:
            return self._client.containers.get(name)
        except NotFound:
            raise ClusterError(
                f"Container {name} of node {node} is gone (stopped, or removed "
                "by `harness clusters down`); start the cluster again"
            ) from None

    def _create_node(
        self, client: docker.DockerClient, image: str, network: str, node: Node
    ) -> None:
        endpoint = client.api.create_endpoint_config(ipv4_address=node.ip, aliases=[node.name])
        container = client.containers.create(
            image,
            ["sleep", "infinity"],
            name=node.container,
            hostname=node.name,
            labels=_docker.labels(self.run_id, self.name, node.name),
            init=True,
            cap_add=["NET_ADMIN"],
            tmpfs={DATA_DIR: "rw,mode=755"},
            network=network,
            networking_config={network: endpoint},
        )
        container.put_archive("/", _tar(self._files(node)))
        container.start()

    def _files(self, node: Node) -> dict[str, tuple[str, int]]:
        files = {path: (text, 0o644) for path, text in self.node_files(node).items()}
        files[LAUNCHER] = (self.launcher(node), 0o755)
        files[FAKETIME_FILE] = ("+0\n", 0o666)
        return files

    def launcher(self, node: Node) -> str:
        """The shell script that starts the server on ``node`` (``/harness/start.sh``)."""
        env = FAKETIME_ENV if self.faketime else {}
        lines = [
            "#!/bin/sh",
            f"# Starts {self.name} on {node.name}; written by the harness (clusters/).",
            f"mkdir -p {LOG_DIR} {DATA_DIR}",
            f"exec >>{SERVER_LOG} 2>&1",
            f'echo "=== harness: starting {self.process} at $(date -u +%FT%TZ)"',
            f"cd {DATA_DIR}",
            *self.launch_prelude(node),
            *(f"export {k}={shlex.quote(v)}" for k, v in env.items()),
            "exec " + shlex.join(self.server_command(node)),
        ]
        return "\n".join(lines) + "\n"

    def _launch(self, node: str) -> None:
        self._container(node).exec_run([LAUNCHER], detach=True)

    def _states(self, node: str) -> list[str]:
        """The /proc states of the live (not zombie) server processes on ``node``."""
        script = (
            f"for p in $(pgrep -x {shlex.quote(self.process)}); "
            "do cat /proc/$p/stat 2>/dev/null; echo; done"
        )
        _, out = self.exec(node, script)
        states = [line[line.rindex(")") + 2] for line in out.splitlines() if ")" in line]
        return [s for s in states if s not in "ZX"]

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.start_timeout
        next_liveness = time.monotonic() + 1.0
        while not self.is_ready():
            now = time.monotonic()
            if now >= next_liveness:
                next_liveness = now + 1.0
                for node in self._nodes:
                    if not self.is_running(node):
                        raise ClusterError(
                            f"{self.name} server on {node} exited during start; its log ends "
                            f"with: {self.log_tail(node)}"
                        )
            if now >= deadline:
                lagging = [n for n in self._nodes if not self.is_healthy(n)] or list(self._nodes)
                tails = "; ".join(f"{n}: {self.log_tail(n)}" for n in lagging)
                raise ClusterError(
                    f"{self.name} cluster not healthy after "
                    f"{self.start_timeout:.0f}s; logs end with: {tails}"
                )
            time.sleep(0.2)

    @staticmethod
    def _check_image(client: docker.DockerClient, image: str) -> None:
        from docker.errors import ImageNotFound

        try:
            client.images.get(image)
        except ImageNotFound:
            raise ClusterError(
                f"Image {image!r} is not in the local engine (nothing can be "
                "pulled here); build or `docker load` it first"
            ) from None


def majority_vote(claims: Iterable[str | None], size: int) -> str | None:
    """The claim (say, a leader) made by more than half of ``size`` nodes, else None."""
    counts = Counter(c for c in claims if c)
    for claim, count in counts.items():
        if count > size // 2:
            return claim
    return None


def _tar(files: dict[str, tuple[str, int]]) -> bytes:
    """A tar of ``files`` (absolute path -> (content, mode)), with parent directories."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()
        for path in files:
            parts = path.strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        for d in sorted(dirs):
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if d == "tmp" else 0o755
            tar.addfile(info)
        for path, (text, mode) in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path.strip("/"))
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _extract(data: bytes, dest: Path) -> None:
    """Extract a ``get_archive`` tar into ``dest``, dropping its top directory."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = []
        for m in tar.getmembers():
            _, _, rest = m.name.partition("/")
            if not rest:
                continue
            m.name = rest
            members.append(m)
        tar.extractall(dest, members=members, filter="data")


def _write_cluster_file(run_dir: Path, cluster: DockerCluster, image: str) -> None:
    """``run_dir/cluster.json``: which containers and addresses this run used."""
    info: dict[str, Any] = {
        "target": cluster.name,
        "image": image,
        "network": cluster.network_name,
        "subnet": cluster.subnet,
        "faketime": cluster.faketime,
        "nodes": {n.name: {"ip": n.ip, "container": n.container} for n in cluster._nodes.values()},
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "cluster.json").write_text(json.dumps(info, indent=2) + "\n")
