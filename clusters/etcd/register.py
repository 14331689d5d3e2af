"""etcd's keys as linearizable registers: a ``workloads.register.RegisterBackend``.

``read`` is a range of the key: ``linearizable`` (the default, through Raft's read index)
or ``serializable`` (``--read-mode serializable``: the member answers from its own state,
possibly stale). ``write`` is a put. ``cas(old, new)`` is one transaction: if the value is
``old`` (for ``old`` None: if the key was never created) put ``new``; a false comparison is
a definite fail (``cas mismatch``: nothing changed). Values are stored as JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkers.refusals import CAS_MISMATCH
from clusters.etcd.gateway import EtcdConnection, b64, decode, encode
from clusters.etcd.spec import READ_MODES
from workloads.errors import OpFailed


class EtcdRegister(EtcdConnection):
    """Registers ``<prefix>/register/<key>``."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        read_mode: str | None = None,
    ) -> None:
        super().__init__(addresses, timeout=timeout, prefix=prefix)
        self.serializable = (read_mode or READ_MODES[0]) == "serializable"

    def register(self, key: str) -> str:
        return self.key("register", key)

    def read(self, key: str) -> Any:
        kv = self.get(self.register(key), serializable=self.serializable)
        return None if kv is None else decode(kv)

    def write(self, key: str, value: Any) -> None:
        k = self.register(key)
        self.call("/v3/kv/put", {"key": b64(k), "value": encode(value)}, f"write of {k}")

    def cas(self, key: str, old: Any, new: Any) -> None:
        k = b64(self.register(key))
        if old is None:
            compare = {"key": k, "target": "CREATE", "result": "EQUAL", "create_revision": 0}
        else:
            compare = {"key": k, "target": "VALUE", "result": "EQUAL", "value": encode(old)}
        r = self.txn(
            [compare],
            [{"request_put": {"key": k, "value": encode(new)}}],
            [],
            f"cas of {self.register(key)}",
        )
        if not r.get("succeeded"):
            raise OpFailed(f"{CAS_MISMATCH}: {self.register(key)} is not {old!r}")
