"""The tables every PostgreSQL client here shares, created once per cluster.

``harness_locks`` is the lock table (a row per held lock: owner, expiry, token),
``harness_tokens`` the sequence fencing tokens come from, ``harness_rows`` the rows locked
``FOR UPDATE``, ``harness_cells`` the versioned rows of ``version-cas`` and
``harness_effects`` the effects of ``unique-key``, one per idempotency key, ``harness_ids``
and ``harness_segments`` the ids of ``unique-ids`` (``clusters.postgres.ids``). Clients create
them on connecting (``ready``), under a transaction-scoped advisory lock so that
concurrent ``CREATE ... IF NOT EXISTS`` cannot collide.
"""

from __future__ import annotations

from clusters.postgres.connection import Connection

SCHEMA_LOCK = 7_000_001
"""The advisory lock key serialising schema creation (no lock workload uses it)."""

DDL = """
CREATE TABLE IF NOT EXISTS harness_locks (
    name text PRIMARY KEY, owner text NOT NULL, expires timestamptz NOT NULL,
    token bigint NOT NULL);
CREATE SEQUENCE IF NOT EXISTS harness_tokens;
CREATE TABLE IF NOT EXISTS harness_rows (name text PRIMARY KEY, token bigint);
CREATE TABLE IF NOT EXISTS harness_cells (
    name text PRIMARY KEY, version bigint NOT NULL, value jsonb);
CREATE TABLE IF NOT EXISTS harness_effects (
    key text PRIMARY KEY, name text NOT NULL, job bigint NOT NULL, value jsonb,
    at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE SEQUENCE IF NOT EXISTS harness_ids;
CREATE TABLE IF NOT EXISTS harness_segments (name text PRIMARY KEY, max_id bigint NOT NULL);
"""

_ready: set[str] = set()


def ready(conn: Connection) -> Connection:
    """``conn``, the tables created on its server unless this process already did."""
    if conn.where in _ready:
        return conn
    with conn.bounded("create the tables") as raw, raw.transaction():
        raw.execute("SELECT pg_advisory_xact_lock(%s)", (SCHEMA_LOCK,))
        for statement in filter(str.strip, DDL.split(";")):
            raw.execute(statement)
    _ready.add(conn.where)
    return conn
