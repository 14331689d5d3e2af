"""Redis targets: one primary (``redis``) and five independent servers (``redlock``).

Neither replicates: Redlock's servers know nothing of each other by design. Persistence is
an option because it decides what a lock holder's key becomes after a crash and restart:
``none`` (the default) loses every key, ``aof-everysec`` and ``aof-always`` replay the
append-only file. libfaketime is preloaded by default so clock faults can move the
server's clock (the image's Redis uses libc malloc for that reason).
"""

from __future__ import annotations

from clusters._probe import tcp_exchange
from clusters.docker_cluster import DATA_DIR, DockerCluster, Node
from clusters.redis.spec import PERSISTENCE as REDIS_PERSISTENCE
from clusters.spec import ClusterOptions
from core.cluster import ClusterError

PORT = 6379
CONF = "/harness/redis.conf"
APPENDFSYNC = {"aof-everysec": "everysec", "aof-always": "always"}


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
    ``data_dir``. Docker nodes and SSH hosts (``clusters.ssh.redis``) both run this, so
    the same workloads meet the same server behaviour."""
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


def answers_ping(ip: str) -> bool:
    """PING at ``ip`` answers +PONG (not -LOADING while the AOF is replayed)."""
    reply = tcp_exchange(ip, PORT, b"PING\r\n", until=b"\r\n")
    return reply is not None and reply.startswith(b"+PONG")


class RedisCluster(DockerCluster):
    """One Redis server (n1); Killable and Pausable."""

    version_argv = ("redis-server", "--version")

    name = "redis"
    image_name = "redis"
    process = "redis-server"
    port = PORT
    default_nodes = 1
    faketime_default = True
    start_timeout = 20.0

    def __init__(
        self,
        *,
        run_id: str,
        nodes: int | None = None,
        image: str | None = None,
        faketime: bool | None = None,
        subnet: str | None = None,
        persistence: str | None = None,
    ) -> None:
        self.persistence = check_persistence(persistence)
        super().__init__(run_id=run_id, nodes=nodes, image=image, faketime=faketime, subnet=subnet)

    @classmethod
    def from_options(cls, options: ClusterOptions) -> RedisCluster:
        """The cluster for the registry's options, persistence included."""
        return cls(
            run_id=options.run_id,
            nodes=options.nodes,
            image=options.image,
            faketime=options.faketime,
            persistence=options.persistence,
        )

    def check_size(self, n: int) -> None:
        """A single primary: exactly one node."""
        check_one_server(n)

    def node_files(self, node: Node) -> dict[str, str]:
        """redis.conf (``redis_conf``), data on the node's tmpfs."""
        return {CONF: redis_conf(self.persistence, DATA_DIR)}

    def server_command(self, node: Node) -> list[str]:
        """redis-server with the written configuration."""
        return ["redis-server", CONF]

    def is_healthy(self, node: str) -> bool:
        """PING answers +PONG (not -LOADING while the AOF is replayed)."""
        return answers_ping(self.ip(node))


class RedlockCluster(RedisCluster):
    """Independent Redis servers n1..nN (five by default) for Redlock."""

    name = "redlock"
    default_nodes = 5

    def check_size(self, n: int) -> None:
        """Any odd number of servers from 1 to 7 (Redlock needs a majority)."""
        DockerCluster.check_size(self, n)
