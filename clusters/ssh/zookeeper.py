"""ZooKeeper on SSH hosts: the Docker target's ensemble, on real machines.

The configuration (``zoo_cfg``: short ticks, every four-letter word, the ensemble on the
hosts' addresses) and the JVM's command line (``server_argv``) are those of
``clusters.zookeeper.cluster``; the probes (``srvr``: each server's mode, readiness, the
leader) are ``ZookeeperCluster``'s, asked through a view of it over the hosts' addresses
(``clusters.ssh.view``). Only the places differ: zoo.cfg under the run's ``conf/``, the
data and ``myid`` under its ``data/zk``. The JVM runs without libfaketime, since clock
faults over SSH set the host's own clock, and without its perf-data file
(``-XX:-UsePerfData``), which a killed JVM would leave in the host's /tmp.

Packages: Debian's ``libzookeeper-java`` (the server's jar and the libraries its manifest
names, ``libslf4j-java`` among them, whose ``slf4j-simple`` binding makes the server log)
and ``default-jre-headless``. Not the ``zookeeper`` package: it only adds scripts and
example configuration, and it depends on ``default-jre``, which brings GTK and X11 (about
650 MB) onto a server; our Docker image avoids that too (with an empty ``default-jre``).
Nor ``zookeeperd``, whose service would take the ports. These packages start no service.
"""

from __future__ import annotations

from clusters.ssh.view import ViewedSshCluster
from clusters.zookeeper.cluster import (
    CLIENT_PORT,
    ELECTION_PORT,
    QUORUM_PORT,
    ZookeeperCluster,
    server_argv,
    zoo_cfg,
)

CLASSPATH = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"
"""Debian's server jar (its manifest lists its libraries) and the log binding."""
JVM_OPTIONS = ("-XX:-UsePerfData",)
"""No /tmp/hsperfdata_root/PID file: a killed JVM would leave it on the host."""


class SshZookeeperCluster(ViewedSshCluster[ZookeeperCluster]):
    """ZooKeeper 3.9 servers on SSH hosts n1..nN (myid = index); Killable, Pausable,
    HasLeader, NodeControl."""

    name = "zookeeper"
    process = "java"
    port = CLIENT_PORT
    ports = (CLIENT_PORT, QUORUM_PORT, ELECTION_PORT)
    packages = ("libzookeeper-java", "default-jre-headless")
    start_timeout = ZookeeperCluster.start_timeout
    version_argv = ("dpkg-query", "-W", "-f", "${Version}", "libzookeeper-java")
    version_prefix = "zookeeper "
    docker = ZookeeperCluster

    def node_files(self, node: str) -> dict[str, str]:
        """zoo.cfg of the ensemble in ``conf/``; ``node``'s myid (its index: n2 is 2) in
        ZooKeeper's dataDir, ``data/zk`` (snapshots and transaction log go there too)."""
        data = f"{self.layout.data}/zk"
        servers = {i: self.ip(n) for i, n in enumerate(self.nodes(), start=1)}
        myid = self.nodes().index(node) + 1
        return {self._conf(): zoo_cfg(servers, data), f"{data}/myid": f"{myid}\n"}

    def server_command(self, node: str) -> list[str]:
        """The Docker target's JVM command line, on this host's zoo.cfg."""
        return server_argv(self._conf(), JVM_OPTIONS)

    def server_env(self, node: str) -> dict[str, str]:
        """Debian's jars (the Docker image takes the same from its ``environment`` file)."""
        return {"CLASSPATH": CLASSPATH}

    def is_ready(self) -> bool:
        """Every server serves and the ensemble has its leader (``srvr`` on each host)."""
        return self.view().is_ready()

    def leader(self) -> str | None:
        """The one server that says it leads while a majority serve, else None."""
        return self.view().leader()

    def _conf(self) -> str:
        return f"{self.layout.conf}/zoo.cfg"
