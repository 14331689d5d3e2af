"""A suite cut into shards (``harness suite run --shard I/N``, ``harness suite plan``):
balanced, the same split on every machine, an entry with repeats kept whole, bad input
refused in one line."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.cli import main
from harness.shard import estimate_s, split
from harness.suite import SuiteRun, load_suite

SUITE = """
[suite]
name = "six"
[defaults]
target = "sim"
workload = "cas-register"
nemesis = ["none"]
recovery_time = 0
[[run]]
name = "long"
time_limit = 100
[[run]]
name = "mid-a"
time_limit = 50
[[run]]
name = "mid-b"
time_limit = 50
[[run]]
name = "short-a"
time_limit = 10
[[run]]
name = "short-b"
time_limit = 10
[[run]]
name = "short-c"
time_limit = 10
"""


@pytest.fixture
def suite_file(tmp_path: Path) -> Path:
    p = tmp_path / "six.toml"
    p.write_text(SUITE)
    return p


def test_shards_are_balanced_by_expected_time_and_keep_suite_order(suite_file: Path) -> None:
    runs = load_suite(suite_file).runs
    shards = split(runs, 2, {})
    assert [s.runs for s in shards] == [
        ("long", "short-a", "short-c"),
        ("mid-a", "mid-b", "short-b"),
    ]
    assert [s.expected_s for s in shards] == [150.0, 140.0]
    # every entry once, whatever N
    for n in range(1, 7):
        names = [name for s in split(runs, n, {}) for name in s.runs]
        assert sorted(names) == sorted(r.name for r in runs)


def test_recorded_durations_outweigh_the_estimate(suite_file: Path, tmp_path: Path) -> None:
    """An earlier result's seconds decide: "short-a" took 500 s, so it runs alone."""
    recorded = tmp_path / "suite.json"
    recorded.write_text(json.dumps({"outcomes": [{"name": "short-a", "seconds": 500}]}))
    out = _plan(suite_file, "2", "--format", "json", "--durations", str(recorded))
    assert [p["runs"] for p in out["plan"]] == [
        ["short-a"],
        ["long", "mid-a", "mid-b", "short-b", "short-c"],
    ]


def test_an_entry_with_repeats_is_one_unit_weighing_its_repeats(suite_file: Path) -> None:
    @dataclass(frozen=True)
    class Repeated(SuiteRun):
        repeat: int = 1

    runs = load_suite(suite_file).runs
    heavy = Repeated(runs[5].name, runs[5].options, repeat=30)
    assert estimate_s(heavy) == 30 * estimate_s(runs[5])
    shards = split([*runs[:5], heavy], 2, {})
    assert shards[0].runs == ("short-c",)  # 600 s: alone, and never cut in two


def _plan(suite: Path, n: str, *rest: str) -> dict[str, object]:
    from contextlib import redirect_stdout
    from io import StringIO

    buf = StringIO()
    with redirect_stdout(buf):
        assert main(["suite", "plan", str(suite), "--shards", n, *rest]) == 0
    parsed: dict[str, object] = json.loads(buf.getvalue())
    return parsed


def test_plan_prints_the_github_matrix_and_the_indexed_job_indexes(suite_file: Path) -> None:
    matrix = _plan(suite_file, "3", "--format", "github")
    assert matrix == {
        "include": [
            {"shard": "1/3", "index": 1, "runs": 1, "expected_s": 110.0},
            {"shard": "2/3", "index": 2, "runs": 3, "expected_s": 100.0},
            {"shard": "3/3", "index": 3, "runs": 2, "expected_s": 80.0},
        ]
    }
    full = _plan(suite_file, "3", "--format", "json")
    assert full["matrix"] == matrix and full["completions"] == 3
    assert full["indexes"] == [0, 1, 2]
    assert _plan(suite_file, "3", "--format", "json") == full  # the same split each time


def test_the_shipped_nightly_plans_into_eight_shards() -> None:
    matrix = _plan(Path("nightly"), "8", "--format", "github")
    include = matrix["include"]
    assert isinstance(include, list) and [m["shard"] for m in include] == [
        f"{i}/8" for i in range(1, 9)
    ]


@pytest.mark.parametrize("bad", ["3/2", "0/2", "x", "1/0", "1/", "-1/2", "1.5/2"])
def test_a_bad_shard_is_one_line(
    bad: str, suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as e:
        main(["suite", "run", str(suite_file), f"--shard={bad}"])
    assert e.value.code == 254
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "argument --shard" in err
    assert "is not I/N" in err or "I must be from 1 to N" in err


def test_more_shards_than_entries_is_refused(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["suite", "plan", str(suite_file), "--shards", "7"]) == 254
    assert main(["suite", "run", str(suite_file), "--shard", "7/7"]) == 254
    err = capsys.readouterr().err
    assert err.count("use at most 6 shards") == 2 and err.count("\n") == 2


def test_a_shard_run_lists_only_its_runs(
    suite_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["suite", "run", str(suite_file), "--shard", "1/2", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in listed["runs"]] == ["long", "short-a", "short-c"]


@pytest.mark.parametrize("content", ["nope", '{"outcomes": 3}', '{"runs": []}'])
def test_a_durations_file_that_is_not_a_suite_result_is_one_line(
    content: str, suite_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert main(["suite", "plan", str(suite_file), "--shards", "2", "--durations", str(bad)]) == 254
    err = capsys.readouterr().err
    assert "not a suite result's suite.json" in err and err.count("\n") == 1, err
