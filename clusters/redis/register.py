"""Keys of the Redis primary as registers: a ``workloads.register.RegisterBackend``.

``read`` is ``GET``, ``write`` is ``SET``, ``cas(old, new)`` one Lua script (atomic on the
server): set ``new`` if the value is ``old`` (for ``old`` None: if the key does not
exist), else a definite fail (``cas mismatch``). Values are stored as JSON. Every operation
goes to the primary (the target has no replicas), so there is one way to read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from checkers.refusals import CAS_MISMATCH
from clusters.redis.connection import connect
from clusters.redis.errors import classified
from workloads.errors import OpFailed

CAS = """
local v = redis.call('get', KEYS[1])
if (ARGV[1] == 'null' and not v) or v == ARGV[1] then
  redis.call('set', KEYS[1], ARGV[2])
  return 1
end
return 0
"""


class RedisRegister:
    """Registers ``<prefix>/register/<key>`` on the primary."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        read_mode: str | None = None,
    ) -> None:
        """``read_mode`` must be None: the target offers one way to read."""
        self.address = addresses[0]
        self.redis = connect(self.address, timeout)
        self.prefix = prefix
        self._cas = self.redis.register_script(CAS)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/register/{key}"

    def read(self, key: str) -> Any:
        with classified(f"GET {self._key(key)} on {self.address}"):
            raw = self.redis.get(self._key(key))
        return None if raw is None else json.loads(raw)

    def write(self, key: str, value: Any) -> None:
        with classified(f"SET {self._key(key)} on {self.address}"):
            self.redis.set(self._key(key), json.dumps(value))

    def cas(self, key: str, old: Any, new: Any) -> None:
        with classified(f"cas of {self._key(key)} on {self.address}"):
            done = self._cas(keys=[self._key(key)], args=[json.dumps(old), json.dumps(new)])
        if not done:
            raise OpFailed(f"{CAS_MISMATCH}: {self._key(key)} is not {old!r}")

    def close(self) -> None:
        self.redis.close()
