"""Consul KV keys as registers: a ``workloads.register.RegisterBackend``.

``read`` is a GET in the chosen consistency mode: ``default`` (the leader answers from its
state, trusting its leader lease: stale for a moment after a leadership change),
``consistent`` (the leader first confirms it still leads with a quorum) or ``stale`` (any
server answers from its own state). ``write`` is a PUT. ``cas(old, new)``: a consistent
read of the value and its ModifyIndex, then ``PUT ?cas=<index>`` (``cas=0`` when the key
must not exist yet): a different value, or an index that moved on, is a definite fail
(``cas mismatch``: nothing changed). Values are stored as JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from checkers.refusals import CAS_MISMATCH
from clusters.consul.api import ConsulConnection, decode, encode
from clusters.consul.spec import READ_MODES
from workloads.errors import OpFailed


class ConsulRegister(ConsulConnection):
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
        self.mode = read_mode or READ_MODES[0]

    def read(self, key: str) -> Any:
        entry, _ = self.entry(self.key("register", key), self.mode)
        return None if entry is None else decode(entry)

    def write(self, key: str, value: Any) -> None:
        k = self.key("register", key)
        self.call("PUT", f"/kv/{k}", f"write of {k}", data=encode(value))

    def cas(self, key: str, old: Any, new: Any) -> None:
        k = self.key("register", key)
        mismatch = OpFailed(f"{CAS_MISMATCH}: {k} is not {old!r}")
        entry, _ = self.entry(k)
        if (None if entry is None else decode(entry)) != old:
            raise mismatch
        index = 0 if entry is None else int(entry["ModifyIndex"])
        r = self.call("PUT", f"/kv/{k}", f"cas of {k}", params={"cas": index}, data=encode(new))
        if r.json() is not True:
            raise mismatch
