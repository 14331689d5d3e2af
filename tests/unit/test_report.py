"""The run report: one self-contained page whose first lines say pass or fail and why,
and whose embedded data opens the timeline on the anomaly."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from checkers.windows import fault_windows
from core.history import History
from core.ops import Op
from core.store import HISTORY_FILE, RESULTS_FILE
from harness.cli import EXIT_BAD_ARGS, main
from harness.report import write_report
from harness.report._metrics import op_stats, quantile
from tests.support.synthetic import cas_register_run, demo_runs


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return demo_runs(tmp_path_factory.mktemp("runs"))


def _data(html: str) -> dict:
    m = re.search(r'<script type="application/json" id="data">(.*?)</script>', html, re.S)
    assert m, "the page embeds its data"
    return json.loads(m.group(1))


def _report(run_dir: Path) -> str:
    path = write_report(run_dir)
    assert path == run_dir / "report.html"
    return path.read_text()


@pytest.mark.parametrize("name", ["lock-fenced", "lock-unfenced", "cas-valid", "cas-stale-read"])
def test_the_page_is_self_contained(runs: dict[str, Path], name: str) -> None:
    html = _report(runs[name])
    assert html.startswith("<!DOCTYPE html>")
    # nothing to fetch: no external script, style, font or image
    assert not re.search(r"<script[^>]*\bsrc=", html)
    assert not re.search(r"<link[^>]*stylesheet", html)
    assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}/", html.split('id="data"')[0])
    assert "@import" not in html and "url(" not in html
    assert "<canvas" in html and "HR.Timeline" in html


def test_an_invalid_lock_run_says_why_first(runs: dict[str, Path]) -> None:
    html = _report(runs["lock-unfenced"])
    header = html.split("</header>")[0]
    assert "FAIL" in header and "INVALID" in header
    assert "accepted" in header  # the explanation sentence, not just the word
    d = _data(html)["timeline"]
    assert d["focus"]["auto"] is True and d["focus"]["s"] < d["focus"]["e"]
    writes = d["writes"]
    stale = [i for i, s in enumerate(writes["stale"]) if s]
    assert len(stale) == 1 and writes["acc"][stale[0]] == 1
    # the stale write lies inside the first view
    assert d["focus"]["s"] <= writes["s"][stale[0]] <= d["focus"]["e"]
    kinds = {m["kind"] for m in d["marks"]}
    assert {"danger", "handover"} <= kinds
    assert "Handovers after a lost lease" in html


def test_a_valid_lock_run_opens_on_the_whole_run(runs: dict[str, Path]) -> None:
    html = _report(runs["lock-fenced"])
    header = html.split("</header>")[0]
    assert "PASS" in header and "FAIL" not in header
    d = _data(html)["timeline"]
    assert d["focus"]["auto"] is False  # offered, not imposed
    assert "Stale writes fencing rejected (1)" in html
    # lanes: the nemesis, one per client process, the resource
    assert [lane["kind"] for lane in d["lanes"]] == [
        "nemesis",
        "client",
        "client",
        "client",
        "resource",
    ]
    assert d["holds"]["token"] and d["leases"]["s"]
    assert d["faults"][0]["name"] == "client-pause" and d["faults"][0]["lanes"]


def test_an_invalid_linearizability_run_shows_its_counterexample(runs: dict[str, Path]) -> None:
    html = _report(runs["cas-stale-read"])
    header = html.split("</header>")[0]
    assert "stale read (key 0): process" in header  # the named anomaly first
    assert 'id="counterexample"' in html and "cannot be linearized" in html
    section = html.split('id="counterexample"', 1)[1]
    assert 'data-kind="stale-read"' in section and "Not linearizable" in section
    assert "Partial linearizations" in html
    d = _data(html)["timeline"]
    results = json.loads((runs["cas-stale-read"] / RESULTS_FILE).read_text())
    cx = results["checkers"]["linearizability"]["counterexample"]
    culprit = d["culprit"]
    assert d["ops"]["x"][culprit] == cx["op"]["index"]
    assert culprit in d["highlight"]
    assert d["focus"]["auto"] is True
    assert d["focus"]["s"] <= cx["window"]["start"] // 1000 <= d["focus"]["e"]
    (named,) = results["checkers"]["linearizability"]["named_anomalies"]
    (mark,) = [m for m in d["marks"] if m["label"] == "stale read (key 0)"]
    ops = [d["ops"]["x"].index(x["index"]) for x in named["involved"]]
    assert ops and set(ops) <= set(d["highlight"])
    assert mark["s"] <= min(named["involved"][i]["invoke_time"] // 1000 for i in range(len(ops)))


def test_operations_are_columns_of_equal_length(runs: dict[str, Path]) -> None:
    d = _data(_report(runs["cas-valid"]))["timeline"]
    ops = d["ops"]
    lengths = {len(v) for v in ops.values()}
    assert len(lengths) == 1
    assert lengths.pop() > 500
    # each op: start <= end (or open), a known outcome, a lane that exists
    for s, e, t, lane in zip(ops["s"], ops["e"], ops["t"], ops["lane"], strict=True):
        assert e == -1 or s <= e
        assert 0 <= t < len(d["outcomes"]) and 0 <= lane < len(d["lanes"])


def test_a_replacement_process_has_its_own_lane_linked_to_the_one_it_replaces(
    runs: dict[str, Path],
) -> None:
    d = _data(_report(runs["cas-valid"]))["timeline"]
    procs, lanes = d["procs"], d["ops"]["lane"]
    lane_of = {procs[p]: lanes[i] for i, p in enumerate(d["ops"]["p"])}
    replaced = [p for p in lane_of if p != "nemesis" and int(p) >= 5]
    assert replaced, "the synthetic run times some operations out"
    assert len(set(lane_of.values())) == len(lane_of), "one lane per process"
    for p in replaced:
        lane = d["lanes"][lane_of[p]]
        (q,) = d["lanes"][lane["after"]]["processes"]
        same_thread = [x for x in lane_of if x != "nemesis" and int(x) % 5 == int(p) % 5]
        assert q == max((x for x in same_thread if int(x) < int(p)), key=int)
        assert lane["label"] == f"p{p} ← p{q}" and lane["after"] < lane_of[p]


def test_text_from_the_run_cannot_end_the_data_script(tmp_path: Path) -> None:
    run = cas_register_run(tmp_path / "r", ops=50, faults=0)
    evil = "</script><script>alert(1)</script>"
    with open(run / HISTORY_FILE, "a") as f:
        f.write(
            json.dumps(
                {
                    "index": 10_000,
                    "time": 10**12,
                    "process": 0,
                    "type": "invoke",
                    "f": "write",
                    "value": evil,
                    "key": 0,
                }
            )
            + "\n"
        )
    html = _report(run)
    assert evil not in html
    assert any(evil in v for v in _data(html)["timeline"]["ops"]["v"])


def test_a_run_never_checked_says_so(tmp_path: Path) -> None:
    html = _report(cas_register_run(tmp_path / "r", ops=100, faults=0))
    assert "NOT CHECKED" in html.split("</header>")[0]
    assert "harness check" in html


def test_a_malformed_history_is_one_line_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 29: a history that breaks the op semantics is no history: no page drawn
    from it, but the one line naming the line (it was a page saying "malformed")."""
    run = cas_register_run(tmp_path / "r", ops=20, faults=0)
    lines = len((run / HISTORY_FILE).read_text().splitlines())
    with open(run / HISTORY_FILE, "a") as f:  # a completion nobody invoked
        f.write(
            json.dumps(
                {"index": 999, "time": 10**12, "process": 77, "type": "ok", "f": "read", "value": 1}
            )
            + "\n"
        )
    assert main(["report", str(run)]) == EXIT_BAD_ARGS
    err = capsys.readouterr().err
    assert err == (
        f"harness: {run / HISTORY_FILE}:{lines + 1}: a completion (ok) of process 77, which has "
        "no open invocation; a completion must follow its process's invocation\n"
    )
    assert not (run / "report.html").exists()


def test_availability_is_counted_inside_and_outside_fault_windows() -> None:
    ms = 1_000_000
    ops = [
        Op(0, 0, 0, "invoke", "read"),
        Op(1, 1 * ms, 0, "ok", "read", 1),
        Op(2, 10 * ms, "nemesis", "invoke", "start-partition"),
        Op(3, 11 * ms, "nemesis", "ok", "start-partition"),
        Op(4, 12 * ms, 0, "invoke", "read"),
        Op(5, 15 * ms, 0, "fail", "read"),
        Op(6, 16 * ms, 0, "invoke", "read"),
        Op(7, 19 * ms, 0, "ok", "read", 1),
        Op(8, 20 * ms, "nemesis", "invoke", "stop-partition"),
        Op(9, 21 * ms, "nemesis", "ok", "stop-partition"),
        Op(10, 30 * ms, 0, "invoke", "read"),
        Op(11, 32 * ms, 0, "ok", "read", 1),
    ]
    h = History(ops)
    windows = fault_windows(h)
    assert [(w.kind, w.start, w.end) for w in windows] == [("partition", 11 * ms, 21 * ms)]
    s = op_stats(h, windows)
    assert s.availability_in_fault == 0.5 and s.availability_clear == 1.0
    assert s.counts == {"ok": 3, "fail": 1, "info": 0, "open": 0}
    assert s.latency_quantile(0.5) == pytest.approx(0.002)
    assert s.latency_quantile(0.99) == pytest.approx(0.003)


def test_quantiles_use_the_nearest_rank() -> None:
    values = list(range(1, 101))
    assert quantile(values, 0.5) == 50 and quantile(values, 0.99) == 99
    assert quantile(values, 1.0) == 100 and quantile([7], 0.95) == 7


def test_clock_offsets_get_a_lane_per_node(tmp_path: Path) -> None:
    run = cas_register_run(tmp_path / "r", ops=200, faults=0, duration_s=4)
    s = 1_000_000_000
    clock_ops = [
        (s, "invoke", "start-clock", {"offsets": {"n1": 0.25, "n2": -1.5}}),
        (s + 1000, "ok", "start-clock", {"offsets": {"n1": 0.25, "n2": -1.5}}),
        (3 * s, "invoke", "stop-clock", None),
        (3 * s + 1000, "ok", "stop-clock", None),
    ]
    with open(run / HISTORY_FILE, "a") as f:
        for i, (t, type_, name, value) in enumerate(clock_ops):
            op = {
                "index": 100_000 + i,
                "time": t,
                "process": "nemesis",
                "type": type_,
                "f": name,
                "value": value,
            }
            f.write(json.dumps(op) + "\n")
    # the history file must stay time-ordered for the reader: sort it (and number it again:
    # indices follow the order of the file)
    ops = sorted(
        map(json.loads, (run / HISTORY_FILE).read_text().splitlines()), key=lambda x: x["time"]
    )
    lines = [json.dumps({**op, "index": i}) for i, op in enumerate(ops)]
    (run / HISTORY_FILE).write_text("\n".join(lines) + "\n")
    d = _data(_report(run))["timeline"]
    clock_lanes = {i: lane["label"] for i, lane in enumerate(d["lanes"]) if lane["kind"] == "clock"}
    assert sorted(clock_lanes.values()) == ["clock n1", "clock n2"]
    steps = {(clock_lanes[c["lane"]], c["s"], c["offset"]) for c in d["clock"]}
    assert steps == {
        ("clock n1", (s + 1000) // 1000, 0.25),  # stepped when applied
        ("clock n2", (s + 1000) // 1000, -1.5),
        ("clock n1", (3 * s + 1000) // 1000, 0.0),
        ("clock n2", (3 * s + 1000) // 1000, 0.0),
    }


def test_an_operation_that_never_returned_stays_open_to_the_end(tmp_path: Path) -> None:
    run = cas_register_run(tmp_path / "r", ops=100, faults=0, duration_s=2)
    with open(run / HISTORY_FILE, "a") as f:  # a crash: the last invocation never completed
        f.write(
            json.dumps(
                {
                    "index": 10_000,
                    "time": 3 * 10**9,
                    "process": 0,
                    "type": "invoke",
                    "f": "read",
                    "value": None,
                    "key": 0,
                }
            )
            + "\n"
        )
    d = _data(_report(run))["timeline"]
    last = d["ops"]["x"].index(10_000)
    assert d["ops"]["e"][last] == -1 and d["outcomes"][d["ops"]["t"][last]] == "open"
    assert d["t1"] >= 3 * 10**6  # the timeline reaches it
    assert "1 never returned" in _report(run)
