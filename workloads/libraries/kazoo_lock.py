"""``--lock kazoo``: kazoo's ``Lock`` recipe, as kazoo's documentation shows it::

    zk = KazooClient(hosts=..., timeout=ttl)
    zk.start()
    lock = zk.Lock(path, identifier)
    lock.acquire(timeout=wait)     # True, or LockTimeout when not granted in ``wait`` s
    lock.release()

The lock is an ephemeral sequential node: it lasts while the client's session does, and
kazoo's connection thread keeps the session (its pings) for the session ``timeout``, the
TTL. kazoo's documentation says to watch the connection state with ``add_listener``: a
``LOST`` state means the lock is certainly lost; ``still_held`` answers False once the
session was lost since the grant, and the lock's ``is_acquired`` otherwise.

No fencing token: the lock node's sequence number would be one, but kazoo keeps the
node's name in an attribute its API reference does not describe (``Lock.node``); the
documented API is ``acquire``, ``release``, ``cancel``, ``contenders`` and
``is_acquired``. ``release()`` deletes the node and says nothing when it was gone (a
session that expired took it): the loss is not said on release.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

from workloads.lock.own import Held


class KazooLock:
    """kazoo's client over every server (the worker's own first) and its locks."""

    def __init__(self, endpoints: Sequence[str], settings: Mapping[str, Any]) -> None:
        # the library's environment's kazoo (on the worker's path by now), not the harness's
        from kazoo.client import KazooClient
        from kazoo.exceptions import LockTimeout
        from kazoo.protocol.states import KazooState

        self.timed_out, self.lost_state = LockTimeout, KazooState.LOST
        self.identifier = f"harness-{settings['client']}"
        self.zk = KazooClient(
            hosts=",".join(endpoints), timeout=float(settings["ttl"]), randomize_hosts=False
        )
        self.zk.start(timeout=float(settings["timeout"]))
        self._losses = 0
        self._guard = threading.Lock()
        self.zk.add_listener(self._listen)

    def _listen(self, state: str) -> None:
        if state == self.lost_state:
            with self._guard:
                self._losses += 1

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        lock = self.zk.Lock(f"/{name}", self.identifier)
        with self._guard:
            losses = self._losses
        try:
            granted = lock.acquire(timeout=wait)
        except self.timed_out:
            return None
        return Held(None, (lock, losses)) if granted else None

    def still_held(self, name: str, held: Held) -> bool | None:
        lock, losses = held.handle
        with self._guard:
            if self._losses != losses:
                return False
        return bool(lock.is_acquired)

    def release(self, name: str, held: Held) -> None:
        lock, _ = held.handle
        lock.release()

    def close(self) -> None:
        self.zk.stop()
        self.zk.close()


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> KazooLock:
    """The client of one worker."""
    return KazooLock(endpoints, settings)
