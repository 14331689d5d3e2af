"""etcd's id generators (``workloads.ids.IdBackend``):

- ``counter``: one key holding a number, incremented by a transaction that compares the
  key's ``mod_revision`` with the one just read (a CAS on the version; the first puts 1
  if the key was never created); a lost race is retried;
- ``revision``: a put to one key; the id is the store's revision in the answer's header,
  which every write to the cluster raises.

Both go through Raft: a put or transaction answered ``ok`` is committed on a majority.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusters.etcd.gateway import EtcdConnection, b64, decode, encode, revision
from workloads.errors import OpFailed
from workloads.ids import CAS_TRIES


class EtcdCounter(EtcdConnection):
    """The counter ``<prefix>/ids/counter``."""

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        super().__init__(addresses, timeout=timeout, prefix=prefix)
        self.counter = self.key("ids", "counter")

    def next_id(self) -> int:
        k = b64(self.counter)
        for _ in range(CAS_TRIES):
            kv = self.get(self.counter)
            value = 0 if kv is None else int(decode(kv))
            seen = 0 if kv is None else revision(kv, "mod_revision")
            compare = {"key": k, "target": "MOD", "result": "EQUAL", "mod_revision": seen}
            put = {"request_put": {"key": k, "value": encode(value + 1)}}
            r = self.txn([compare], [put], [], f"increment of {self.counter}")
            if r.get("succeeded"):
                return value + 1
        raise OpFailed(f"counter {self.counter}: {CAS_TRIES} transactions lost to other clients")


class EtcdRevision(EtcdConnection):
    """Puts to ``<prefix>/ids/revision``: the id is the revision of the put."""

    def next_id(self) -> int:
        k = self.key("ids", "revision")
        r = self.call("/v3/kv/put", {"key": b64(k), "value": encode(1)}, f"put of {k}")
        return revision(r.get("header", {}), "revision")
