"""The ZooKeeper target: a ZooKeeper 3.9 ensemble in Docker or on SSH hosts.

Lock implementation (``--lock``): ``recipe`` (``kazoo``'s lock on a session per holding).
Read modes (``--read-mode``, cas-register): ``plain`` (default) and ``sync``. The lease TTL
is the session timeout; the ensemble grants 1-60 s (``MIN_SESSION_MS``, ``MAX_SESSION_MS``,
its configuration too), and other values are refused up front.
"""

from __future__ import annotations

from clusters.spec import LeaseTtl, TargetSpec

MIN_SESSION_MS = 1000
MAX_SESSION_MS = 60000
READ_MODES = ("plain", "sync")
CLIENTS = "clusters.zookeeper.clients"

SPEC = TargetSpec(
    name="zookeeper",
    description="ZooKeeper 3.9 ensemble (Debian trixie), ZAB; locks via ephemeral nodes",
    default_nodes=3,
    workloads={
        "cas-register": f"{CLIENTS}:REGISTER",
        "election": f"{CLIENTS}:ELECTION",
        "registry": f"{CLIENTS}:REGISTRY",
        "herd": f"{CLIENTS}:HERD",
        "watch": f"{CLIENTS}:WATCH",
    },
    locks={"recipe": f"{CLIENTS}:RECIPE_LOCK"},
    default_lock="recipe",
    id_generators={
        "sequential": f"{CLIENTS}:SEQUENTIAL_IDS",
        "snowflake": f"{CLIENTS}:SNOWFLAKE_IDS",
    },
    server="clusters.zookeeper.server:SERVER",
    image="zookeeper",
    read_modes=READ_MODES,
    lease_ttl=LeaseTtl(MIN_SESSION_MS / 1000, MAX_SESSION_MS / 1000),
    linearizable_locks=True,
)
