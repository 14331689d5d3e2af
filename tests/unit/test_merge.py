"""``harness merge``: a suite's shards put back together give what the whole suite's run
gives; shards that do not fit together are refused in one line naming the shard."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from tests.support.synthetic import demo_runs

STAMP = "20260101T000000Z"

# Short sim runs: one a failure (a valid run expected invalid), so the JUnit compared
# holds a failing case too. The smoke suite's sim runs take about a minute each way.
QUICK = """
[suite]
name = "quick"
[defaults]
target = "sim"
workload = "cas-register"
nemesis = ["none"]
time_limit = 1
recovery_time = 0
seed = 7
[[run]]
name = "cas"
[[run]]
name = "ids"
workload = "unique-ids"
[[run]]
name = "cas-expected-invalid"
expect = "invalid"
"""


def _cases(junit: Path) -> list[tuple[str, str, str, str]]:
    """Each testcase's name, class, outcome and message: what a CI's report shows."""
    out = []
    for c in ET.parse(junit).getroot().iter("testcase"):
        bad = c.find("failure") if c.find("failure") is not None else c.find("error")
        outcome = "passed" if bad is None else bad.tag
        # its first sentence: the run's own counts (operations checked) vary run to run
        message = "" if bad is None else bad.get("message", "").split(". ")[0]
        out.append((c.get("name", ""), c.get("classname", ""), outcome, message))
    return out


def _outcomes(suite_json: Path) -> list[tuple[Any, ...]]:
    data = json.loads(suite_json.read_text())
    return [(o["name"], o["expect"], o["valid"], o["met"], o["why"]) for o in data["outcomes"]]


@pytest.mark.slow
def test_two_shards_merged_give_what_the_whole_suite_gives(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's "done when", on short sim runs."""
    suite = tmp_path / "quick.toml"
    suite.write_text(QUICK)
    assert main(["suite", "run", str(suite), "-o", str(tmp_path / "whole")]) == 1
    assert main(["suite", "run", str(suite), "--shard", "1/2", "-o", str(tmp_path / "a")]) == 1
    assert main(["suite", "run", str(suite), "--shard", "2/2", "-o", str(tmp_path / "b")]) == 0
    merged = tmp_path / "merged"
    capsys.readouterr()
    assert main(["merge", str(tmp_path / "b"), str(tmp_path / "a"), "--out", str(merged)]) == 1
    assert f"merged 2 shards of quick into {merged}" in capsys.readouterr().out
    (whole,) = (tmp_path / "whole").glob("suite-quick/*")
    assert _outcomes(merged / "suite.json") == _outcomes(whole / "suite.json")
    assert [o[0] for o in _outcomes(merged / "suite.json")] == [
        "cas",
        "ids",
        "cas-expected-invalid",
    ]
    assert _cases(merged / "junit.xml") == _cases(whole / "junit.xml")
    assert [c[2] for c in _cases(merged / "junit.xml")] == ["passed", "passed", "failure"]
    # every run's directory copied whole: its report, and the paths now the merged ones
    record = json.loads((merged / "suite.json").read_text())
    for o in record["outcomes"]:
        run = Path(o["run_dir"])
        assert run.parent.parent == merged and not run.is_symlink()
        assert (run / "report.html").is_file() and (run / "results.json").is_file()
    assert [m["shard"] for m in record["merged"]] == ["1/2", "2/2"]
    assert (merged / "index.html").read_text().count("report.html") >= 3
    assert (merged / "matrix.html").is_file()
    summary = (merged / "summary.md").read_text()
    assert "quick: 2 of 3 as expected" in summary and "cas-expected-invalid" in summary


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return demo_runs(tmp_path_factory.mktemp("demo"))


def _shard(
    root: Path, demo: dict[str, Path], index: int, of: int, names: list[str], **record: Any
) -> Path:
    """A shard's result as `suite run --shard` writes it, made of the demo runs."""
    base = root / "suite-t" / STAMP
    outcomes = []
    for name in names:
        run = base / f"t-{name}" / STAMP
        shutil.copytree(demo[name], run)
        outcomes.append(
            {
                "name": name,
                "expect": "valid",
                "violation": None,
                "valid": True,
                "met": True,
                "why": "valid, as expected",
                "run_dir": f"/elsewhere/suite-t/{STAMP}/t-{name}/{STAMP}",
                "seconds": 1.0,
                "error": None,
                "reason": "",
            }
        )
    data = {
        "suite": "t",
        "digest": "d1",
        "commit": "c1",
        "runs": ["lock-fenced", "cas-valid", "lock-unfenced"],
        "started": f"2026-01-01T00:00:0{index}+00:00",
        "shard": {"index": index, "of": of, "runs": names},
        "outcomes": outcomes,
    }
    data.update(record)
    (base / "suite.json").write_text(json.dumps(data))
    return root


def _merge(args: list[Path], out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["merge", *map(str, args), "--out", str(out)])
    return code, capsys.readouterr().err


def test_merged_runs_are_copies_in_the_suite_s_order(
    tmp_path: Path, demo: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a = _shard(tmp_path / "a", demo, 1, 2, ["lock-fenced", "lock-unfenced"])
    b = _shard(tmp_path / "b", demo, 2, 2, ["cas-valid"])
    code, err = _merge([b, a], tmp_path / "out", capsys)
    assert code == 0, err
    record = json.loads((tmp_path / "out" / "suite.json").read_text())
    assert [o["name"] for o in record["outcomes"]] == ["lock-fenced", "cas-valid", "lock-unfenced"]
    assert (record["suite"], record["digest"], record["commit"]) == ("t", "d1", "c1")
    assert record["started"] == "2026-01-01T00:00:01+00:00"
    copied = tmp_path / "out" / "t-cas-valid" / STAMP
    for f in demo["cas-valid"].iterdir():
        if f.is_file():
            assert (copied / f.name).read_bytes() == f.read_bytes()
    assert len(_cases(tmp_path / "out" / "junit.xml")) == 3


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"suite": "other"}, "shards of different suites: t in"),
        ({"digest": "d2"}, "shards of different versions of the suite file: d1 in"),
        ({"commit": "c2"}, "shards made by different commits of the harness: c1 in"),
        ({"runs": ["lock-fenced"]}, "shards of different selections"),
    ],
)
def test_shards_of_different_suites_or_commits_are_refused(
    tmp_path: Path,
    demo: dict[str, Path],
    capsys: pytest.CaptureFixture[str],
    change: dict[str, Any],
    said: str,
) -> None:
    a = _shard(tmp_path / "a", demo, 1, 2, ["lock-fenced", "lock-unfenced"])
    b = _shard(tmp_path / "b", demo, 2, 2, ["cas-valid"], **change)
    code, err = _merge([a, b], tmp_path / "out", capsys)
    assert code == 254 and said in err and err.count("\n") == 1, err
    assert not (tmp_path / "out" / "suite.json").exists()


def test_a_missing_repeated_or_differently_split_shard_is_named(
    tmp_path: Path, demo: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a = _shard(tmp_path / "a", demo, 1, 3, ["lock-fenced"])
    c = _shard(tmp_path / "c", demo, 3, 3, ["lock-unfenced"])
    code, err = _merge([a, c], tmp_path / "out", capsys)
    assert code == 254 and "shard 2/3 missing" in err and err.count("\n") == 1, err
    code, err = _merge([a, c, a], tmp_path / "out", capsys)
    assert code == 254 and "shard 1/3 given twice" in err, err
    b = _shard(tmp_path / "b", demo, 2, 2, ["cas-valid"])
    code, err = _merge([a, b], tmp_path / "out", capsys)
    assert code == 254 and "shards of different splits" in err, err
    # split with other durations: "cas-valid" run by two shards, "lock-unfenced" by none
    d = _shard(tmp_path / "d", demo, 2, 3, ["cas-valid"])
    e = _shard(tmp_path / "e", demo, 3, 3, ["cas-valid"])
    code, err = _merge([a, d, e], tmp_path / "out", capsys)
    assert code == 254 and "the shards were split differently" in err, err


def test_what_is_not_a_shard_result_is_refused(
    tmp_path: Path, demo: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a = _shard(tmp_path / "a", demo, 1, 1, ["lock-fenced"])
    whole = tmp_path / "whole"
    shutil.copytree(a, whole)
    result = next(whole.glob("suite-t/*/suite.json"))
    data = json.loads(result.read_text())
    del data["shard"]
    result.write_text(json.dumps(data))
    code, err = _merge([whole], tmp_path / "out", capsys)
    assert code == 254 and "not a shard's result" in err and err.count("\n") == 1, err
    code, err = _merge([tmp_path / "nowhere"], tmp_path / "out", capsys)
    assert code == 254 and "no such folder" in err, err
    code, err = _merge([tmp_path / "out"], tmp_path / "out2", capsys)
    assert code == 254 and "holds none" in err, err


def test_the_output_is_never_merged_into_twice(
    tmp_path: Path, demo: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a = _shard(tmp_path / "a", demo, 1, 1, ["lock-fenced", "cas-valid", "lock-unfenced"])
    assert _merge([a], tmp_path / "out", capsys)[0] == 0
    code, err = _merge([a], tmp_path / "out", capsys)
    assert code == 254 and "already holds a suite result" in err, err


def test_a_link_in_a_shard_is_not_followed_and_a_missing_run_is_named(
    tmp_path: Path, demo: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not a run's")
    a = _shard(tmp_path / "a", demo, 1, 1, ["lock-fenced"], runs=["lock-fenced"])
    run = next(a.glob(f"suite-t/*/t-lock-fenced/{STAMP}"))
    (run / "extra.txt").symlink_to(secret)
    (run / "elsewhere").symlink_to(tmp_path, target_is_directory=True)
    code, err = _merge([a], tmp_path / "out", capsys)
    copied = tmp_path / "out" / "t-lock-fenced" / STAMP
    assert (copied / "results.json").is_file()
    assert not (copied / "extra.txt").exists() and not (copied / "elsewhere").exists()
    assert "not copied (not a regular file)" in err and "not copied (a link)" in err
    shutil.rmtree(run)
    code, err = _merge([a], tmp_path / "out2", capsys)
    assert code == 254 and "the directory of run 'lock-fenced'" in err and "missing" in err


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d["outcomes"].pop(), "no outcome for lock-fenced"),
        (lambda d: d["outcomes"][0].update(run_dir="/x/../.."), "not one a suite writes"),
        (lambda d: d.update(started="yesterday"), "not a shard's result (ValueError"),
    ],
)
def test_a_shard_result_that_does_not_hold_together_is_refused(
    tmp_path: Path, demo: dict[str, Path], capsys: pytest.CaptureFixture[str], edit: Any, said: str
) -> None:
    """A shard cut short (an outcome missing), a run directory outside the shard's folder,
    a time that is not one: refused before anything is copied."""
    a = _shard(tmp_path / "a", demo, 1, 1, ["lock-fenced"], runs=["lock-fenced"])
    result = next(a.glob("suite-t/*/suite.json"))
    data = json.loads(result.read_text())
    edit(data)
    result.write_text(json.dumps(data))
    code, err = _merge([a], tmp_path / "out", capsys)
    assert code == 254 and said in err and err.count("\n") == 1, err
    assert list((tmp_path / "out").iterdir()) == []


REPEATED = QUICK.split("[[run]]")[0].replace('"quick"', '"rep"').replace("seed = 7", "seed = 3")
REPEATED += """[[run]]
name = "cas"
[[run]]
name = "cas-twice"
repeat = 2
pass_rule = "most"
"""
"""QUICK's defaults, one run and one repeated twice."""


@pytest.mark.slow
def test_a_repeated_entry_merged_keeps_its_rate_and_its_runs(tmp_path: Path) -> None:
    """The rate of a repeated entry (its runs, seeds and pass rule) is in the merged
    suite.json as in the whole suite's, each run's directory the merged copy."""
    suite = tmp_path / "rep.toml"
    suite.write_text(REPEATED)
    assert main(["suite", "run", str(suite), "-o", str(tmp_path / "whole")]) == 0
    for i in (1, 2):
        argv = ["suite", "run", str(suite), "--shard", f"{i}/2", "-o", str(tmp_path / f"s{i}")]
        assert main(argv) == 0
    merged = tmp_path / "merged"
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(merged)]) == 0
    (whole,) = (tmp_path / "whole").glob("suite-rep/*")

    def rate(folder: Path) -> dict[str, Any]:
        (o,) = [
            o for o in json.loads((folder / "suite.json").read_text())["outcomes"] if "repeat" in o
        ]
        return o["repeat"]

    got, want = rate(merged), rate(whole)
    drop = ("runs", "first_failing")
    assert {k: v for k, v in got.items() if k not in drop} == {
        k: v for k, v in want.items() if k not in drop
    }
    assert got["rate"] == "0/2 invalid" and got["pass_rule"] == "most" and got["seeds"] == [3, 4]
    for run in got["runs"]:
        where = Path(run["run_dir"])
        assert merged in where.parents and (where / "results.json").is_file(), where
