"""PostgreSQL's id generators (``workloads.ids.IdBackend``), on the primary:

- ``sequence``: ``nextval`` of the sequence ``harness_ids``. A sequence is not rolled back
  and logs ahead of what it handed out (32 values), so a crash leaves gaps, never repeats;
  a power cut can: a session's nextval that wrote no log-ahead record of its own commits
  without flushing, on the strength of another session's record, which the cut may
  discard before that session commits (seen in the nightly suite's
  ``ids-postgres-sequence-power-loss``, under the default ``synchronous_commit on``);
- ``segment`` (Leaf-segment, Meituan's): the client takes a range of ``--segment-size`` ids
  from the row of its name in ``harness_segments`` (``UPDATE ... SET max_id = max_id +
  size RETURNING max_id``, one committed statement) and hands them out from memory; when
  ``--segment-prefetch`` of the range is used it takes the next range ahead of need, so an
  op rarely waits for the database. A client that dies with its ranges loses them (gaps);
  a client frozen with a range wakes and hands out ids far below the others' (global order).

A lost answer to the statement that takes ids leaves its outcome unknown
(``clusters.postgres.errors``): the op is ``info`` when it was the op's own ids, and a
prefetch whose answer was lost only loses its range.
"""

from __future__ import annotations

from collections.abc import Sequence

from clusters.postgres.connection import Connection
from clusters.postgres.schema import ready
from workloads.errors import OpFailed, OpUnknown


class PgSequence:
    """``nextval('harness_ids')``."""

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        self.conn = ready(Connection(addresses, timeout))

    def next_id(self) -> int:
        rows = self.conn.query("nextval", "SELECT nextval('harness_ids')", write=True)
        return int(rows[0][0])

    def close(self) -> None:
        self.conn.close()


class PgSegments:
    """Leaf-segment ids of the name ``<prefix>/ids``, ``size`` at a time, the next range
    taken when ``prefetch`` (a fraction) of the current one is used."""

    def __init__(
        self,
        addresses: Sequence[str],
        *,
        timeout: float = 5.0,
        prefix: str = "harness",
        size: int = 1000,
        prefetch: float = 0.1,
    ) -> None:
        self.conn = ready(Connection(addresses, timeout))
        self.name = f"{prefix}/ids"
        self.size, self.prefetch = size, prefetch
        self.ranges: list[tuple[int, int]] = []  # [next, end) each, the current first

    def _take(self) -> tuple[int, int]:
        """A new range, committed in the database."""
        self.conn.query(
            f"create segment row {self.name}",
            "INSERT INTO harness_segments (name, max_id) VALUES (%s, 0) ON CONFLICT DO NOTHING",
            (self.name,),
            write=True,
        )
        rows = self.conn.query(
            f"take a segment of {self.name}",
            "UPDATE harness_segments SET max_id = max_id + %s WHERE name = %s RETURNING max_id",
            (self.size, self.name),
            write=True,
        )
        end = int(rows[0][0]) + 1
        return end - self.size, end

    def next_id(self) -> int:
        if not self.ranges:
            self.ranges.append(self._take())
        start, end = self.ranges[0]
        if len(self.ranges) == 1 and end - start <= self.size * (1 - self.prefetch):
            try:
                self.ranges.append(self._take())
            except (OpFailed, OpUnknown):
                pass  # the current range still serves; the next op tries again
        self.ranges[0] = (start + 1, end)
        if start + 1 == end:
            self.ranges.pop(0)
        return start

    def close(self) -> None:
        self.conn.close()
