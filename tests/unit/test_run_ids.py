"""Snowflake ids end to end on the sim target, through the real ``harness run``: real
worker processes whose wall clock (libfaketime in the clients) steps back 4 s; without a
defence the ids of the re-lived milliseconds are handed out again, with ``wait`` none is.

Each run is ~25 s: the step must come after the clients have used some seconds of their
clock (the first fault starts at a fifth of the time limit).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.unit.test_run_sim import harness

pytestmark = pytest.mark.slow

STEP_BACK = [
    "--workload",
    "unique-ids",
    "--id-generator",
    "snowflake",
    "--nemesis",
    "client-clock",
    "--client-clock-delta",
    "-4",
    "--time-limit",
    "22",
    "--nemesis-interval",
    "10",
    "--recovery-time",
    "1",
    "--concurrency",
    "2",
    "--seed",
    "3",
]


def ids_result(out: Path) -> dict:
    found = json.loads((out / "latest" / "results.json").read_text())
    return dict(found["checkers"]["ids"])


def test_snowflake_without_defence_hands_out_duplicates_under_a_backward_step(
    tmp_path: Path,
) -> None:
    r = harness("run", *STEP_BACK, "--snowflake-defence", "none", out=tmp_path)
    assert r.returncode == 1, r.stdout + r.stderr
    ids = ids_result(tmp_path)
    assert ids["duplicate_ids"] > 0 and ids["duplicates"][0]["during"], ids["summary"]
    assert "client" in ids["duplicates"][0]["during"][0]


def test_snowflake_waiting_out_the_step_hands_out_no_duplicate(tmp_path: Path) -> None:
    r = harness("run", *STEP_BACK, "--snowflake-defence", "wait", out=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    ids = ids_result(tmp_path)
    assert ids["duplicate_ids"] == 0 and ids["not_increasing"] == 0 and ids["issued"] > 100
