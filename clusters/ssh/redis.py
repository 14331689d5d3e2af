"""Redis on SSH hosts: one primary (``redis``) or independent servers (``redlock``).

The server runs the Docker target's configuration (``clusters.redis.cluster.redis_conf``)
with its data under the run's directory: every interface, no protection, no RDB
snapshots, and the append-only file only as ``persistence`` says (``none`` by default),
so a server killed without persistence comes back empty on a host as in a container,
and the same workloads meet the same expectations. The probe (PING answers +PONG) and the
size rules (``redis`` one server, ``redlock`` an odd number) are the Docker target's too.

Packages: Debian's ``redis-server`` (with ``redis-tools``, which holds the binary). Its
own ``redis-server.service`` is kept from starting and disabled. Unlike our Docker image,
Debian's binary uses jemalloc: that only matters under libfaketime, which is not used
here (clock faults over SSH set the host's clock).
"""

from __future__ import annotations

from typing import Any

from clusters.redis.cluster import (
    PORT,
    RedisCluster,
    answers_ping,
    check_one_server,
    check_persistence,
    redis_conf,
)
from clusters.remote.hosts import HostSpec
from clusters.ssh.cluster import SshCluster


class SshRedisCluster(SshCluster):
    """One Redis server on one SSH host (n1); Killable, Pausable, NodeControl."""

    name = "redis"
    process = "redis-server"
    port = PORT
    ports = (PORT,)
    packages = ("redis-server",)
    services = ("redis-server",)
    start_timeout = RedisCluster.start_timeout
    version_argv = RedisCluster.version_argv

    def __init__(
        self, hosts: list[HostSpec], *, persistence: str | None = None, **options: Any
    ) -> None:
        self.persistence = check_persistence(persistence)
        super().__init__(hosts, **options)

    @classmethod
    def check_size_of(cls, n: int) -> None:
        """A single primary: exactly one host."""
        check_one_server(n)

    @property
    def conf_file(self) -> str:
        """redis.conf on every host."""
        return f"{self.layout.conf}/redis.conf"

    def node_files(self, node: str) -> dict[str, str]:
        """redis.conf: the Docker target's, data in the run's ``data/``."""
        return {self.conf_file: redis_conf(self.persistence, self.layout.data)}

    def server_command(self, node: str) -> list[str]:
        return ["redis-server", self.conf_file]

    def is_healthy(self, node: str) -> bool:
        """PING answers +PONG (not -LOADING while the append-only file is replayed)."""
        return answers_ping(self.ip(node))


class SshRedlockCluster(SshRedisCluster):
    """Independent Redis servers on SSH hosts n1..nN (five for Redlock's default)."""

    name = "redlock"

    @classmethod
    def check_size_of(cls, n: int) -> None:
        """Any odd number of servers from 1 to 7 (Redlock needs a majority)."""
        super(SshRedisCluster, cls).check_size_of(n)  # SshCluster's rule
