"""ZooKeeper's lock, ``recipe``: ``kazoo``'s ``Lock`` on the holding's session.

The classic recipe: each contender creates an ephemeral sequential node under the lock's
path and waits until no node with a lower sequence number is left, watching only its
predecessor (``kazoo`` does this, and re-finds its node after a lost answer). Token: the
lock node's **czxid**, the transaction id that created it: ZooKeeper's zxids only grow, so a
later holder's node always has a higher one (the sequence number would only be ordered
within one lock). ``release`` deletes the node itself (``kazoo``'s release quietly ignores a
node that is already gone, and the workload must know): ``LeaseNotFound`` (fail) when it
was gone, with the session. ``clusters.zookeeper.election`` uses the same recipe.

``kazoo``'s ``acquire(timeout=...)`` restarts its wait each time the predecessor changes,
so a contender deep in the queue could block for many timeouts; a timer cancels the
attempt when ``wait`` s have passed in all (kazoo then removes its node).
"""

from __future__ import annotations

import threading
from typing import Any

from kazoo.exceptions import CancelledError, LockTimeout
from kazoo.recipe.lock import Lock

from checkers.refusals import NOT_GRANTED
from clusters.zookeeper.errors import classified
from clusters.zookeeper.session import ZkSession
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed


class ZkRecipe(ZkSession):
    """Take and give up ephemeral-sequential holdings on the session of the holding."""

    kind = "lock"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._nodes: dict[tuple[str, int], str] = {}

    def take(self, name: str, lease: int, wait: float, identifier: str = "") -> int:
        """Wait up to ``wait`` s to hold ``name``; the czxid of the holding's node."""
        zk = self.client(lease)
        path = self.path(self.kind, name)
        lock = Lock(zk, path, identifier)
        deadline = threading.Timer(wait, lock.cancel)
        deadline.start()
        try:
            with classified(f"{self.kind} {name}"):
                try:
                    got = lock.acquire(timeout=wait)
                except (LockTimeout, CancelledError):
                    got = False  # the wait ran out with another holding it: not granted
        finally:
            deadline.cancel()
        if not got or lock.node is None:
            raise OpFailed(f"{NOT_GRANTED}: {name} held by another for {wait:g} s")
        node = f"{path}/{lock.node}"
        with classified(f"stat of {node}", session_bound=True):
            stat = zk.exists(node)
        if stat is None:
            raise LeaseNotFound(f"{self.kind} {name}: node {node} gone right after the grant")
        self._nodes[(name, lease)] = node
        return int(stat.czxid)

    def give_up(self, name: str, lease: int) -> None:
        """Delete the holding's node; ``LeaseNotFound`` when it was already gone."""
        node = self._nodes.pop((name, lease), None)
        if node is None:
            raise LeaseNotFound(f"{self.kind} {name}: not held on session {lease:x}")
        zk = self.client(lease)
        with classified(f"delete {node}", session_bound=True):
            zk.delete(node)


class ZkLock(ZkRecipe):
    """A ``workloads.lock.LockBackend``."""

    def acquire(self, name: str, lease: int, wait: float) -> int:
        return self.take(name, lease, wait)

    def release(self, name: str, lease: int) -> None:
        self.give_up(name, lease)
