"""How Redis runs: one primary (``redis``) and five independent servers (``redlock``).

Neither replicates: Redlock's servers know nothing of each other by design. Persistence is
an option because it decides what a lock holder's key becomes after a crash and restart:
``none`` (the default) loses every key, ``aof-everysec`` and ``aof-always`` replay the
append-only file. libfaketime is preloaded by default so clock faults can move the
server's clock (the image's Redis uses libc malloc for that reason).

On hosts: Debian's ``redis-server`` (with ``redis-tools``, which holds the binary); its own
``redis-server.service`` is kept from starting and disabled. Unlike our Docker image,
Debian's binary uses jemalloc: that only matters under libfaketime, which is not used
there (clock faults over SSH set the host's clock).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from clusters._probe import tcp_exchange
from clusters.redis.spec import PERSISTENCE as REDIS_PERSISTENCE
from clusters.releases import Release, table
from clusters.server import Address, Launch, Peer, Place, ServerSpec, check_odd
from core.cluster import ClusterError

PORT = 6379
APPENDFSYNC = {"aof-everysec": "everysec", "aof-always": "always"}


def _orig(suite: str, version: str, sha256: str) -> Release:
    """Redis ``version`` built from Debian's orig tarball of ``suite`` (the image's build
    arguments); the server says its version itself (no Debian package is installed)."""
    args = {"REDIS_VERSION": version, "REDIS_SHA256": sha256}
    return Release(suite, "redis", version, args, dpkg=False)


RELEASES = table(
    # Debian 5:6.0.16-1+deb11u2; the orig tarball's sha256 from bullseye's Sources.
    _orig("bullseye", "6.0.16", "8bea58a468bb67bedc92d8c2e44c170e42e6ea02527cbc5d233e92e8d78d1b99"),
    # Debian 5:7.0.15-1~deb12u7.
    _orig("bookworm", "7.0.15", "4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982"),
    # Debian 5:8.0.2-3+deb13u3: the Dockerfile's own default, so no build arguments.
    Release("trixie", "redis", "8.0.2", dpkg=False),
)
"""Redis per Debian release (Packages and Sources of 2026-12-05). Our redis.conf names
only directives Redis 6, 7 and 8 all take, so no release changes it."""
MISSING = {"sid": "sid has no python3-fuse for the power-loss layer (Redis 8.0.6 otherwise)"}


def check_persistence(persistence: str | None) -> str:
    """``persistence`` (None: ``none``) when it is one of ``REDIS_PERSISTENCE``;
    ClusterError with the choices otherwise."""
    chosen = persistence or "none"
    if chosen not in REDIS_PERSISTENCE:
        raise ClusterError(
            f"Unknown Redis persistence {chosen!r}; choose from: {', '.join(REDIS_PERSISTENCE)}"
        )
    return chosen


def check_one_server(n: int) -> None:
    """The ``redis`` target is a single primary: ClusterError unless ``n`` is 1."""
    if n != 1:
        raise ClusterError(
            f"redis runs one server, not {n}; use --target redlock for several independent servers"
        )


def redis_conf(persistence: str, data_dir: str) -> str:
    """redis.conf: every interface, no protection, no RDB snapshots, the append-only file
    per ``persistence`` (``none``: off, so a killed server comes back empty), data in
    ``data_dir``: in a container and on a host alike, so the same workloads meet the same
    server behaviour."""
    lines = [
        f"port {PORT}",
        "bind 0.0.0.0",
        "protected-mode no",
        "daemonize no",
        'logfile ""',
        f"dir {data_dir}",
        'save ""',
    ]
    fsync = APPENDFSYNC.get(persistence)
    lines += ["appendonly yes", f"appendfsync {fsync}"] if fsync else ["appendonly no"]
    return "\n".join(lines) + "\n"


def answers_ping(ip: str, port: int = PORT) -> bool:
    """PING at ``ip`` answers +PONG (not -LOADING while the AOF is replayed)."""
    reply = tcp_exchange(ip, port, b"PING\r\n", until=b"\r\n")
    return reply is not None and reply.startswith(b"+PONG")


@dataclass(frozen=True)
class RedisServer(ServerSpec):
    """Redis servers, each on its own: one primary (``redis``) or several (``redlock``)."""

    name: str = "redis"
    process: str = "redis-server"
    port: int = PORT
    ports: tuple[int, ...] = (PORT,)
    image: str = "redis"
    packages: tuple[str, ...] = ("redis-server",)
    services: tuple[str, ...] = ("redis-server",)
    default_nodes: int = 1
    faketime_default: bool = True
    start_timeout: float = 20.0
    version_argv: tuple[str, ...] | None = ("redis-server", "--version")
    releases: Mapping[str, Release] = field(default_factory=lambda: RELEASES)
    missing: Mapping[str, str] = field(default_factory=lambda: MISSING)
    persistence: str = "none"
    """One of ``REDIS_PERSISTENCE``: what a killed server's keys become."""

    single: bool = True
    """One primary (``redis``); False: any odd number of servers from 1 to 7 (``redlock``)."""

    def check_size(self, n: int, unit: str = "nodes") -> None:
        """A single primary: exactly one server; else an odd number (a Redlock majority)."""
        if self.single:
            check_one_server(n)
        else:
            check_odd(self.name, n, unit)

    def with_persistence(self, persistence: str | None) -> RedisServer:
        """This server with ``persistence`` (None: ``none``); ClusterError for an unknown one."""
        return replace(self, persistence=check_persistence(persistence))

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        """redis-server on ``redis_conf``, data in ``place``."""
        conf = f"{place.conf}/redis.conf"
        return Launch(
            ("redis-server", conf), files={conf: redis_conf(self.persistence, place.data)}
        )

    def healthy(self, at: Address) -> bool:
        """PING answers +PONG (not -LOADING while the AOF is replayed)."""
        return answers_ping(*at)


REDIS = RedisServer()
REDLOCK = RedisServer(name="redlock", default_nodes=5, single=False)
