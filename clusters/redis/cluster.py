"""Redis targets: one primary (``redis``) and five independent servers (``redlock``).

Neither replicates: Redlock's servers know nothing of each other by design. Persistence is
an option because it decides what a lock holder's key becomes after a crash and restart:
``none`` (the default) loses every key, ``aof-everysec`` and ``aof-always`` replay the
append-only file. libfaketime is preloaded by default so clock faults can move the
server's clock (the image's Redis uses libc malloc for that reason).
"""

from __future__ import annotations

from clusters._probe import tcp_exchange
from clusters.base import ClusterError
from clusters.docker_cluster import DockerCluster, Node
from clusters.registry import REDIS_PERSISTENCE, ClusterOptions

PORT = 6379
CONF = "/harness/redis.conf"
APPENDFSYNC = {"aof-everysec": "everysec", "aof-always": "always"}


class RedisCluster(DockerCluster):
    """One Redis server (n1); Killable and Pausable."""

    name = "redis"
    image_name = "redis"
    process = "redis-server"
    port = PORT
    default_nodes = 1
    faketime_default = True
    start_timeout = 20.0

    def __init__(self, *, run_id: str, nodes: int | None = None, image: str | None = None,
                 faketime: bool | None = None, subnet: str | None = None,
                 persistence: str | None = None) -> None:
        self.persistence = persistence or "none"
        if self.persistence not in REDIS_PERSISTENCE:
            raise ClusterError(f"Unknown Redis persistence {self.persistence!r}; choose from: "
                               f"{', '.join(REDIS_PERSISTENCE)}")
        super().__init__(run_id=run_id, nodes=nodes, image=image, faketime=faketime,
                         subnet=subnet)

    @classmethod
    def from_options(cls, options: ClusterOptions) -> RedisCluster:
        """The cluster for the registry's options, persistence included."""
        return cls(run_id=options.run_id, nodes=options.nodes, image=options.image,
                   faketime=options.faketime, persistence=options.persistence)

    def check_size(self, n: int) -> None:
        """A single primary: exactly one node."""
        if n != 1:
            raise ClusterError(f"redis runs one server, not {n}; use --target redlock for "
                               "several independent servers")

    def node_files(self, node: Node) -> dict[str, str]:
        """redis.conf: every interface, no protection, no RDB, AOF per ``persistence``."""
        lines = [
            f"port {PORT}", "bind 0.0.0.0", "protected-mode no", "daemonize no",
            'logfile ""', "dir /data", 'save ""',
        ]
        fsync = APPENDFSYNC.get(self.persistence)
        lines += ["appendonly yes", f"appendfsync {fsync}"] if fsync else ["appendonly no"]
        return {CONF: "\n".join(lines) + "\n"}

    def server_command(self, node: Node) -> list[str]:
        """redis-server with the written configuration."""
        return ["redis-server", CONF]

    def is_healthy(self, node: str) -> bool:
        """PING answers +PONG (not -LOADING while the AOF is replayed)."""
        reply = tcp_exchange(self.ip(node), PORT, b"PING\r\n", until=b"\r\n")
        return reply is not None and reply.startswith(b"+PONG")


class RedlockCluster(RedisCluster):
    """Independent Redis servers n1..nN (five by default) for Redlock."""

    name = "redlock"
    default_nodes = 5

    def check_size(self, n: int) -> None:
        """Any odd number of servers from 1 to 7 (Redlock needs a majority)."""
        DockerCluster.check_size(self, n)
