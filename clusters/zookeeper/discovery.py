"""ZooKeeper as a ``workloads.discovery.RegistryBackend``: an ephemeral node per member.

``register`` opens a session whose timeout is the TTL (``ZkSession.grant_lease``) and
creates the ephemeral ``<root>/registry/<member>`` on it; the session lives while kazoo
pings and the keeper's round trips reach the ensemble; ``members`` lists the children
from a long-lived session (a plain read, answered by the server the client is connected
to: sequentially consistent, possibly behind the leader).

Grace: the leader expires sessions in buckets of one tick (``SessionTrackerImpl`` and its
``ExpiryQueue`` round each expiry up to the next tick; 500 ms here,
``clusters.zookeeper.server``), and the close that deletes the ephemeral nodes is one
ZAB commit: two ticks, 1 s. A new leader gives every session a full timeout again (the
checker counts a TTL from the end of a service fault).
"""

from __future__ import annotations

from kazoo.exceptions import NodeExistsError, NoNodeError

from clusters.zookeeper.errors import classified
from clusters.zookeeper.session import ZkSession


class ZkDiscovery(ZkSession):
    """Registration (ephemeral nodes) and listing (children) on ZooKeeper."""

    GRACE = 1.0

    def register(self, member: str, ttl: float) -> int:
        lease = self.grant_lease(ttl)
        zk = self.client(lease)
        path = self.path("registry", member)
        with classified(f"register {member}"):
            try:
                zk.create(path, b"", ephemeral=True, makepath=True)
            except NodeExistsError:
                pass  # created by this very request before a retry: ours
        return lease

    def members(self) -> list[str]:
        with classified("list members"):
            try:
                return list(self.observer().get_children(self.path("registry")))
            except NoNodeError:
                return []
