"""What the lock libraries' adapters share: a ``Held`` whose handle is the library's own
lock object, released through it, its "not held" errors said as ``LockLost``."""

from __future__ import annotations

from typing import Any

from workloads.lock.own import Held, LockLost


class HandleLock:
    """An ``OwnLock`` whose holdings are the library's lock objects (``Held.handle``);
    ``not_held``: the library's errors of a release of a lock it no longer held."""

    not_held: tuple[type[Exception], ...] = ()
    redis: Any

    def release(self, name: str, held: Held) -> None:
        try:
            held.handle.release()
        except self.not_held as e:
            raise LockLost(str(e)) from e

    def close(self) -> None:
        self.redis.close()
