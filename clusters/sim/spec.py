"""The ``sim`` target: the built-in service (leases, a fencing lock, CAS registers and
elections) in one local server process (``clusters.sim.local``, on the local-process
backend), no Docker needed. One node on loopback: client pauses, server pauses and kills
only; ``--sim-bug`` injects known bugs."""

from __future__ import annotations

from clusters.sim.service import BUGS
from clusters.spec import CLIENT_CLOCK, Bug, Bugs, Offer, TargetSpec, variants
from core.abilities import Ability
from core.faults import KILL
from workloads.herd import RECIPES

CLIENTS = "clusters.sim.clients"
ONE_NODE = (
    "the {target} target has one node on loopback: {fault} faults need a real cluster "
    "(--target {real})"
)

LOCKS = ("lock", "herd")
REGISTERS = ("cas-register", "version-cas", "unique-key", "unique-ids")
BUG_TABLE = {
    "lock-ignores-lease": Bug(BUGS["lock-ignores-lease"], LOCKS),
    "token-reuse": Bug(BUGS["token-reuse"], LOCKS),
    "stale-read": Bug(BUGS["stale-read"], REGISTERS),
    "epoch-reuse": Bug(BUGS["epoch-reuse"], ("election",)),
    "forget-on-restart": Bug(BUGS["forget-on-restart"], fault=KILL.name),
}
"""The bugs the service injects, the workloads whose operations meet each (its lock
grants, its register reads, its elections) and the fault a bug needs to show."""


SPEC = TargetSpec(
    name="sim",
    description="the built-in service, one local process (no Docker), bugs to inject",
    default_nodes=1,
    offers={
        "lock": Offer(variants={"sim": f"{CLIENTS}:LOCK"}),
        "cas-register": Offer(f"{CLIENTS}:CAS_REGISTER"),
        "election": Offer(f"{CLIENTS}:ELECTION"),
        "registry": Offer(f"{CLIENTS}:REGISTRY"),
        "version-cas": Offer(f"{CLIENTS}:VERSION_CAS"),
        "unique-key": Offer(f"{CLIENTS}:UNIQUE_KEY"),
        "unique-ids": Offer(
            variants={"counter": f"{CLIENTS}:COUNTER_IDS", "snowflake": f"{CLIENTS}:SNOWFLAKE_IDS"}
        ),
        "herd": variants(f"{CLIENTS}:HERD", RECIPES),
        "watch": Offer(f"{CLIENTS}:WATCH"),
    },
    server="clusters.sim.local:SERVER",
    linearizable_locks=True,
    checks=(Bugs(BUG_TABLE),),
    abilities=frozenset({Ability.KILL, Ability.PAUSE}),
    lacks={
        **dict.fromkeys((Ability.NETWORK, Ability.LOSE_PACKETS), ONE_NODE),
        Ability.CLOCK: ONE_NODE + CLIENT_CLOCK,
    },
)
