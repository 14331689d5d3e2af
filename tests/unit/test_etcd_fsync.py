"""etcd's fsync as a run option (issue 34): ``--persistence no-fsync`` starts etcd with
``--unsafe-no-fsync``, ``fsync`` (the default) without; a value of another target's is
refused in one line naming etcd's."""

from __future__ import annotations

import pytest
from test_cli import run

from clusters.docker_cluster import DockerCluster
from clusters.registry import TARGETS
from core.clock import RunClock
from core.options import RunOptions


@pytest.mark.parametrize(
    ("persistence", "flag"), [(None, False), ("fsync", False), ("no-fsync", True)]
)
def test_no_fsync_starts_etcd_with_unsafe_no_fsync(persistence: str | None, flag: bool) -> None:
    opts = RunOptions.of(target="etcd", workload="lock", persistence=persistence)
    cluster = TARGETS["etcd"].make_cluster(opts, RunClock())
    assert isinstance(cluster, DockerCluster)
    cluster.layout("10.9.0.0/24")
    assert ("--unsafe-no-fsync" in cluster.launch("n1").argv) is flag


def test_a_persistence_etcd_does_not_have_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", "--target", "etcd", "--persistence", "aof-always")
    assert code == 254 and out == "" and len(err.strip().splitlines()) == 1
    assert "choose from: fsync, no-fsync" in err
