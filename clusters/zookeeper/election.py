"""ZooKeeper leader election: the lock recipe with the candidate's value as node data.

``campaign`` is ``kazoo``'s ``Lock`` under ``<prefix>/election/<name>`` with the candidate's
value (JSON) as its identifier (exactly what ``kazoo``'s ``Election`` recipe does, without
its callback style); the leader is the contender with the lowest sequence number. Epoch:
the leader node's **czxid** (see ``clusters.zookeeper.lock``). ``observe`` lists the
contenders, takes the lowest and reads its value and czxid. ``resign`` deletes the node.
"""

from __future__ import annotations

import json
import re
from typing import Any

from kazoo.exceptions import NoNodeError

from clusters.zookeeper.errors import classified
from clusters.zookeeper.lock import ZkRecipe

SEQUENCE = re.compile(r"__lock__(\d{10})$")
"""``kazoo``'s contender node names end with ``__lock__`` and a 10-digit sequence number."""


class ZkElection(ZkRecipe):
    """A ``workloads.election.ElectionBackend``."""

    kind = "election"

    def campaign(self, name: str, lease: int, value: Any, wait: float) -> int:
        return self.take(name, lease, wait, json.dumps(value))

    def resign(self, name: str, lease: int) -> None:
        self.give_up(name, lease)

    def observe(self, name: str) -> tuple[Any, int | None]:
        zk = self.observer()
        path = self.path(self.kind, name)
        with classified(f"contenders of {path}"):
            children = zk.get_children(path) if zk.exists(path) else []
            contenders = sorted((m.group(1), c) for c in children if (m := SEQUENCE.search(c)))
            for _, child in contenders:
                try:
                    data, stat = zk.get(f"{path}/{child}")
                except NoNodeError:
                    continue  # gone since the listing: the next one leads
                return (json.loads(data) if data else None), int(stat.czxid)
        return None, None
