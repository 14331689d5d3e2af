"""Consul as a ``workloads.discovery.RegistryBackend``: a service with a TTL check.

``register`` registers the member as an instance of the run's service on the agent the
instance talks to, with a TTL health check (``Status`` passing from the start) and
``DeregisterCriticalServiceAfter`` 1 min (Consul's minimum: the agent reaps critical
services every 30 s, so a dead instance is deregistered 1-1.5 min after its check went
critical); the keeper passes the check (``/v1/agent/check/pass``); ``members`` is the
passing instances of the service (``/v1/health/service/<name>?passing``, answered by the
leader: Consul's default consistency mode).

Grace: a TTL check goes critical when its TTL passes without an update (Consul's docs,
"Checks: TTL"; ``agent/checks/check.go``, ``CheckTTL``), and the agent syncs a changed
status to the servers at once (``agent/local/state.go``, ``TriggerSyncChanges``): one
RPC, 1 s allowed. A check whose agent is cut off from the servers is judged by the
servers' view (its node's ``serfHealth``).
"""

from __future__ import annotations

import json

from clusters.consul.api import ConsulConnection
from clusters.consul.errors import answer_error
from workloads.common.lease import LeaseNotFound

DEREGISTER_AFTER = "1m"
GONE = ("unknown check", "does not have associated ttl", "not found")


def check_id(member: str) -> str:
    return f"service:{member}"


class ConsulDiscovery(ConsulConnection):
    """Registration (agent services with TTL checks) and listing (passing instances)."""

    GRACE = 1.0

    def register(self, member: str, ttl: float) -> str:
        check = {
            "CheckID": check_id(member),
            "TTL": f"{ttl:g}s",
            "Status": "passing",
            "DeregisterCriticalServiceAfter": DEREGISTER_AFTER,
        }
        body = {"ID": member, "Name": self.prefix, "Check": check}
        self.call("PUT", "/agent/service/register", f"register {member}", data=json.dumps(body))
        return member

    def keepalive(self, lease: str) -> float:
        what = f"pass of the check of {lease}"
        r = self.call("PUT", f"/agent/check/pass/{check_id(lease)}", what, allow=(404, 500))
        if r.status != 200:
            if any(g in r.text.lower() for g in GONE):
                raise LeaseNotFound(f"{what}: HTTP {r.status}: {r.text.strip()[:200]}")
            raise answer_error(r.status, r.text, f"{what} on {self.address}")
        return 0.0

    def revoke(self, lease: str) -> None:
        self.call("PUT", f"/agent/service/deregister/{lease}", f"deregister {lease}")

    def members(self) -> list[str]:
        r = self.call("GET", f"/health/service/{self.prefix}", "list members", {"passing": ""})
        return [str(e["Service"]["ID"]) for e in r.json()]
