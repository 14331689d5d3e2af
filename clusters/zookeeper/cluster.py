"""A ZooKeeper ensemble: servers n1..nN with myid = index, on a 256 MB heap.

Four-letter words are all allowed so ``srvr`` tells each server's mode (leader, follower,
or not serving); that is both the health probe and the leader query. The JVM follows
libfaketime (preloaded by default; the monotonic clock stays real).

Timing: a tick of 500 ms instead of the default 2 s, with init and sync limits scaled so
their wall-clock values stay the defaults' (20 s and 10 s). The tick is the granularity
of session expiry (the leader expires sessions in tick-sized buckets) and half the
default minimum session timeout, so lock workloads can run with lease TTLs (session
timeouts) of a second or two and see the session die when the TTL says; the session
timeouts a client may ask for are 1 s to 60 s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from clusters._probe import tcp_exchange
from clusters.docker_cluster import DockerCluster, Node
from clusters.zookeeper.spec import MAX_SESSION_MS, MIN_SESSION_MS

CLIENT_PORT = 2181
QUORUM_PORT = 2888
"""Followers connect to the leader here."""
ELECTION_PORT = 3888
"""Servers elect a leader here."""
CONF = "/harness/zoo.cfg"
DATA = "/data/zk"
HEAP = "-Xmx256m"
TICK_MS = 500


def zoo_cfg(servers: Mapping[int, str], data_dir: str) -> str:
    """zoo.cfg of an ensemble of ``servers`` (myid -> address) keeping its data in
    ``data_dir``: short ticks (see the module docstring), all 4lw commands, no admin
    server. Docker nodes and SSH hosts (``clusters.ssh.zookeeper``) both run this."""
    lines = [
        f"tickTime={TICK_MS}",
        f"initLimit={20_000 // TICK_MS}",
        f"syncLimit={10_000 // TICK_MS}",
        f"minSessionTimeout={MIN_SESSION_MS}",
        f"maxSessionTimeout={MAX_SESSION_MS}",
        f"dataDir={data_dir}",
        f"clientPort={CLIENT_PORT}",
        "4lw.commands.whitelist=*",
        "quorumListenOnAllIPs=true",
        "admin.enableServer=false",
        *(
            f"server.{myid}={ip}:{QUORUM_PORT}:{ELECTION_PORT}"
            for myid, ip in sorted(servers.items())
        ),
    ]
    return "\n".join(lines) + "\n"


def server_argv(conf: str, jvm: Sequence[str] = ()) -> list[str]:
    """The JVM (with the options ``jvm`` added) running QuorumPeerMain on the zoo.cfg at
    ``conf``, timestamps in its log lines (the CLASSPATH comes from the environment)."""
    return [
        "java",
        HEAP,
        "-XX:+UseSerialGC",
        *jvm,
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        "org.apache.zookeeper.server.quorum.QuorumPeerMain",
        conf,
    ]


class ZookeeperCluster(DockerCluster):
    """ZooKeeper 3.9 servers n1..nN; Killable, Pausable, HasLeader."""

    version_argv = ("dpkg-query", "-W", "-f", "${Version}", "zookeeper")
    version_prefix = "zookeeper "

    name = "zookeeper"
    image_name = "zookeeper"
    process = "java"
    port = CLIENT_PORT
    faketime_default = True
    start_timeout = 60.0

    def node_files(self, node: Node) -> dict[str, str]:
        """zoo.cfg (``zoo_cfg``) of the ensemble, data on the node's tmpfs."""
        return {CONF: zoo_cfg({n.index: n.ip for n in self._nodes.values()}, DATA)}

    def launch_prelude(self, node: Node) -> list[str]:
        """myid, and Debian's CLASSPATH (with slf4j-simple, added by the image)."""
        return [
            f"mkdir -p {DATA} && echo {node.index} > {DATA}/myid",
            ". /etc/zookeeper/conf/environment",
            "export CLASSPATH",
        ]

    def server_command(self, node: Node) -> list[str]:
        """The JVM running QuorumPeerMain on zoo.cfg (``server_argv``)."""
        return server_argv(CONF)

    def mode(self, node: str) -> str | None:
        """What ``srvr`` says this server is (leader, follower, standalone), else None."""
        reply = tcp_exchange(self.ip(node), CLIENT_PORT, b"srvr")
        found = re.search(rb"^Mode: (\w+)", reply or b"", re.M)
        return found.group(1).decode() if found else None

    def is_healthy(self, node: str) -> bool:
        """The server is serving: a leader, follower or standalone."""
        return self.mode(node) in ("leader", "follower", "standalone")

    def is_ready(self) -> bool:
        """Every server serves and the ensemble has its leader."""
        modes = [self.mode(n) for n in self._nodes]
        serving = all(m in ("leader", "follower", "standalone") for m in modes)
        return serving and (self.size == 1 or modes.count("leader") == 1)

    def leader(self) -> str | None:
        """The one server that says it leads while a majority serve, else None."""
        modes = {n: self.mode(n) for n in self._nodes}
        leaders = [n for n, m in modes.items() if m in ("leader", "standalone")]
        serving = sum(m in ("leader", "follower", "standalone") for m in modes.values())
        return leaders[0] if len(leaders) == 1 and serving > self.size // 2 else None
