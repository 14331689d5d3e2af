"""Failing over instead of restarting (``--persistence async-failover|sync-failover``): the
replica promotes itself when its primary stops answering, and a primary that comes back
after its replica was promoted is rebuilt as that replica's replica.

Two nodes only, each the other's only peer. ``watcher`` is the script the replica runs
beside its server: every second ``pg_isready`` of the primary; after ``MISSES`` misses in a
row it runs ``pg_ctl promote`` (and stops: a primary watches nothing). ``rejoin`` is the
prelude of a node whose data says it was a primary: if its peer now answers as a primary,
its data is thrown away and copied from the peer (``pg_basebackup -R``), so it comes back
as a replica (what it had committed alone is lost: see ``docs/postgres.md``).

This is a naive failover on purpose, as teams build it without a consensus service: a
paused or cut-off primary looks dead too, and then two primaries accept writes.
"""

from __future__ import annotations

import shlex

MISSES = 3
"""Seconds without an answer from the primary before the replica promotes itself."""


def copy_from(data: str, ip: str, port: int, user: str, tries: int) -> str:
    """Shell: copy the primary at ``ip`` into ``data`` (as a replica of it), retried."""
    q = shlex.quote(data)
    copy = f"{user} pg_basebackup -h {ip} -p {port} -U postgres -D {q} -X stream -R"
    return f"for i in $(seq {tries}); do {copy} && break; rm -rf {q}/* ; sleep 0.5; done"


def rejoin(data: str, other: str, port: int, user: str, tries: int) -> str:
    """Shell: when ``data`` is a primary's and the peer at ``other`` answers as a primary,
    rebuild ``data`` as the peer's replica."""
    q = shlex.quote(data)
    ask = (
        f"psql -h {other} -p {port} -U postgres -d postgres -tAc "
        "'SELECT pg_is_in_recovery()' 2>/dev/null"
    )
    return (
        f'if [ -s {q}/PG_VERSION ] && [ ! -f {q}/standby.signal ] && [ "$({ask})" = f ]; then '
        f'echo "=== harness: {other} was promoted; this node becomes its replica"; '
        f"rm -rf {q}/* ; {copy_from(data, other, port, user, tries)}; fi"
    )


def watcher(data: str, other: str, port: int, user: str, pidfile: str) -> str:
    """The replica's watch of its primary at ``other`` (a script for ``sh``)."""
    q = shlex.quote(data)
    return f"""#!/bin/sh
# Promotes this replica when its primary {other} stops answering (written by the harness).
echo $$ > {pidfile}
misses=0
while [ -f {q}/standby.signal ]; do
  if pg_isready -q -h {other} -p {port} -t 1; then misses=0; else misses=$((misses + 1)); fi
  if [ "$misses" -ge {MISSES} ]; then
    echo "=== harness: primary {other} silent for {MISSES} s; promoting this replica"
    {user} pg_ctl promote -D {q} && exit 0
  fi
  sleep 1
done
"""


def start_watcher(data: str, script: str, pidfile: str) -> str:
    """Shell: start ``script`` in the background on a replica, unless it already runs."""
    q = shlex.quote(data)
    return (
        f'[ -f {q}/standby.signal ] && ! kill -0 "$(cat {pidfile} 2>/dev/null)" 2>/dev/null '
        f"&& (setsid sh {script} </dev/null &)"
    )
