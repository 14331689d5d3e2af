"""Which ZooKeeper server answered an operation, its role, and the zxids of its answer.

The evidence a stale read is judged by (``checkers.served``, ``checkers.classify``): one
client event per register operation that took effect or read (``events.jsonl``)::

    {"time": NS, "process": P, "event": "served", "server": "n1", "role": "leader",
     "position": "zxid", "hex": true, "applied": ZXID, "version": ZXID}

``server`` is the node the session's connection was to when the answer came (the peer of
``kazoo``'s socket: a client that failed over names its new server, not the one it was
given first); ``role`` is what that server's ``srvr`` said when the connection was made
(leader, follower; None when it did not answer), asked once per connection: a server
changes role only by leaving its ensemble, which closes every client connection it had
(the leader's and the learners' shutdown in ZooKeeper's ``quorum`` package).
``applied`` is the zxid of the answer's header: the last transaction the server had
applied when it answered (ZooKeeper's ``FinalRequestProcessor`` stamps every reply with
it; ``kazoo`` keeps it as ``last_zxid``). ``version`` is the znode's ``mzxid``, the
transaction that set the value read or written (a write's own zxid); None when the
node did not exist. The event is written after the answer and before the operation
returns, so it falls between the operation's invocation and its completion.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kazoo.client import KazooClient

from clusters.zookeeper.server import mode
from core.client import WorkerContext
from workloads.common.lease import EventLog

EVENT = "served"


class Served:
    """Records ``served`` events for one worker's ZooKeeper session."""

    def __init__(self, ctx: WorkerContext, names: Mapping[str, str]) -> None:
        """``names``: server IP -> node name (the cluster's endpoints)."""
        self._events = EventLog(ctx)
        self._names = dict(names)
        self._conn: Any = None
        self._server: str | None = None
        self._role: str | None = None
        self.server: str | None = None
        """The node of the last answer recorded."""

    def record(self, zk: KazooClient, version: int | None) -> None:
        """The answer ``zk`` just had (its server, role and zxids); never raises."""
        conn = getattr(zk._connection, "_socket", None)  # kazoo's current connection
        if conn is None:
            return
        if conn is not self._conn:
            self._conn = conn
            self._server, self._role = self._ask(conn)
        self.server = self._server
        try:
            self._events.record(
                EVENT,
                server=self._server,
                role=self._role,
                position="zxid",
                hex=True,
                applied=zk.last_zxid or None,
                version=version,
            )
        except OSError:  # a full disk loses the evidence, never the operation
            pass

    def _ask(self, conn: Any) -> tuple[str | None, str | None]:
        """The node a connection is to and the role its server says it has."""
        try:
            ip = str(conn.getpeername()[0])
        except (OSError, IndexError, AttributeError):
            return None, None
        return self._names.get(ip, ip), mode(ip)

    def close(self) -> None:
        self._events.close()


def names_of(endpoints: Mapping[str, str]) -> dict[str, str]:
    """Server IP -> node name, from a cluster's endpoints (node -> "ip:port")."""
    return {address.rpartition(":")[0]: node for node, address in endpoints.items()}
