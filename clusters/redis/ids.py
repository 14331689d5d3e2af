"""Redis's id generator (``workloads.ids.IdBackend``): ``INCR`` of one key on the primary.

What the counter survives is the persistence mode's (``--persistence``): without it a
killed and restarted server starts again from nothing and hands out the same ids again.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusters.redis.connection import connect
from clusters.redis.errors import classified


class RedisIncr:
    """``INCR <prefix>/ids``."""

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        self.address = addresses[0]
        self.redis = connect(self.address, timeout)
        self.counter = f"{prefix}/ids"

    def next_id(self) -> int:
        with classified(f"INCR {self.counter} on {self.address}"):
            return int(self.redis.incr(self.counter))

    def close(self) -> None:
        self.redis.close()
