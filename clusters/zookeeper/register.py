"""ZooKeeper znodes as registers: a ``workloads.register.RegisterBackend``.

On the worker's long-lived session. ``read`` is ``get`` (``plain``, the default: the
server answers from its own state, which may lag the leader) or ``sync`` then ``get``
(``--read-mode sync``: the server first catches up with the leader, ZooKeeper's way to a
read that sees every write completed before it). ``write`` is ``set``, creating the node
the first time. ``cas(old, new)``: read the value and its version, then ``set`` with that
version; a different value or a version that moved on is a definite fail (``cas
mismatch``: nothing changed). For ``old`` None: ``create``, failing if the node exists.
Values are stored as JSON. With ``served`` (``clusters.zookeeper.served``), every read and
every write or cas that took effect records the server that answered, its role and the
zxids of the answer: what a stale read is judged by.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from kazoo.exceptions import BadVersionError, NodeExistsError, NoNodeError

from checkers.refusals import CAS_MISMATCH
from clusters.zookeeper.errors import classified
from clusters.zookeeper.served import Served
from clusters.zookeeper.session import LongSession
from clusters.zookeeper.spec import READ_MODES
from workloads.errors import OpFailed


class ZkRegister(LongSession):
    """Registers ``/<prefix>/register/<key>``."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        read_mode: str | None = None,
        served: Served | None = None,
    ) -> None:
        super().__init__(addresses, timeout=timeout, prefix=prefix)
        self.sync = (read_mode or READ_MODES[0]) == "sync"
        self.served = served

    def read(self, key: str) -> Any:
        zk, path = self.observer(), self.path("register", key)
        with classified(f"read of {path}"):
            if self.sync:
                zk.sync(path)
            try:
                data, stat = zk.get(path)
            except NoNodeError:
                self._served(zk, None)
                return None
        self._served(zk, stat.mzxid)
        return json.loads(data) if data else None

    def write(self, key: str, value: Any) -> None:
        zk, path = self.observer(), self.path("register", key)
        data = json.dumps(value).encode()
        with classified(f"write of {path}"):
            try:
                stat = zk.set(path, data)
            except NoNodeError:
                try:
                    _, stat = zk.create(path, data, makepath=True, include_data=True)
                except NodeExistsError:
                    stat = zk.set(path, data)
        self._served(zk, stat.mzxid)

    def cas(self, key: str, old: Any, new: Any) -> None:
        zk, path = self.observer(), self.path("register", key)
        data = json.dumps(new).encode()
        mismatch = OpFailed(f"{CAS_MISMATCH}: {path} is not {old!r}")
        with classified(f"cas of {path}"):
            if old is None:
                try:
                    _, stat = zk.create(path, data, makepath=True, include_data=True)
                except NodeExistsError:
                    raise mismatch from None
                self._served(zk, stat.mzxid)
                return
            try:
                current, stat = zk.get(path)
            except NoNodeError:
                raise mismatch from None
            if not current or json.loads(current) != old:
                raise mismatch
            try:
                stat = zk.set(path, data, version=stat.version)
            except BadVersionError:
                raise mismatch from None
        self._served(zk, stat.mzxid)

    def answered_by(self) -> str | None:
        """``workloads.register.Answered``: the server of the last recorded answer."""
        return self.served.server if self.served is not None else None

    def _served(self, zk: Any, version: int | None) -> None:
        if self.served is not None:
            self.served.record(zk, version)

    def close(self) -> None:
        super().close()
        if self.served is not None:
            self.served.close()
