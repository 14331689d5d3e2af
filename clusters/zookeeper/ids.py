"""ZooKeeper's id generator (``workloads.ids.IdBackend``): sequential nodes.

Each id is a ``create`` of ``/<prefix>/ids/id-`` with the sequence flag: the parent's
counter, raised by every child created under it (a write through the leader, committed by
ZAB), is appended to the name, and the id is that number.
"""

from __future__ import annotations

from clusters.zookeeper.errors import classified
from clusters.zookeeper.session import LongSession


class ZkSequential(LongSession):
    """Sequential children of ``/<prefix>/ids``."""

    def next_id(self) -> int:
        zk, path = self.observer(), self.path("ids", "id-")
        with classified(f"sequential create of {path}"):
            created = zk.create(path, b"", sequence=True, makepath=True)
        return int(created.rsplit("-", 1)[1])
