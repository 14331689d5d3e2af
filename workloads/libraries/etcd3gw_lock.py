"""``--lock etcd3gw``: etcd3gw's ``Lock`` over etcd's gRPC gateway, as etcd3gw's
documentation shows it::

    client = etcd3gw.client(host=..., port=...)
    lock = client.lock(id, ttl)
    lock.acquire()        # one try: True when the key was created under a new lease
    lock.refresh()        # keep the lease alive
    lock.release()        # True, or False when the key is no longer its own
    lock.is_acquired()

etcd3gw has no renewal of its own and no blocking acquire: the application refreshes and
retries, as this one does: ``acquire`` tries every ``RETRY_S`` until ``wait`` runs out, and
a thread refreshes the lease every third of the TTL while held (frozen with the worker on
a pause, as an application's would be). A refresh that finds the lease gone (etcd answers
a TTL of 0 or less) is a loss the lock then says. The TTL is an etcd lease's, in whole
seconds. No fencing token: the lock does not give the key's revision.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, Final

from workloads.lock.own import Held, LockLost

RETRY_S: Final = 0.1
"""How often a waiting ``acquire`` tries again."""


class Refresher:
    """Refreshes a held lock's lease every third of its TTL until stopped; ``lost``: a
    refresh found the lease gone."""

    def __init__(self, lock: Any, ttl: float) -> None:
        self.lock, self.every = lock, max(0.1, ttl / 3)
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="etcd3gw-refresh")
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                if int(self.lock.refresh()) <= 0:
                    self.lost = True
                    return
            except Exception:  # a failed request: tried again at the next beat
                continue

    def stop(self) -> None:
        self._stop.set()


class Etcd3gwLock:
    """etcd3gw's client of the worker's server and its locks."""

    def __init__(self, endpoints: Sequence[str], settings: Mapping[str, Any]) -> None:
        import etcd3gw  # the library's environment's, on the worker's path by now

        host, _, port = endpoints[0].rpartition(":")
        self.client = etcd3gw.client(host=host, port=int(port), timeout=float(settings["timeout"]))

    def acquire(self, name: str, ttl: float, wait: float) -> Held | None:
        lock = self.client.lock(id=name, ttl=max(1, round(ttl)))
        deadline = time.monotonic() + wait
        while not lock.acquire():
            if time.monotonic() + RETRY_S > deadline:
                return None
            time.sleep(RETRY_S)
        return Held(None, (lock, Refresher(lock, ttl)))

    def still_held(self, name: str, held: Held) -> bool | None:
        lock, refresher = held.handle
        return False if refresher.lost else bool(lock.is_acquired())

    def release(self, name: str, held: Held) -> None:
        lock, refresher = held.handle
        refresher.stop()
        if not lock.release():
            raise LockLost("etcd3gw's release answered False: the key is no longer its own")

    def close(self) -> None:
        self.client.session.close()


def make(endpoints: Sequence[str], settings: Mapping[str, Any]) -> Etcd3gwLock:
    """The client of one worker."""
    return Etcd3gwLock(endpoints, settings)
