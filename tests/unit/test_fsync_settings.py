"""The services' fsync settings as run options (issue 34): ``--persistence no-fsync``
starts etcd with ``--unsafe-no-fsync``, ``no-force-sync`` ZooKeeper with ``forceSync=no``
and PostgreSQL's ``no-sync-commit`` / ``no-fsync`` with ``synchronous_commit = off`` /
``fsync = off``; each target's first value is its default and writes nothing; a value of
another target's is refused in one line naming the target's own."""

from __future__ import annotations

import pytest
from test_cli import run

from clusters.docker_cluster import DockerCluster
from clusters.target_registry import TARGETS
from core.options import RunOptions
from core.run_clock import RunClock


def _node(target: str, persistence: str | None) -> tuple[tuple[str, ...], str]:
    opts = RunOptions.of(target=target, workload="lock", persistence=persistence)
    cluster = TARGETS[target].make_cluster(opts, RunClock())
    assert isinstance(cluster, DockerCluster)
    cluster.layout("10.9.0.0/24")
    launch = cluster.launch("n1")
    return launch.argv, "".join(launch.files.values())


@pytest.mark.parametrize(
    ("persistence", "off"), [(None, False), ("fsync", False), ("no-fsync", True)]
)
def test_no_fsync_starts_etcd_with_unsafe_no_fsync(persistence: str | None, off: bool) -> None:
    argv, _ = _node("etcd", persistence)
    assert ("--unsafe-no-fsync" in argv) is off


@pytest.mark.parametrize(
    ("persistence", "off"), [(None, False), ("force-sync", False), ("no-force-sync", True)]
)
def test_no_force_sync_writes_force_sync_no(persistence: str | None, off: bool) -> None:
    _, files = _node("zookeeper", persistence)
    assert ("forceSync=no" in files.splitlines()) is off


@pytest.mark.parametrize(
    ("persistence", "lines"),
    [
        (None, set()),
        ("sync", set()),
        ("no-sync-commit", {"synchronous_commit = off"}),
        ("no-fsync", {"fsync = off"}),
    ],
)
def test_postgres_durability_settings_write_their_lines(
    persistence: str | None, lines: set[str]
) -> None:
    _, files = _node("postgres", persistence)
    written = {line for line in files.splitlines() if line.startswith(("fsync", "synchronous_c"))}
    assert written == lines


@pytest.mark.parametrize(
    ("target", "choices"),
    [("etcd", "fsync, no-fsync"), ("zookeeper", "force-sync, no-force-sync")],
)
def test_a_persistence_the_target_does_not_have_is_one_line(
    capsys: pytest.CaptureFixture[str], target: str, choices: str
) -> None:
    code, out, err = run(capsys, "run", "--target", target, "--persistence", "aof-always")
    assert code == 254 and out == "" and len(err.strip().splitlines()) == 1
    assert f"choose from: {choices}" in err
