"""The ZooKeeper target: a ZooKeeper 3.9 ensemble in Docker or on SSH hosts.

Lock implementation (``--lock``): ``recipe`` (``kazoo``'s lock on a session per holding),
and the lock libraries ``LIBRARIES`` (kazoo's ``Lock`` as its documentation shows it, tooz's).
Read modes (``--read-mode``, cas-register): ``plain`` (default) and ``sync``, neither of
them linearizable by ZooKeeper's own account (``RULES``). The lease TTL
is the session timeout; the ensemble grants 1-60 s (``MIN_SESSION_MS``, ``MAX_SESSION_MS``,
its configuration too), and other values are refused up front. Persistence
(``--persistence``): ``force-sync`` (ZooKeeper's default: the transaction log fsynced before
a server acknowledges a write) or ``no-force-sync`` (``forceSync=no``); what a power cut
takes under each is in ``RULES``, and the power-loss fault shows it.
"""

from __future__ import annotations

from clusters.spec import (
    DURING_POWER_LOSS,
    KERNEL_WRITEBACK_S,
    LeaseTtl,
    Offer,
    ServiceRule,
    TargetSpec,
    variants,
)
from core.abilities import SERVER_ABILITIES, Ability
from workloads.herd import RECIPES
from workloads.libraries.library_registry import library_variants, unfenced_libraries

MIN_SESSION_MS = 1000
MAX_SESSION_MS = 60000
READ_MODES = ("plain", "sync")
PERSISTENCE = ("force-sync", "no-force-sync")
"""ZooKeeper's transaction log fsynced before a write is acknowledged (``forceSync``, its
default), or not (``forceSync=no``)."""
CLIENTS = "clusters.zookeeper.clients"
LIBRARIES = ("tooz-zookeeper", "kazoo")
"""The lock libraries that run on ZooKeeper (``workloads.libraries.library_registry``)."""

CONSISTENCY_DOC = "https://zookeeper.apache.org/doc/r3.9.3/zookeeperInternals.html#sc_consistency"
"""ZooKeeper's own account of its consistency guarantees (the release our image runs)."""
RULES = (
    ServiceRule(
        "a read",
        "is answered by one server from its own state",
        None,
        "ZooKeeper's reads are sequentially consistent, not linearizable: a read is not a "
        "quorum operation, and the server a client is connected to answers it at once from "
        "what it has applied, which may lag the leader",
        CONSISTENCY_DOC,
        when={"workload": ("cas-register",), "read_mode": (None, "plain")},
        explains="stale-read",
    ),
    ServiceRule(
        "a sync before a read",
        "is not a quorum operation",
        None,
        "sync then read is ZooKeeper's documented workaround, which it says does not "
        "strictly guarantee up-to-date data; the leader lets a sync from its own clients "
        "through like a read (its CommitProcessor's matchSyncs is false) and sends a commit "
        "to its followers before it applies it itself (Leader.tryToCommit), so a read "
        "through the leader can miss a write a follower has already acknowledged",
        CONSISTENCY_DOC,
        when={"workload": ("cas-register",), "read_mode": ("sync",)},
        explains="stale-read",
    ),
)
"""What a verdict on ZooKeeper's registers depends on: said with the runs they are about
(``ServiceRule``); a stale read under them is named as their doing, with the servers'
roles and zxids the run recorded (``clusters.zookeeper.served``)."""

UNSAFE_DOC = "https://zookeeper.apache.org/doc/r3.9.3/zookeeperAdmin.html#Unsafe+Options"
"""ZooKeeper's admin guide on ``forceSync``, among its unsafe options."""
DURABILITY = (
    ServiceRule(
        "forceSync",
        "yes",
        None,
        "every server fsyncs its transaction log before it acknowledges a proposal, and the "
        "leader answers a write once a quorum acknowledged it: a power cut loses nothing "
        "acknowledged ('requires updates to be synced to media of the transaction log "
        "before finishing processing the update')",
        UNSAFE_DOC,
        when={"persistence": (None, "force-sync"), **DURING_POWER_LOSS},
        lost_within_s=0.0,
    ),
    ServiceRule(
        "forceSync",
        "no",
        "yes",
        "servers acknowledge a proposal once it is written to the operating system, not "
        "synced ('ZooKeeper will not require updates to be synced to the media'): a power "
        "cut of a quorum may lose acknowledged writes, those the kernel had not written "
        f"back yet (Linux's defaults: up to {KERNEL_WRITEBACK_S:g} s old)",
        UNSAFE_DOC,
        when={"persistence": ("no-force-sync",), **DURING_POWER_LOSS},
        lost_within_s=KERNEL_WRITEBACK_S,
    ),
)
"""What a power cut may take under each ``forceSync`` setting (``checkers.durability``)."""

SPEC = TargetSpec(
    name="zookeeper",
    description="ZooKeeper 3.9 ensemble (Debian trixie), ZAB; locks via ephemeral nodes",
    default_nodes=3,
    offers={
        "lock": Offer(
            variants={"recipe": f"{CLIENTS}:RECIPE_LOCK", **library_variants(*LIBRARIES)},
            unfenced=unfenced_libraries(*LIBRARIES),
        ),
        "cas-register": variants(f"{CLIENTS}:REGISTER", READ_MODES),
        "election": Offer(f"{CLIENTS}:ELECTION"),
        "registry": Offer(f"{CLIENTS}:REGISTRY"),
        "unique-ids": Offer(
            variants={
                "sequential": f"{CLIENTS}:SEQUENTIAL_IDS",
                "snowflake": f"{CLIENTS}:SNOWFLAKE_IDS",
            }
        ),
        "herd": variants(f"{CLIENTS}:HERD", RECIPES),
        "watch": Offer(f"{CLIENTS}:WATCH"),
    },
    server="clusters.zookeeper.server:SERVER",
    image="zookeeper",
    checks=(LeaseTtl(MIN_SESSION_MS / 1000, MAX_SESSION_MS / 1000),),
    linearizable_locks=True,
    rules=RULES + DURABILITY,
    persistence=PERSISTENCE,
    abilities=SERVER_ABILITIES | {Ability.POWER_LOSS},
)
