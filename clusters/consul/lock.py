"""Consul's lock, ``session``: KV acquire with a TTL session (Consul's lock recipe).

A holding is a key acquired with the holding's session (``PUT /v1/kv/<key>?acquire=<id>``,
answered true or false): at most one session holds a key at once, and the key is released
when its session is destroyed or invalidated (the session TTL ran out without renewal).
``acquire`` tries, and while another session holds the key waits with a blocking query
on the key for its next change, re-trying after each (a notification only), up to
``wait`` s. Token: the key's **LockIndex**, the number of times it has been acquired:
Consul's documented sequencer for fencing; it only grows because the key is never
deleted (sessions use behaviour ``release``). The ModifyIndex of the acquire would grow
too, but any write to the key (a release) moves it. ``release`` is ``?release=<id>``:
false (``LeaseNotFound``, fail) when the session no longer held it.
``clusters.consul.election`` uses the same steps.
"""

from __future__ import annotations

import time
from typing import Any

from checkers.refusals import NOT_GRANTED
from clusters.consul.api import ConsulConnection, encode
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed


class ConsulHold(ConsulConnection):
    """Take and give up keys held by a session."""

    kind = "lock"

    def take(self, name: str, session: str, wait: float, value: Any = None) -> int:
        """Wait up to ``wait`` s for ``session`` to hold ``name``; its LockIndex."""
        key = self.key(self.kind, name)
        deadline = time.monotonic() + wait
        while True:
            r = self.call(
                "PUT",
                f"/kv/{key}",
                f"acquire {key}",
                params={"acquire": session},
                data=encode(value),
            )
            entry, index = self.entry(key)
            if r.json() is True:
                if entry is None or entry.get("Session") != session:
                    raise LeaseNotFound(f"acquire {key}: granted, then lost at once")
                return int(entry["LockIndex"])
            left = deadline - time.monotonic()
            if left <= 0:
                raise OpFailed(f"{NOT_GRANTED}: {name} held by another for {wait:g} s")
            if entry is not None and entry.get("Session"):
                self.wait_change(key, index, left)

    def give_up(self, name: str, session: str) -> None:
        key = self.key(self.kind, name)
        r = self.call("PUT", f"/kv/{key}", f"release {key}", params={"release": session})
        if r.json() is not True:
            raise LeaseNotFound(f"release {key}: session {session} no longer held it")


class ConsulLock(ConsulHold):
    """A ``workloads.lock.LockBackend``."""

    def acquire(self, name: str, lease: str, wait: float) -> int:
        return self.take(name, lease, wait)

    def release(self, name: str, lease: str) -> None:
        self.give_up(name, lease)
