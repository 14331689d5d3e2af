"""The Docker backend: any ``ServerSpec``'s servers in containers on an internal network.

A node is a container on the cluster's internal network, at a fixed address, that only runs
``sleep infinity`` under an init. The server runs beside it, started by ``docker exec`` of a
launcher script written into the node (``/harness/start.sh``, output appended to
``/var/log/harness/server.log``). Killing and restarting the server thus keeps the node, its
network namespace and any iptables rules a nemesis put there; data lives on a tmpfs at
``/data`` that survives the server's restarts (not the node's removal). For the
power-loss fault the tmpfs is the power-loss layer's disk instead and ``/data`` its FUSE
mount (``clusters._powerfs``): a power cut discards what the server had not fsynced.

What runs there is the spec's (``clusters/<target>/server.py``): its files under
``/harness``, its argv, its probes. Everything created is labelled (``clusters._docker``)
and ``stop`` removes exactly what carries this run's and target's labels.
"""

from __future__ import annotations

import json
import logging
import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusters import _docker
from clusters._backend import RUN_ID, LeadingMixin, ServerCluster
from clusters._network import create_network, node_ip
from clusters._powerfs import node as powerfs
from clusters.server import Launch, Peer, Place, ServerSpec
from core.cluster import ClusterError, server_version
from core.writes import write_text

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

    from clusters.server import ClusterOptions

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


@dataclass(frozen=True, slots=True)
class Node:
    """One node: its peer (name, index, address) and its container's name."""

    peer: Peer
    container: str

    @property
    def name(self) -> str:
        return self.peer.name


class DockerCluster(ServerCluster):
    """A ``ServerSpec``'s servers in containers; Cluster, Killable, Pausable, NodeControl.

    ``docker_cluster`` builds it (with ``HasLeader`` when the spec has a leader).
    """

    def __init__(
        self,
        server: ServerSpec,
        *,
        run_id: str,
        nodes: int | None = None,
        image: str | None = None,
        faketime: bool | None = None,
        subnet: str | None = None,
        power_loss: bool = False,
    ) -> None:
        if not RUN_ID.fullmatch(run_id):
            raise ClusterError(
                f"Run id {run_id!r} cannot name containers; use 1-40 letters, "
                "digits, '_', '.' or '-', starting with a letter or digit"
            )
        self.server = server
        self.name = server.name
        self.size = server.default_nodes if nodes is None else nodes
        server.check_size(self.size)
        self.run_id = run_id
        self.place = Place(CONF_DIR, DATA_DIR, image=True, run_id=run_id)
        self.image = image
        self.faketime = server.faketime_default if faketime is None else faketime
        self.subnet = subnet
        self.power_loss = power_loss
        self.network_name = f"harness-{run_id}-{self.name}"
        self._nodes: dict[str, Node] = {}
        self._client: docker.DockerClient | None = None

    # -- Cluster ----------------------------------------------------------------------

    def nodes(self) -> list[str]:
        """Node names, n1..nN."""
        return [f"n{i}" for i in range(1, self.size + 1)]

    def endpoints(self) -> dict[str, str]:
        """Node name -> "ip:port" of its client port (reachable from the host); none
        before the nodes are laid out."""
        return {n.name: str(n.peer.address) for n in self._nodes.values()}

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
        from clusters.image_build import ensure_image

        image = self.image or ensure_image(
            self.server.image, _building, client=client, release=self.server.release
        )
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
        self.wait_ready()
        if self.power_loss:  # what the servers wrote while starting is taken as on disk
            for name in self._nodes:
                powerfs.ask(self.exec, name, "sync")

    def layout(self, subnet: str) -> list[Peer]:
        """Give the nodes their addresses in ``subnet`` (``start`` does it once it has one)."""
        self.subnet = subnet
        self._nodes = {
            name: Node(
                Peer(name, i, node_ip(subnet, i), self.server.port), f"{self.network_name}-{name}"
            )
            for i, name in enumerate(self.nodes(), start=1)
        }
        return self.peers()

    def peers(self) -> list[Peer]:
        """The laid-out nodes as their servers see them (none before ``layout``)."""
        return [n.peer for n in self._nodes.values()]

    def launch(self, node: str) -> Launch:
        """What the spec runs on ``node`` (laid out)."""
        return self.server.launch(self._node(node).peer, self.peers(), self.place)

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
                    _docker.extract(b"".join(stream), out / sub)
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

    # -- transport for ServerCluster, and for nemeses and tests ---------------------------

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
        return self._node(node).peer.ip

    def log_tail(self, node: str, lines: int = 15) -> str:
        """The last ``lines`` lines of the server log of ``node``, joined with " | "."""
        _, out = self.exec(node, ["tail", "-n", str(lines), SERVER_LOG])
        return " | ".join(line.strip() for line in out.splitlines() if line.strip())

    def power_cut(self, node: str) -> dict[str, int]:
        """PowerCuttable: kill -9 the server on ``node`` and discard what it had not
        fsynced; the bytes discarded per file. ClusterError without the layer."""
        if not self.power_loss:
            raise ClusterError(
                f"The {self.name} cluster was started without the power-loss layer; "
                "start it with power_loss=True (--nemesis power-loss does)"
            )
        self.kill(node)
        return powerfs.cut(self.exec, node)

    def _signal(self, node: str, sig: str) -> None:
        self.exec(node, ["pkill", f"-{sig}", "-x", self.server.process])

    def _launch(self, node: str) -> None:
        self._container(node).exec_run([LAUNCHER], detach=True)

    def _states(self, node: str) -> list[str]:
        script = (
            f"for p in $(pgrep -x {shlex.quote(self.server.process)}); "
            "do cat /proc/$p/stat 2>/dev/null; echo; done"
        )
        _, out = self.exec(node, script)
        states = [line[line.rindex(")") + 2] for line in out.splitlines() if ")" in line]
        return [s for s in states if s not in "ZX"]

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
        endpoint = client.api.create_endpoint_config(ipv4_address=node.peer.ip, aliases=[node.name])
        container = client.containers.create(
            image,
            ["sleep", "infinity"],
            name=node.container,
            hostname=node.name,
            labels=_docker.labels(self.run_id, self.name, node.name),
            init=True,
            network=network,
            networking_config={network: endpoint},
            **self._storage(),
        )
        container.put_archive("/", _docker.tar(self.files(node.name)))
        container.start()
        if self.power_loss:
            powerfs.mount(self.exec, node.name, DATA_DIR)

    def _storage(self) -> dict[str, Any]:
        """The container's data tmpfs and capabilities: with the power-loss layer, the
        tmpfs is its disk and the container may mount FUSE."""
        if not self.power_loss:
            return {"cap_add": ["NET_ADMIN"], "tmpfs": {DATA_DIR: "rw,mode=755"}}
        extra = powerfs.CONTAINER
        return {
            **extra,
            "cap_add": ["NET_ADMIN", *extra["cap_add"]],
            "tmpfs": {powerfs.BACKING: "rw,mode=755"},
        }

    def files(self, node: str) -> dict[str, tuple[str, int]]:
        """What is written into ``node`` before it starts: path -> (content, mode)."""
        launch = self.launch(node)
        files = {path: (text, 0o644) for path, text in launch.files.items()}
        files[LAUNCHER] = (self.launcher(node, launch), 0o755)
        files[FAKETIME_FILE] = ("+0\n", 0o666)
        if self.power_loss:
            files.update(powerfs.files())
        return files

    def launcher(self, node: str, launch: Launch | None = None) -> str:
        """The shell script that starts the server on ``node`` (``/harness/start.sh``)."""
        launch = launch or self.launch(node)
        env = {**launch.env, **(FAKETIME_ENV if self.faketime else {})}
        lines = [
            "#!/bin/sh",
            f"# Starts {self.name} on {node}; written by the harness (clusters/).",
            f"mkdir -p {LOG_DIR} {DATA_DIR}",
            f"exec >>{SERVER_LOG} 2>&1",
            f'echo "=== harness: starting {self.server.process} at $(date -u +%FT%TZ)"',
            f"cd {DATA_DIR}",
            *launch.prelude,
            *(f"export {k}={shlex.quote(v)}" for k, v in env.items()),
            "exec " + shlex.join(launch.argv),
        ]
        return "\n".join(lines) + "\n"

    def release(self) -> dict[str, str]:
        """What test.json records of the Debian release the server came from: the suite
        and its package's exact version as n1's dpkg says (``etcd-server 3.4.23-4+b4``);
        nothing for a custom image (``--image``) or a server with one version."""
        release = self.server.release
        if release is None or self.image:
            return {}
        out = {"release": release.suite}
        if release.dpkg:
            out[f"{self.name} package"] = server_version(self, release.query)
        return out

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


class LeadingDockerCluster(LeadingMixin, DockerCluster):
    """A ``DockerCluster`` whose spec has a leader; also HasLeader."""


def _building(line: str) -> None:
    """A step of an image's load or build (a release's first run: minutes), in the log
    and on stderr, where the run said it is starting the target."""
    log.info("%s", line)
    print(f"  image {line}", file=sys.stderr, flush=True)


def docker_cluster(server: ServerSpec, options: ClusterOptions) -> DockerCluster:
    """The (not started) cluster of ``server`` for the registry's ``options``."""
    cls = LeadingDockerCluster if server.has_leader else DockerCluster
    return cls(
        server.with_release(options.release).with_persistence(options.persistence),
        run_id=options.run_id,
        nodes=options.nodes,
        image=options.image,
        faketime=options.faketime,
        power_loss=options.power_loss,
    )


def _write_cluster_file(run_dir: Path, cluster: DockerCluster, image: str) -> None:
    """``run_dir/cluster.json``: which containers and addresses this run used."""
    info: dict[str, Any] = {
        "target": cluster.name,
        "image": image,
        "network": cluster.network_name,
        "subnet": cluster.subnet,
        "faketime": cluster.faketime,
        "power_loss": cluster.power_loss,
        "nodes": {
            n.name: {"ip": n.peer.ip, "container": n.container} for n in cluster._nodes.values()
        },
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    write_text(run_dir / "cluster.json", json.dumps(info, indent=2) + "\n")
