"""The postgres target without Docker: its error classification, its server's launch per
node, and the replication option.

psycopg exceptions: refused by the server -> fail; the session ended by the server's idle
timeouts -> ``LeaseNotFound``; a lost connection -> fail before COMMIT (the transaction
dies with it), info during COMMIT or an autocommit write.
"""

from __future__ import annotations

import subprocess
from typing import Any

import psycopg
import pytest
from psycopg import errors as pg

from clusters.postgres.errors import UNIQUE_VIOLATION, Refused, classify
from clusters.postgres.server import DURABILITY_DEFAULTS, SERVER, postgresql_conf
from clusters.postgres.spec import PERSISTENCE, RULES
from clusters.server import Peer, Place
from clusters.target_registry import TARGETS
from core.cluster import ClusterError
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown

LOST = psycopg.OperationalError("consuming input failed: server closed the connection")


@pytest.mark.parametrize(
    ("exc", "committing", "kind"),
    [
        (pg.UniqueViolation("duplicate key value"), True, Refused),
        (pg.LockNotAvailable("canceling statement due to lock timeout"), False, Refused),
        (pg.SerializationFailure("could not serialize access"), True, Refused),
        (
            pg.ReadOnlySqlTransaction("cannot execute UPDATE in a read-only transaction"),
            True,
            Refused,
        ),
        (
            pg.IdleSessionTimeout("terminating connection due to idle-session timeout"),
            False,
            LeaseNotFound,
        ),
        (pg.IdleInTransactionSessionTimeout("idle-in-transaction timeout"), True, LeaseNotFound),
        (LOST, False, OpFailed),
        (pg.AdminShutdown("terminating connection due to administrator command"), False, OpFailed),
        (LOST, True, OpUnknown),
        (pg.AdminShutdown("terminating connection due to administrator command"), True, OpUnknown),
    ],
)
def test_each_error_is_fail_or_unknown_by_whether_commit_was_under_way(
    exc: psycopg.Error, committing: bool, kind: type[Exception]
) -> None:
    out = classify(exc, "write x on 10.0.0.1:5432", committing)
    assert type(out) is kind
    assert "write x on 10.0.0.1:5432" in str(out) and "\n" not in str(out)
    if isinstance(out, OpFailed) and not isinstance(out, (Refused, LeaseNotFound)):
        assert "before commit" in str(out)


def test_a_unique_violation_says_its_sqlstate() -> None:
    out = classify(pg.UniqueViolation("duplicate key"), "insert", True)
    assert isinstance(out, Refused) and out.sqlstate == UNIQUE_VIOLATION


PEERS = [Peer(f"n{i}", i, f"10.1.2.1{i}", 5432) for i in (1, 2, 3)]
PLACE = Place("/c/conf", "/c/data", image=True, run_id="r1")


def test_n1_makes_its_data_with_initdb_and_the_others_copy_it() -> None:
    first = SERVER.launch(PEERS[0], PEERS, PLACE)
    assert any("initdb -D /c/data/pgdata" in line for line in first.prelude)
    assert not any("pg_basebackup" in line for line in first.prelude)
    for node in PEERS[1:]:
        launch = SERVER.launch(node, PEERS, PLACE)
        copy = next(line for line in launch.prelude if "pg_basebackup" in line)
        assert (
            "-h 10.1.2.11" in copy
            and " -R" in copy
            and "[ -s /c/data/pgdata/PG_VERSION ] ||" in copy
        )
        assert not any("initdb" in line for line in launch.prelude)
    assert first.argv[first.argv.index("postgres") :] == (
        "postgres",
        "-D",
        "/c/data/pgdata",
        "-c",
        "config_file=/c/conf/postgresql.conf",
    )
    assert first.argv[0] == "setpriv" and "--reuid=postgres" in first.argv


def test_replication_is_async_unless_sync_is_asked_and_nothing_else() -> None:
    assert SERVER.with_persistence(None).replication == "async"
    assert "synchronous_standby_names = ''" in postgresql_conf("/c", "async")
    sync = SERVER.with_persistence("sync")
    conf = sync.launch(PEERS[0], PEERS, PLACE).files["/c/conf/postgresql.conf"]
    assert "synchronous_standby_names = '*'" in conf and "hba_file = '/c/conf/pg_hba.conf'" in conf
    with pytest.raises(ClusterError, match="choose from: async, sync, async-failover"):
        SERVER.with_persistence("quorum")
    assert TARGETS["postgres"].persistence[:2] == ("async", "sync")


@pytest.mark.parametrize("n", [0, 6])
def test_one_primary_and_up_to_four_replicas(n: int) -> None:
    SERVER.check_size(1)
    SERVER.check_size(5)
    with pytest.raises(ClusterError, match="1 to 5 nodes"):
        SERVER.check_size(n)


def test_a_replica_may_copy_its_primary_before_its_server_runs() -> None:
    assert SERVER.start_grace >= 60 and SERVER.has_leader and SERVER.process == "postgres"


def test_failover_is_two_nodes_each_watching_and_rejoining_the_other() -> None:
    spec = SERVER.with_persistence("async-failover")
    assert spec.failover and spec.replication.startswith("async")
    spec.check_size(2)
    with pytest.raises(ClusterError, match="one replica: 2 nodes, not 3"):
        spec.check_size(3)
    pair = PEERS[:2]
    for node, other in ((pair[0], pair[1]), (pair[1], pair[0])):
        launch = spec.launch(node, pair, PLACE)
        script = launch.files["/c/conf/watch.sh"]
        assert f"pg_isready -q -h {other.ip}" in script and "pg_ctl promote" in script
        rejoin = next(line for line in launch.prelude if "was promoted" in line)
        assert f"psql -h {other.ip}" in rejoin and f"pg_basebackup -h {other.ip}" in rejoin
        assert "setsid sh /c/conf/watch.sh" in launch.prelude[-1]
    assert "/c/conf/watch.sh" not in SERVER.launch(PEERS[0], pair, PLACE).files


@pytest.mark.parametrize("persistence", ["async", "sync-failover"])
def test_the_launcher_and_the_watcher_are_valid_shell(persistence: str, tmp_path: Any) -> None:
    spec = SERVER.with_persistence(persistence)
    pair = PEERS[:2]
    for node in pair:
        launch = spec.launch(node, pair, PLACE)
        for text in ("\n".join(launch.prelude), launch.files.get("/c/conf/watch.sh", "")):
            path = tmp_path / "s.sh"
            path.write_text(text)
            done = subprocess.run(["sh", "-n", str(path)], capture_output=True, text=True)
            assert done.returncode == 0, (text, done.stderr)


@pytest.mark.parametrize("persistence", PERSISTENCE)
def test_durability_is_postgres_own_unless_a_recorded_rule_turns_it_down(
    persistence: str,
) -> None:
    """Every durability setting our postgresql.conf sets is one a rule of the target
    records as changed from PostgreSQL's default, with the value the file gives it."""
    lines = postgresql_conf("/c", persistence).splitlines()
    conf = dict(line.split(" = ", 1) for line in lines)
    changed = {k: v for k, v in conf.items() if k in DURABILITY_DEFAULTS}
    recorded = {
        r.setting: r.value
        for r in RULES
        if persistence in r.when["persistence"] and r.default == DURABILITY_DEFAULTS[r.setting]
    }
    assert changed == recorded
    assert bool(changed) == (persistence in ("no-sync-commit", "no-fsync"))
