"""The lock-free workloads on PostgreSQL: ``workloads.guarded.GuardedStore``s.

``VersionCas``: a row of ``harness_cells`` per name with a version; ``begin`` reads the
version, ``write`` is ``UPDATE ... SET version = version + 1 WHERE version = basis``: no
row updated means another writer moved the version on. ``UniqueKey``: ``begin`` takes the
next job of a name (one past the highest done), ``write`` inserts the job's effect into
``harness_effects`` under its key ``name/job``, the primary key: a second insert of a job
is refused by the constraint (``UniqueViolation``). Both writes commit on their own
(autocommit), so a lost answer leaves them unknown (``clusters.postgres.errors``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from clusters.postgres.connection import Connection
from clusters.postgres.errors import UNIQUE_VIOLATION, Refused
from clusters.postgres.schema import ready


class _Store:
    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        self.conn = ready(Connection(addresses, timeout))
        self.prefix = prefix

    def _name(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def close(self) -> None:
        self.conn.close()


class VersionCas(_Store):
    """A versioned row per name; a write lands only on the version it read."""

    def begin(self, name: str) -> int:
        key = self._name(name)
        self.conn.query(
            f"create {name}",
            "INSERT INTO harness_cells (name, version) VALUES (%s, 0) ON CONFLICT DO NOTHING",
            (key,),
            write=True,
        )
        rows = self.conn.query(
            f"read {name}", "SELECT version FROM harness_cells WHERE name = %s", (key,)
        )
        return int(rows[0][0])

    def write(self, name: str, basis: int, value: Any) -> str | None:
        rows = self.conn.query(
            f"write {name} on version {basis}",
            "UPDATE harness_cells SET version = version + 1, value = %s "
            "WHERE name = %s AND version = %s RETURNING version",
            (Jsonb(value), self._name(name), basis),
            write=True,
        )
        return None if rows else f"{name} is no longer at version {basis}"


class UniqueKey(_Store):
    """An effect per job under its idempotency key; a repeated effect is refused."""

    def begin(self, name: str) -> int:
        rows = self.conn.query(
            f"next job of {name}",
            "SELECT coalesce(max(job), 0) + 1 FROM harness_effects WHERE name = %s",
            (self._name(name),),
        )
        return int(rows[0][0])

    def write(self, name: str, basis: int, value: Any) -> str | None:
        key = f"{self._name(name)}/{basis}"
        try:
            self.conn.query(
                f"effect of {name} job {basis}",
                "INSERT INTO harness_effects (key, name, job, value) VALUES (%s, %s, %s, %s)",
                (key, self._name(name), basis, Jsonb(value)),
                write=True,
            )
        except Refused as e:
            if e.sqlstate == UNIQUE_VIOLATION:
                return f"job {basis} of {name} is already done (unique key {key})"
            raise
        return None
