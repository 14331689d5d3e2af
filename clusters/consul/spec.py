"""The Consul target: Consul 1.8.7 servers in Docker or on SSH hosts.

Lock implementation (``--lock``): ``session`` (KV acquire with a TTL session). Read modes
(``--read-mode``, cas-register): ``default`` (default), ``consistent`` and ``stale``.
Session TTLs from 1 s (the servers' configured minimum, ``SESSION_TTL_MIN``) to 24 h.
Consul is a Go program: no clock faults in Docker. Consul left Debian after bullseye (its
licence changed upstream): on SSH hosts its package comes from bullseye; bullseye's consul
1.8.7 is a static Go binary, so it runs on bookworm and trixie hosts too, and our Docker
image installs the same package the same way (``clusters/consul/Dockerfile``).
"""

from __future__ import annotations

from clusters.spec import NO_GO_CLOCK, LeaseTtl, Offer, ServiceRule, TargetSpec, variants
from core.abilities import SERVER_ABILITIES, Ability
from workloads.herd import NAIVE, QUEUE

SESSION_TTL_MIN = 1.0
"""Seconds: the shortest session TTL the servers accept (their configuration too)."""
SESSION_TTL_MAX = 86400.0
READ_MODES = ("default", "consistent", "stale")
CLIENTS = "clusters.consul.clients"

SESSIONS_DOC = "https://developer.hashicorp.com/consul/docs/automate/session"
RULES = (
    ServiceRule(
        "session lock-delay",
        "0 s",
        "15 s",
        "a lock released by an invalidated session may be taken again at once; with "
        "Consul's default no one could take it for 15 s, which hides a stale holder's "
        "overlap (clusters/consul/api.py)",
        SESSIONS_DOC,
    ),
    ServiceRule(
        "session TTL",
        "a lower bound",
        None,
        "Consul invalidates a session no sooner than its TTL after its last renewal and "
        "may wait up to twice the TTL (its leader arms the session's timer at TTL x "
        "SessionTTLMultiplier, 2, in agent/consul/session_ttl.go): a takeover measured from "
        "last renewal + TTL can come up to one TTL later without any fault",
        "https://github.com/hashicorp/consul/pull/524",
        expiry_ttls=2.0,
    ),
)
"""What a verdict on Consul depends on: said with every run (``ServiceRule``)."""

NO_QUEUE = {
    QUEUE: "Consul has no queue of waiters (its semaphore, like its lock, has every "
    "contender block on the same keys, so each change wakes them all)"
}
"""The herd recipe Consul does not offer, and why."""

SPEC = TargetSpec(
    name="consul",
    description="Consul 1.8.7 servers (Debian bullseye), Raft; locks via sessions",
    default_nodes=3,
    offers={
        "lock": Offer(variants={"session": f"{CLIENTS}:SESSION_LOCK"}),
        "cas-register": variants(f"{CLIENTS}:REGISTER", READ_MODES),
        "election": Offer(f"{CLIENTS}:ELECTION"),
        "registry": Offer(f"{CLIENTS}:REGISTRY"),
        "herd": variants(f"{CLIENTS}:HERD", (NAIVE,), lacks=NO_QUEUE),
        "watch": Offer(f"{CLIENTS}:WATCH"),
    },
    server="clusters.consul.server:SERVER",
    image="consul",
    checks=(LeaseTtl(SESSION_TTL_MIN, SESSION_TTL_MAX),),
    linearizable_locks=True,
    abilities=SERVER_ABILITIES - {Ability.CLOCK},
    lacks=NO_GO_CLOCK,
    rules=RULES,
)
