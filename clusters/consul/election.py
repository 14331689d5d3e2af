"""Consul leader election: the session lock with the candidate's value in the key.

Consul's documented election recipe: candidates acquire ``<prefix>/election/<name>``
with their session and their value; the holder leads. Epoch: the key's **LockIndex**
(see ``clusters.consul.lock``). ``observe`` reads the key (consistent): the value and
LockIndex while a session holds it, else nobody leads. ``resign`` releases the key.
"""

from __future__ import annotations

from typing import Any

from clusters.consul.api import decode
from clusters.consul.lock import ConsulHold


class ConsulElection(ConsulHold):
    """A ``workloads.election.ElectionBackend``."""

    kind = "election"

    def campaign(self, name: str, lease: str, value: Any, wait: float) -> int:
        return self.take(name, lease, wait, value)

    def resign(self, name: str, lease: str) -> None:
        self.give_up(name, lease)

    def observe(self, name: str) -> tuple[Any, int | None]:
        entry, _ = self.entry(self.key(self.kind, name))
        if entry is None or not entry.get("Session"):
            return None, None
        return decode(entry), int(entry["LockIndex"])
