"""etcd's election service as a ``workloads.election.ElectionBackend``.

``/v3/election/campaign`` with the holding's lease creates ``<name>/<lease hex>`` holding the
candidate's value and answers once it is the oldest key under ``<name>/``: the leader key.
Epoch: that key's **create revision** (the ``rev`` of the answer's leader key), which grows
from leader to leader. ``observe`` is ``/v3/election/leader`` (the oldest key: its value and
create revision); ``resign`` is ``/v3/election/resign`` of the leader key, then the lease is
revoked. A campaign whose wait runs out is settled like a lock's: if the client's key is
the leader key by then it leads (ok), else ``not elected`` (fail; the lease revoke that
follows deletes the key).
"""

from __future__ import annotations

from typing import Any

from clusters.etcd.gateway import EtcdConnection, b64, decode, encode, revision, unb64
from clusters.etcd.lock import lock_key
from workloads.errors import OpFailed, OpUnknown
from workloads.lease import LeaseNotFound

NOT_ELECTED = "not elected"


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
            return self._settle(name, lease, e)
        leader = r["leader"]
        self._leaders[(name, lease)] = leader
        return revision(leader, "rev")

    def _settle(self, name: str, lease: int, cause: OpUnknown) -> int:
        kv = self._leader_kv(name)
        mine = lock_key(self.election(name), lease)
        if kv is None or unb64(kv["key"]) != mine:
            raise OpFailed(f"{NOT_ELECTED}: {name} led by another ({cause})")
        epoch = revision(kv)
        self._leaders[(name, lease)] = {
            "name": b64(self.election(name)),
            "key": kv["key"],
            "rev": epoch,
            "lease": lease,
        }
        return epoch

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
