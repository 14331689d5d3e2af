"""etcd as a ``workloads.discovery.RegistryBackend``: a member key on a lease.

``register`` grants a lease of the TTL and puts ``<prefix>/registry/<member>`` on it; the
keeper renews the lease (``/v3/lease/keepalive``); ``members`` is a linearizable range
read of the prefix (through Raft's read index: a member cut off from the leader fails
rather than answer stale).

Grace: etcd's leader checks for expired leases every 500 ms and revokes them through
Raft (``server/lease/lessor.go``, ``runLoop``: ``revokeExpiredLeases`` then
``time.Sleep(500 * time.Millisecond)``), so a dead member's key goes 0.5 s after its TTL
plus one Raft commit: 1 s in all. A new leader extends every lease by its election
timeout (``Promote``): the checker counts a TTL from the end of a service fault.
"""

from __future__ import annotations

from clusters.etcd.gateway import EtcdConnection, b64, encode, prefix_end, unb64


class EtcdDiscovery(EtcdConnection):
    """Registration and listing on etcd."""

    GRACE = 1.0

    def _dir(self) -> str:
        return self.key("registry") + "/"

    def register(self, member: str, ttl: float) -> int:
        lease = self.grant_lease(ttl)
        body = {"key": b64(self._dir() + member), "value": encode(member), "lease": lease}
        self.call("/v3/kv/put", body, f"register {member}")
        return lease

    def members(self) -> list[str]:
        d = self._dir()
        body = {"key": b64(d), "range_end": prefix_end(d), "keys_only": True}
        kvs = self.call("/v3/kv/range", body, "list members").get("kvs", [])
        return [unb64(kv["key"]).removeprefix(d) for kv in kvs]
