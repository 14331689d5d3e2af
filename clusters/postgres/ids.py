"""PostgreSQL's id generators (``workloads.ids.IdBackend``), on the primary:

- ``sequence``: ``SELECT nextval('harness_ids')`` on an autocommit connection: each call
  is its own transaction, committed before its answer comes (the server commits before
  it says it is ready for the next query), which is what PostgreSQL's documentation asks
  of a value used outside the database ("make sure that the nextval call has been
  committed before doing so": ``FUNC_SEQUENCE_DOC``). A sequence is not rolled back and
  logs ahead of what it handed out (``SEQ_LOG_VALS``, 32 values), so a crash leaves gaps.
  A power cut can also hand a committed value out again, under every setting: a nextval
  that takes a value another session's record logged ahead writes no WAL and takes no
  transaction id (``nextval_internal`` does both only when it logs), and a transaction
  with neither flushes nothing at commit (``RecordTransactionCommit``); until the other
  session's record is flushed (its own commit, or a later flush), the value the first
  was answered is not on disk. That is the design of PostgreSQL's commit d670765 (9.5):
  nextval takes a transaction id only when it logs, and a COMMIT waits for the WAL flush
  only when its transaction has both an id and WAL (its commit message).
  ``tests/integration/test_power_loss.py`` shows it deterministically (and that the
  same value used in an INSERT survives the cut); the nightly suite's
  ``ids-postgres-sequence-power-loss`` sees it now and then. The documentation does not
  say this, so a run names such a repeat unexplained;
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

FUNC_SEQUENCE_DOC = "https://www.postgresql.org/docs/17/functions-sequence.html"
"""PostgreSQL's sequence functions, whose caution says a nextval's result may not be
persistent until its transaction commits (since 2021, commit 4ac452e)."""


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
