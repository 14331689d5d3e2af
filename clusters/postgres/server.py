"""How PostgreSQL runs: n1 the primary, the other nodes its streaming replicas.

A node's first start makes its data directory: ``initdb`` on n1, ``pg_basebackup -R`` from
n1 on the others (a physical copy that then streams n1's WAL as a hot standby). Later starts
(after a kill) keep what is there: the primary comes back through crash recovery, a replica
resumes streaming. Replication is the ``persistence`` option, since it decides what a
commit survives: ``async`` (the default, PostgreSQL's own) answers a COMMIT once the
primary's WAL is flushed; ``sync`` (``synchronous_standby_names = '*'``) only once a replica
has it too, so a COMMIT waits while no replica answers. ``no-sync-commit`` and ``no-fsync``
replicate asynchronously and turn the primary's durability down (``synchronous_commit =
off``: a COMMIT answered before its WAL is flushed; ``fsync = off``: nothing ever flushed),
what the power-loss fault shows.

The server runs as the ``postgres`` user (``setpriv``), from the newest
``/usr/lib/postgresql/*/bin``: 17 in our image (Debian trixie), whatever the hosts' Debian
ships on SSH hosts (``postgresql``; its own ``postgresql.service`` is kept from starting).
Clients connect to every node with ``target_session_attrs=read-write``: the primary. Every
connection is trusted (a test cluster on an internal network).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from clusters.postgres.connection import probe
from clusters.postgres.failover import copy_from, rejoin, start_watcher, watcher
from clusters.postgres.spec import PERSISTENCE
from clusters.releases import Release, table
from clusters.server import Address, Launch, Peer, Place, ServerSpec
from core.cluster import ClusterError

PORT = 5432
RELEASES = table(
    Release("bullseye", "postgresql-13", "13.16-0+deb11u1"),
    Release("bookworm", "postgresql-15", "15.18-0+deb12u1"),
    Release("trixie", "postgresql-17", "17.12-0+deb13u1"),
)
"""Debian's PostgreSQL server per release (the ``postgresql`` package depends on it;
Packages of 2026-12-05). The major version is only in paths, which the launcher finds
(``/usr/lib/postgresql/*/bin``); our postgresql.conf names settings 13 to 17 all take."""
MISSING = {
    "sid": "its image (postgresql-18 18.6-3) failed to build here on 2026-12-05 and has "
    "not been built since; offered once it builds and runs",
}
MAX_NODES = 5
AS_POSTGRES = ("setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups")
USER = shlex.join(AS_POSTGRES)
BASEBACKUP_TRIES = 240
"""Half-second tries of a replica's first copy while its primary starts (2 min)."""


DURABILITY = {"no-sync-commit": ("synchronous_commit = off",), "no-fsync": ("fsync = off",)}
"""The postgresql.conf lines of the persistence values that turn durability down."""
DURABILITY_DEFAULTS = {
    "fsync": "on",
    "synchronous_commit": "on",
    "full_page_writes": "on",
    "wal_sync_method": "fdatasync",
    "wal_writer_delay": "200",
    "commit_delay": "0",
}
"""PostgreSQL's settings that decide what a power cut may take, each with its default on
Linux as ``pg_settings`` shows it (runtime-config-wal.html; wal_writer_delay in ms). Our
postgresql.conf sets none of them but the one line of a ``DURABILITY`` value, which
``spec.RULES`` records as changed from this default; the server on a run's host says so
itself (``tests/integration/test_ssh_power_loss.py``)."""


def check_replication(persistence: str | None) -> str:
    """``persistence`` (None: ``async``) when it is one of ``PERSISTENCE``; ClusterError
    with the choices otherwise."""
    chosen = persistence or PERSISTENCE[0]
    if chosen not in PERSISTENCE:
        raise ClusterError(
            f"Unknown PostgreSQL replication {chosen!r}; choose from: {', '.join(PERSISTENCE)}"
        )
    return chosen


def postgresql_conf(conf_dir: str, replication: str) -> str:
    """postgresql.conf: every interface, WAL for streaming replicas, hot standbys, a
    synchronous replica when ``replication`` is ``sync``, and the primary's durability
    turned down when it is ``no-sync-commit`` or ``no-fsync``.

    What it changes from PostgreSQL 17's documented defaults (in brackets):
    ``listen_addresses`` (localhost), ``unix_socket_directories`` (Debian's
    /var/run/postgresql), ``shared_buffers`` 16MB (128MB), ``max_wal_senders`` 8 (10),
    ``wal_keep_size`` 128MB (0) and the log's prefix and level; its other lines restate
    the default. None of them decides durability (``DURABILITY_DEFAULTS``)."""
    standbys = "*" if replication.startswith("sync") else ""
    durability = DURABILITY.get(replication, ())
    lines = [
        "listen_addresses = '*'",
        f"port = {PORT}",
        f"hba_file = '{conf_dir}/pg_hba.conf'",
        "unix_socket_directories = '/tmp'",
        "max_connections = 100",
        "shared_buffers = 16MB",
        "wal_level = replica",
        "max_wal_senders = 8",
        "wal_keep_size = 128MB",
        "hot_standby = on",
        f"synchronous_standby_names = '{standbys}'",
        "log_line_prefix = '%m [%p] %a '",
        "log_min_messages = warning",
        *durability,
    ]
    return "\n".join(lines) + "\n"


PG_HBA = """\
local all all trust
host all all 0.0.0.0/0 trust
host replication all 0.0.0.0/0 trust
"""


def prepare(data: str, primary: Peer | None) -> tuple[str, ...]:
    """Shell lines run as root before the server: the newest PostgreSQL on PATH, the data
    directory owned by ``postgres``, and on a first start ``initdb`` (``primary`` None) or a
    copy of ``primary``."""
    q = shlex.quote(data)
    lines = [
        'PATH="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1):$PATH"; export PATH',
        f"mkdir -p {q} && chown postgres:postgres {q} && chmod 700 {q}",
    ]
    if primary is None:
        lines.append(
            f"[ -s {q}/PG_VERSION ] || {USER} initdb -D {q} -U postgres -A trust -E UTF8 --locale=C"
        )
    else:
        copy = copy_from(data, primary.ip, PORT, USER, BASEBACKUP_TRIES)
        lines.append(f"[ -s {q}/PG_VERSION ] || {{ {copy}; }}")
    return tuple(lines)


@dataclass(frozen=True)
class PostgresServer(ServerSpec):
    """PostgreSQL: n1 the primary, n2.. its streaming replicas; ``persistence`` is the
    replication (``async`` or ``sync``), and whether the replica takes over from a primary
    that is gone (``-failover``: ``clusters.postgres.failover``)."""

    name: str = "postgres"
    process: str = "postgres"
    port: int = PORT
    ports: tuple[int, ...] = (PORT,)
    image: str = "postgres"
    packages: tuple[str, ...] = ("postgresql",)
    services: tuple[str, ...] = ("postgresql",)
    default_nodes: int = 2
    start_timeout: float = 60.0
    host_start_timeout: float | None = 120.0
    start_grace: float = BASEBACKUP_TRIES * 0.5
    version_argv: tuple[str, ...] | None = (
        "sh",
        "-c",
        '"$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)/postgres" --version',
    )
    has_leader: bool = True
    releases: Mapping[str, Release] = field(default_factory=lambda: RELEASES)
    missing: Mapping[str, str] = field(default_factory=lambda: MISSING)
    replication: str = PERSISTENCE[0]

    @property
    def failover(self) -> bool:
        """Whether the replica promotes itself when the primary is gone (``failover``)."""
        return self.replication.endswith("-failover")

    def check_size(self, n: int, unit: str = "nodes") -> None:
        """One primary and up to four replicas; a primary and one replica to fail over."""
        if self.failover and n != 2:
            raise ClusterError(
                f"{self.name} fails over between a primary and one replica: 2 {unit}, not {n}"
            )
        if n < 1 or n > MAX_NODES:
            raise ClusterError(
                f"{self.name} runs one primary and its replicas: 1 to {MAX_NODES} {unit}, not {n}"
            )

    def with_persistence(self, persistence: str | None) -> PostgresServer:
        """This server with replication ``persistence`` (None: ``async``, restarting a
        killed primary)."""
        return replace(self, replication=check_replication(persistence))

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        """postgres on ``postgresql_conf``; n1's data from initdb, the others' copied from n1."""
        conf = f"{place.conf}/postgresql.conf"
        data = f"{place.data}/pgdata"
        primary = None if node.index == 1 else peers[0]
        files = {
            conf: postgresql_conf(place.conf, self.replication),
            f"{place.conf}/pg_hba.conf": PG_HBA,
        }
        prelude = prepare(data, primary)
        if self.failover:
            other = next(p.ip for p in peers if p.name != node.name)
            script, pidfile = f"{place.conf}/watch.sh", f"{place.data}/watch.pid"
            files[script] = watcher(data, other, PORT, USER, pidfile)
            prelude += (
                rejoin(data, other, PORT, USER, BASEBACKUP_TRIES),
                start_watcher(data, script, pidfile),
            )
        return Launch(
            (*AS_POSTGRES, "postgres", "-D", data, "-c", f"config_file={conf}"),
            files=files,
            prelude=prelude,
        )

    def healthy(self, at: Address) -> bool:
        """The server answers a query (a replica once it is consistent)."""
        return role(*at) is not None

    def ready(self, ips: Mapping[str, Address]) -> bool:
        """One primary, every other node a replica streaming from it."""
        roles = {node: role(*at) for node, at in ips.items()}
        primaries = [node for node, r in roles.items() if r == "primary"]
        if len(primaries) != 1 or None in roles.values():
            return False
        streaming = probe(
            *ips[primaries[0]],
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'",
        )
        return streaming == len(ips) - 1

    def leader(self, ips: Mapping[str, Address]) -> str | None:
        """The one node not in recovery, else None."""
        primaries = [node for node, at in ips.items() if role(*at) == "primary"]
        return primaries[0] if len(primaries) == 1 else None


def role(ip: str, port: int = PORT) -> str | None:
    """``primary`` or ``replica`` as the server at ``ip`` says, None when it does not answer."""
    recovering = probe(ip, port, "SELECT pg_is_in_recovery()")
    if recovering is None:
        return None
    return "replica" if recovering else "primary"


SERVER = PostgresServer()
