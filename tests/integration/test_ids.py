"""Id generators on real clusters under crashes, through the real ``harness run``: Redis
INCR without persistence hands the same ids out again after a restart; etcd's counter
(a transaction on the key's mod_revision) and ZooKeeper's sequential nodes never do."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

SHORT = ["--time-limit", "10", "--nemesis-interval", "3", "--recovery-time", "3", "--seed", "5"]


def run_ids(out: Path, *args: str) -> tuple[int, dict]:
    """A short run (by default under kills) and its ids checker's result."""
    faults = [] if "--nemesis" in args else ["--nemesis", "kill"]
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--workload",
            "unique-ids",
            *faults,
            *SHORT,
            *args,
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    results = json.loads((out / "latest" / "results.json").read_text())
    ids = results["checkers"]["ids"]
    assert ids["issued"] > 50, r.stdout[-3000:] + r.stderr[-2000:]
    return r.returncode, ids


def test_redis_incr_without_persistence_hands_out_ids_again_after_a_kill(tmp_path: Path) -> None:
    code, ids = run_ids(tmp_path, "--target", "redis", "--persistence", "none")
    assert code == 1 and ids["duplicate_ids"] > 0, ids["summary"]
    assert ids["duplicates"][0]["during"] or ids["duplicates"][0]["issuers"]


@pytest.mark.parametrize(
    ("target", "generator"), [("etcd", "counter"), ("zookeeper", "sequential")]
)
def test_a_replicated_generator_hands_out_no_id_twice_under_kills(
    tmp_path: Path, target: str, generator: str
) -> None:
    code, ids = run_ids(tmp_path, "--target", target, "--id-generator", generator)
    assert ids["duplicate_ids"] == 0 and ids["not_increasing"] == 0, ids["summary"]
    assert code == 0, ids["summary"]


def test_postgres_sequence_hands_out_no_id_twice_when_the_primary_is_killed(
    tmp_path: Path,
) -> None:
    code, ids = run_ids(tmp_path, "--target", "postgres", "--id-generator", "sequence")
    assert ids["duplicate_ids"] == 0 and ids["not_increasing"] == 0, ids["summary"]
    assert code == 0, ids["summary"]


def test_leaf_segments_of_a_frozen_client_arrive_out_of_order_never_twice(tmp_path: Path) -> None:
    """A client frozen with its range (no lock holder to aim at: one client, chosen after
    the pause's 5 s search for a holder) wakes and hands out ids below the others'."""
    code, ids = run_ids(
        tmp_path,
        "--target",
        "postgres",
        "--id-generator",
        "segment",
        "--segment-size",
        "100",
        "--nemesis",
        "client-pause",
        "--pause-at",
        "2",
        "--pause-for",
        "9",
        "--time-limit",
        "14",
    )
    assert ids["duplicate_ids"] == 0 and code == 0, ids["summary"]
    assert ids["out_of_order"] > 0, ids["summary"]
