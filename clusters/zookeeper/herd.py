"""The herd workload's backend on ZooKeeper (``workloads.herd.HerdBackend``), one session
per holding (``clusters.zookeeper.session``).

- naive: one ephemeral node per lock; while another holds it, set a watch on it
  (``exists``) and wait for the watch to fire, then try to create it again: every waiter
  watches the same node, so each deletion wakes them all;
- queue: the classic recipe, done here so its notifications can be counted: an ephemeral
  sequential node per waiter under the lock's path; while a lower one exists, watch the
  next lower one only (``exists``), re-reading the children after every event.

Tokens: the holding node's czxid (zxids only grow). A watch fires once; every firing
delivered is a notification (counted in the acquire's ``Tally``), never trusted: the
waiter re-reads. A firing of type ``NONE`` is no change of the node: ``kazoo`` fires every
watch of a connection that drops (its server killed or cut off:
``KazooClient._session_callback``), so it is counted as a session event, apart.
``release`` deletes the node (``LeaseNotFound`` when it was gone).

``server_counters`` reads the watches each server fired (``clusters.zookeeper.mntr``):
the service's own count of the notifications (``workloads.herd.CountsRequests``).
"""

from __future__ import annotations

import threading
import time
from typing import Any

from kazoo.exceptions import NodeExistsError
from kazoo.protocol.states import EventType, WatchedEvent

from checkers.herd_counters import NOTIFICATIONS
from clusters.zookeeper.errors import classified
from clusters.zookeeper.lock import NOT_GRANTED, ZkRecipe
from clusters.zookeeper.mntr import watch_counters
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed
from workloads.herd import Tally

QUEUE_PREFIX = "w-"


class ZkHerd(ZkRecipe):
    """A ``HerdBackend`` on the ensemble, the client's own server first; what it holds
    is given up as the lock recipe's holdings are (``ZkRecipe.give_up``)."""

    def acquire_naive(self, name: str, lease: int, wait: float, tally: Tally) -> int:
        zk = self.client(lease)
        path = self.path("herd-naive", name)
        deadline = time.monotonic() + wait
        while True:
            tally.request("create")
            with classified(f"create {path}", session_bound=True):
                try:
                    _, stat = zk.create(path, ephemeral=True, makepath=True, include_data=True)
                    self._nodes[(name, lease)] = path
                    return int(stat.czxid)
                except NodeExistsError:
                    pass
            tally.failed()
            self._wait_gone(path, deadline, wait, tally)

    def acquire_queue(self, name: str, lease: int, wait: float, tally: Tally) -> int:
        zk = self.client(lease)
        folder = self.path("herd-queue", name)
        deadline = time.monotonic() + wait
        tally.request("create")
        with classified(f"create under {folder}", session_bound=True):
            mine, stat = zk.create(
                f"{folder}/{QUEUE_PREFIX}",
                ephemeral=True,
                sequence=True,
                makepath=True,
                include_data=True,
            )
        node = mine.rsplit("/", 1)[1]
        while True:
            tally.request("getChildren")
            with classified(f"children of {folder}", session_bound=True):
                children = sorted(zk.get_children(folder), key=_sequence)
            if node not in children:
                raise LeaseNotFound(f"lock {name}: own node {mine} vanished (session expired)")
            before = children[: children.index(node)]
            if not before:
                self._nodes[(name, lease)] = mine
                return int(stat.czxid)
            tally.failed()
            self._wait_gone(f"{folder}/{before[-1]}", deadline, wait, tally)

    def _wait_gone(self, path: str, deadline: float, wait: float, tally: Tally) -> None:
        """Set a watch on ``path`` and wait until it fires (a notification) or the wait
        runs out (``not granted``); at once when the node is already gone."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise OpFailed(f"{NOT_GRANTED}: {path} still there after {wait:g} s")
        fired = threading.Event()
        seen: list[WatchedEvent] = []

        def watch(event: WatchedEvent) -> None:
            seen.append(event)
            fired.set()

        tally.request("exists")
        with classified(f"watch {path}", session_bound=True):
            exists = self.zk.exists(path, watch=watch) if self.zk is not None else None
        if exists is None:
            return  # gone already: re-read at once
        if not fired.wait(left):
            return
        event = seen[0]
        if event.type == EventType.NONE:  # the connection's state, not the node's
            tally.session_event(f"connection {event.state} fired the watch of {path}")
        else:
            tally.notified(f"{event.type} of {path}")

    def server_counters(self) -> dict[str, Any]:
        """``workloads.herd.CountsRequests``: each server's watches fired."""
        return watch_counters(self.addresses, (NOTIFICATIONS,))

    def release(self, name: str, lease: int) -> None:
        """Delete the holding's node; ``LeaseNotFound`` when it was already gone."""
        self.give_up(name, lease)


def _sequence(child: str) -> int:
    """The sequence number ZooKeeper appended to a queue node's name."""
    return int(child.rsplit("-", 1)[1])
