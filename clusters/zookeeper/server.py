"""How ZooKeeper runs: an ensemble of servers n1..nN with myid = index, on a 256 MB heap.

Four-letter words are all allowed so ``srvr`` tells each server's mode (leader, follower,
or not serving); that is both the health probe and the leader query. The JVM follows
libfaketime (preloaded by default; the monotonic clock stays real).

Timing: a tick of 500 ms instead of the default 2 s, with init and sync limits scaled so
their wall-clock values stay the defaults' (20 s and 10 s). The tick is the granularity
of session expiry (the leader expires sessions in tick-sized buckets) and half the
default minimum session timeout, so lock workloads can run with lease TTLs (session
timeouts) of a second or two and see the session die when the TTL says; the session
timeouts a client may ask for are 1 s to 60 s.

On hosts: Debian's ``libzookeeper-java`` (the server's jar and the libraries its manifest
names, ``libslf4j-java`` among them, whose ``slf4j-simple`` binding makes the server log)
and ``default-jre-headless``. Not the ``zookeeper`` package: it only adds scripts and
example configuration, and it depends on ``default-jre``, which brings GTK and X11 (about
650 MB) onto a server; our Docker image avoids that too (with an empty ``default-jre``).
Nor ``zookeeperd``, whose service would take the ports. These packages start no service.
The JVM runs without libfaketime there, since clock faults over SSH set the host's clock.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from clusters._probe import tcp_exchange
from clusters.releases import Release, table
from clusters.server import Address, Launch, Peer, Place, ServerSpec
from clusters.zookeeper.spec import MAX_SESSION_MS, MIN_SESSION_MS
from core.cluster import ClusterError

CLIENT_PORT = 2181
QUORUM_PORT = 2888
"""Followers connect to the leader here."""
ELECTION_PORT = 3888
"""Servers elect a leader here."""
HEAP = "-Xmx256m"
TICK_MS = 500
SERVING = ("leader", "follower", "standalone")
"""The modes of a server that serves."""
HOST_CLASSPATH = "/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-simple.jar"
"""Debian's server jar (its manifest lists its libraries) and the log binding."""
HOST_JVM_OPTIONS = ("-XX:-UsePerfData",)
"""No /tmp/hsperfdata_root/PID file: a killed JVM would leave it on the host."""


@dataclass(frozen=True, slots=True)
class ZookeeperRelease(Release):
    """A ZooKeeper release and the settings its zoo.cfg may name: 3.4 has neither the
    four-letter-word whitelist (every word is on) nor the admin server (both 3.5)."""

    settings_3_5: bool = True


NO_FAKETIME_0_9_8 = (
    "bullseye's libfaketime (0.9.8) makes the JVM's timed waits spin (each idle server "
    "about 65% of a core, clients timing out), so {target} from bullseye runs without it "
    "and its clock cannot move in a container: use another --server-version for {fault}"
)
"""Measured: a 3-node ensemble of 3.4.13 ready in 5.5 s without libfaketime, 17.6 s with it."""


RELEASES = table(
    ZookeeperRelease(
        "bullseye",
        "zookeeper",
        "3.4.13-6+deb11u1",
        no_faketime=NO_FAKETIME_0_9_8,
        settings_3_5=False,
    ),
    ZookeeperRelease("bookworm", "zookeeper", "3.8.0-11+deb12u2"),
    ZookeeperRelease("trixie", "zookeeper", "3.9.3-1+deb13u1"),
)
"""Debian's zookeeper per release (Packages of 2026-12-05)."""
MISSING = {
    "sid": "sid has no python3-fuse for the power-loss layer (ZooKeeper 3.9.6 otherwise; "
    "its image failed to build here on 2026-12-06: python3-fuse has no installation candidate)",
}
SETTINGS_3_5 = ("4lw.commands.whitelist=*", "admin.enableServer=false")
"""All four-letter words allowed (``srvr`` is the probe), no admin server (its port)."""


def zoo_cfg(
    servers: Mapping[int, str],
    data_dir: str,
    force_sync: bool = True,
    release: ZookeeperRelease | None = None,
) -> str:
    """zoo.cfg of an ensemble of ``servers`` (myid -> address) keeping its data in
    ``data_dir``: short ticks (see the module docstring), all 4lw commands, no admin
    server (``SETTINGS_3_5``, where ``release`` knows them); ``forceSync=no`` without
    ``force_sync`` (the log not fsynced before a write is acknowledged); ``release``
    None: the default's."""
    modern = release is None or release.settings_3_5
    lines = [
        f"tickTime={TICK_MS}",
        f"initLimit={20_000 // TICK_MS}",
        f"syncLimit={10_000 // TICK_MS}",
        f"minSessionTimeout={MIN_SESSION_MS}",
        f"maxSessionTimeout={MAX_SESSION_MS}",
        f"dataDir={data_dir}",
        f"clientPort={CLIENT_PORT}",
        *(SETTINGS_3_5[:1] if modern else ()),
        "quorumListenOnAllIPs=true",
        *(SETTINGS_3_5[1:] if modern else ()),
        *(
            f"server.{myid}={ip}:{QUORUM_PORT}:{ELECTION_PORT}"
            for myid, ip in sorted(servers.items())
        ),
        *(() if force_sync else ("forceSync=no",)),
    ]
    return "\n".join(lines) + "\n"


def server_argv(conf: str, jvm: Sequence[str] = ()) -> tuple[str, ...]:
    """The JVM (with the options ``jvm`` added) running QuorumPeerMain on the zoo.cfg at
    ``conf``, timestamps in its log lines (the CLASSPATH comes from the environment)."""
    return (
        "java",
        HEAP,
        "-XX:+UseSerialGC",
        *jvm,
        "-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSSZ",
        "org.apache.zookeeper.server.quorum.QuorumPeerMain",
        conf,
    )


def mode(ip: str, port: int = CLIENT_PORT) -> str | None:
    """What ``srvr`` says the server at ``ip`` is (leader, follower, standalone), else None."""
    reply = tcp_exchange(ip, port, b"srvr")
    found = re.search(rb"^Mode: (\w+)", reply or b"", re.M)
    return found.group(1).decode() if found else None


@dataclass(frozen=True)
class ZookeeperServer(ServerSpec):
    """ZooKeeper 3.9 servers n1..nN, myid = index."""

    name: str = "zookeeper"
    process: str = "java"
    port: int = CLIENT_PORT
    ports: tuple[int, ...] = (CLIENT_PORT, QUORUM_PORT, ELECTION_PORT)
    image: str = "zookeeper"
    packages: tuple[str, ...] = ("libzookeeper-java", "default-jre-headless")
    faketime_default: bool = True
    start_timeout: float = 60.0
    version_argv: tuple[str, ...] | None = ("dpkg-query", "-W", "-f", "${Version}", "zookeeper")
    host_version_argv: tuple[str, ...] | None = (
        "dpkg-query",
        "-W",
        "-f",
        "${Version}",
        "libzookeeper-java",
    )
    version_prefix: str = "zookeeper "
    has_leader: bool = True
    releases: Mapping[str, Release] = field(default_factory=lambda: RELEASES)
    missing: Mapping[str, str] = field(default_factory=lambda: MISSING)
    force_sync: bool = True
    """False: ``forceSync=no`` (persistence ``no-force-sync``)."""

    def with_persistence(self, persistence: str | None) -> ZookeeperServer:
        """``force-sync`` (None: the default) or ``no-force-sync``; ClusterError else."""
        if persistence not in (None, "force-sync", "no-force-sync"):
            raise ClusterError(
                f"Unknown ZooKeeper persistence {persistence!r}; "
                "choose from: force-sync, no-force-sync"
            )
        return replace(self, force_sync=persistence != "no-force-sync")

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        """zoo.cfg of the ensemble in ``conf``, myid in ZooKeeper's dataDir (``data/zk``).

        In our image the dataDir is a tmpfs mounted when the node starts, so the launcher
        writes myid (once: rewritten at each restart it would be a write the power-loss
        layer discards at the next cut, counted against the service) and takes Debian's
        CLASSPATH from the image's ``environment`` file; on a host myid is a file, the
        CLASSPATH Debian's jars, and the JVM keeps no perf-data file (a killed JVM would
        leave it in the host's /tmp).
        """
        data = f"{place.data}/zk"
        myid = f"{data}/myid"
        conf = f"{place.conf}/zoo.cfg"
        cfg = zoo_cfg({p.index: p.ip for p in peers}, data, self.force_sync, self.zk_release)
        if place.image:
            return Launch(
                server_argv(conf),
                files={conf: cfg},
                prelude=(
                    f"mkdir -p {data} && {{ [ -s {myid} ] || echo {node.index} > {myid}; }}",
                    ". /etc/zookeeper/conf/environment",
                    "export CLASSPATH",
                ),
            )
        return Launch(
            server_argv(conf, HOST_JVM_OPTIONS),
            files={conf: cfg, myid: f"{node.index}\n"},
            env={"CLASSPATH": HOST_CLASSPATH},
        )

    @property
    def zk_release(self) -> ZookeeperRelease:
        """The release it runs, with its zoo.cfg settings."""
        release = self.releases[self.suite]
        assert isinstance(release, ZookeeperRelease)
        return release

    def healthy(self, at: Address) -> bool:
        """The server is serving: a leader, follower or standalone."""
        return mode(*at) in SERVING

    def ready(self, ips: Mapping[str, Address]) -> bool:
        """Every server serves and the ensemble has its leader."""
        modes = [mode(*at) for at in ips.values()]
        serving = all(m in SERVING for m in modes)
        return serving and (len(ips) == 1 or modes.count("leader") == 1)

    def leader(self, ips: Mapping[str, Address]) -> str | None:
        """The one server that says it leads while a majority serve, else None."""
        modes = {n: mode(*at) for n, at in ips.items()}
        leaders = [n for n, m in modes.items() if m in ("leader", "standalone")]
        serving = sum(m in SERVING for m in modes.values())
        return leaders[0] if len(leaders) == 1 and serving > len(ips) // 2 else None


SERVER = ZookeeperServer()
