"""etcd's election service as a ``workloads.election.ElectionBackend``.

``/v3/election/campaign`` with the holding's lease creates ``<name>/<lease hex>`` holding the
candidate's value and answers once it is the oldest key under ``<name>/``: the leader key.
Epoch: that key's **create revision** (the ``rev`` of the answer's leader key), which grows
from leader to leader. ``observe`` is ``/v3/election/leader`` (the oldest key: its value and
create revision); ``resign`` is ``/v3/election/resign`` of the leader key, then the lease is
revoked. A campaign whose wait runs out has an unknown outcome (info), as a lock request's:
etcd resigns a campaign cancelled while it waits (``concurrency.Election.Campaign``
deletes its key), so reading the leader then could name a key about to go, and a later
candidate be elected meanwhile (a CI run said two leaders so); the lease revoke that
follows ends it either way.
"""

from __future__ import annotations

from typing import Any

from clusters.etcd.gateway import EtcdConnection, b64, decode, encode, revision
from clusters.etcd.lock import CANCELLED
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown


class EtcdElection(EtcdConnection):
    """Campaign, observe and resign through the election service."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._leaders: dict[tuple[str, int], dict[str, Any]] = {}

    def election(self, name: str) -> str:
        return self.key("election", name)

    def campaign(self, name: str, lease: int, value: Any, wait: float) -> int:
        election = self.election(name)
        body = {"name": b64(election), "lease": lease, "value": encode(value)}
        try:
            r = self.call("/v3/election/campaign", body, f"campaign in {name}", timeout=wait)
        except OpUnknown as e:
            raise OpUnknown(f"campaign in {name}: {e}; {CANCELLED}") from None
        leader = r["leader"]
        self._leaders[(name, lease)] = leader
        return revision(leader, "rev")

    def _leader_kv(self, name: str) -> dict[str, Any] | None:
        try:
            r = self.call(
                "/v3/election/leader", {"name": b64(self.election(name))}, f"leader of {name}"
            )
        except OpFailed as e:
            if "election: no leader" in str(e):
                return None
            raise
        kv: dict[str, Any] | None = r.get("kv")
        return kv

    def observe(self, name: str) -> tuple[Any, int | None]:
        kv = self._leader_kv(name)
        return (None, None) if kv is None else (decode(kv), revision(kv))

    def resign(self, name: str, lease: int) -> None:
        leader = self._leaders.pop((name, lease), None)
        if leader is not None:
            self.call("/v3/election/resign", {"leader": leader}, f"resign from {name}")
        try:
            self.revoke(lease)
        except LeaseNotFound as e:
            raise LeaseNotFound(
                f"resign from {name}: the lease had expired, and the leadership with it ({e})"
            ) from None
