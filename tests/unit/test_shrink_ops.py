"""Shrinking the other checkers' violations (issue 33): the fewest operations (and a
watcher's notifications) that still show a duplicate id, an id not increasing, two writes
on one basis, a change a watcher missed and a dead instance listed, judged again by the
checker, carried in results.json as ``shrunk`` and shown first by the report."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import checkers.shrinking as shrinking
from checkers import discovery, guarded, ids, mutex_lin, watch_delivery
from checkers.anomalies import KEY
from checkers.record import RunRecord
from checkers.result import CheckResult
from checkers.shrink_holdings import shows as holdings_shows
from checkers.shrink_holdings import signature
from checkers.shrink_ops import Violation, shows
from core.history import History
from core.ops import NEMESIS, Op
from core.store import EVENTS_FILE, HISTORY_FILE, TEST_FILE, write_json
from harness.analysis import load_record
from harness.cli import main
from harness.report._shrunk import shrunk_section
from tests.unit import test_watch_checker as watch
from tests.unit.test_discovery import FAULTS, expires_at, paused

S = 1_000_000_000


def _again(record: RunRecord, shrunk: dict[str, Any]) -> RunRecord:
    """``record`` with only the shrunk operations (its faults kept)."""
    faults = [op for op in record.history if op.process == NEMESIS]
    ops = sorted([*faults, *(Op(**o) for o in shrunk["ops"])], key=lambda o: o.index)
    return replace(record, history=History(ops))


def _confirmed(checker: Any, record: RunRecord) -> tuple[dict[str, Any], Violation]:
    """The checker's result of ``record``: invalid, its shrunk records smaller and judged
    invalid again by the checker alone, showing the same first violation."""
    r = checker.check_record(record)
    assert r.valid is False, r.summary
    shrunk = r.details["shrunk"]
    assert shrunk["minimal"] and shrunk["operations"] < shrunk["of"], shrunk
    assert shrunk["confirmed_by"] == f"the {checker.NAME} checker"
    first = checker.violations(r)[0]
    again = shows(checker.judged(_again(record, shrunk)), checker.violations, first)
    assert again is not None and again.sentence == shrunk["sentence"]
    return shrunk, first


def _ids_run(values: list[tuple[int, float, int]]) -> RunRecord:
    """A unique-ids history: (process, invoked at s, id) each, completed 10 ms later."""
    ops: list[Op] = []
    for p, t, v in values:
        ops.append(Op(0, int(t * S), p, "invoke", "generate", None))
        ops.append(Op(0, int((t + 0.01) * S), p, "ok", "generate", v, node="n1"))
    ops.sort(key=lambda o: o.time)
    return RunRecord(History(op.with_(index=i) for i, op in enumerate(ops)))


def _invocations(shrunk: dict[str, Any]) -> set[tuple[Any, int]]:
    return {(o["process"], o["time"]) for o in shrunk["ops"] if o["type"] == "invoke"}


def test_a_duplicate_id_shrinks_to_its_two_issues() -> None:
    ok = [(p, 0.1 * n + 0.01 * p, 10 * n + p) for n in range(30) for p in range(3)]
    record = _ids_run([*ok, (4, 5.0, 21)])  # process 4 handed id 21 again
    shrunk, first = _confirmed(ids, record)
    assert shrunk["kind"] == "duplicate-id" and shrunk["operations"] == 2 and shrunk["of"] == 91
    assert _invocations(shrunk) == set(first.who) == {(1, int(0.21 * S)), (4, 5 * S)}


def test_an_id_not_increasing_shrinks_to_the_client_s_two_ids() -> None:
    ok = [(p, 0.1 * n + 0.01 * p, 10 * n + p) for n in range(30) for p in range(3)]
    record = _ids_run([*ok, (2, 5.0, 7)])  # process 2 got 292 before: 7 is not above it
    shrunk, first = _confirmed(ids, record)
    assert shrunk["kind"] == "id-not-increasing" and shrunk["operations"] == 2, shrunk
    assert _invocations(shrunk) == set(first.who)


def test_two_writes_on_one_basis_shrink_to_the_two_writes() -> None:
    ops: list[Op] = []

    def write(p: int, t: float, basis: int, ok: bool = True) -> None:
        ops.append(Op(0, int(t * S), p, "invoke", "write", {"name": "cell"}))
        value = {"name": "cell", "basis": basis, "value": {"writer": p}}
        end = "ok" if ok else "fail"
        ops.append(Op(0, int((t + 0.01) * S), p, end, "write", value, error=None if ok else "x"))

    for n in range(20):
        write(n % 3, 0.1 * n, n)
        write((n + 1) % 3, 0.1 * n + 0.02, n, ok=False)  # refused: the basis was taken
    write(5, 3.0, 4)  # the data let a second write on basis 4 in
    ops.sort(key=lambda o: o.time)
    record = RunRecord(History(op.with_(index=i) for i, op in enumerate(ops)))
    shrunk, first = _confirmed(guarded, record)
    assert shrunk["operations"] == 2 and shrunk["of"] == 41
    assert _invocations(shrunk) == set(first.who)
    assert shrunk["label"] == "two writes accepted on one basis"


def test_a_missed_change_shrinks_to_the_write_and_the_watcher_s_subscription() -> None:
    r = watch.base()
    for i in range(1, 12):
        r.write(i, "0", i, i)
        if i != 6:  # the change to 6 never reached the watcher
            r.collect(i + 0.02, 0, [watch.change("0", i, i), {"kind": "resumed"}])
    r.collect(15, 0, [])
    record = r.record()
    shrunk, first = _confirmed(watch_delivery, record)
    assert first.kind == "missed" and shrunk["label"] == "change never delivered"
    # the write of 6, and the collects that subscribed and reported after the writes
    writes = [o for o in shrunk["ops"] if o["f"] == "write" and o["type"] == "invoke"]
    assert [o["value"] for o in writes] == [6], shrunk["ops"]
    assert shrunk["operations"] <= 3 and shrunk["of"] == 23
    kept = [
        n for o in shrunk["ops"] if o["f"] == "collect" and o["type"] == "ok" for n in o["value"]
    ]
    assert shrunk["items"] == len(kept) == 2 and shrunk["of_items"] == 22, kept
    assert {n["kind"] for n in kept} == {"subscribed", "snapshot"}


def test_a_dead_instance_listed_shrinks_to_its_registration_and_the_listing() -> None:
    run = paused(expires_at(10.0))
    ops = sorted(run.ops, key=lambda o: o["time"])
    record = RunRecord(History.from_events(ops), test={"faults": FAULTS})
    shrunk, first = _confirmed(discovery, record)
    assert shrunk["label"] == "dead instance still listed" and shrunk["operations"] == 2, shrunk
    fs = {o["f"] for o in shrunk["ops"]}
    assert fs == {"register", "list"} and first.who <= _invocations(shrunk)


def test_another_story_is_not_the_violation() -> None:
    """The same kind and key among other operations (a duplicate id handed to two others)
    does not count as still showing it; fewer of its own operations do."""
    wanted = Violation("duplicate-id", 7, frozenset({(1, 5), (2, 9), (3, 12)}), "", "")
    assert replace(wanted, who=frozenset({(1, 5), (3, 12)})).within(wanted)
    assert not replace(wanted, who=frozenset({(1, 5), (4, 20)})).within(wanted)
    assert not replace(wanted, key=8, who=frozenset({(1, 5), (2, 9)})).within(wanted)
    assert not replace(wanted, who=frozenset()).within(wanted)
    valid = CheckResult("ids", True, "", {})
    assert shows(valid, lambda r: [wanted], wanted) is None


def test_out_of_time_it_keeps_the_smallest_failing_candidate_said_not_minimal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(shrinking, "SHRINK_S", 0.0)
    ok = [(p, 0.1 * n + 0.01 * p, 10 * n + p) for n in range(30) for p in range(3)]
    record = _ids_run([*ok, (4, 5.0, 21)])
    r = ids.check_record(record)
    shrunk = r.details["shrunk"]
    assert shrunk["minimal"] is False and shrunk["not_minimal"] == "not minimal (out of its 0 s)"
    assert shrunk["operations"] == shrunk["of"] == 91  # nothing seen fail but the whole
    assert shows(ids.judged(_again(record, shrunk)), ids.violations, ids.violations(r)[0])


@pytest.mark.slow
@pytest.mark.parametrize(
    ("workload", "checker", "lead"),
    [
        ("unique-ids", ids, "These 2 operations still show the duplicate id (shrunk from "),
        (
            "version-cas",
            guarded,
            "These 2 operations still show the two writes accepted on one basis (shrunk from ",
        ),
    ],
)
def test_the_sim_forgetting_on_restart_shrinks_to_two_operations_from_the_command_line(
    workload: str, checker: Any, lead: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sim's forget-on-restart bug under a kill: the restarted service hands an id out
    again (a counter from zero) and lets a basis be written again (a version from zero);
    each shrunk to the two operations, judged again by the checker, the report's lead."""
    argv = ["run", "--workload", workload, "--nemesis", "kill", "--sim-bug", "forget-on-restart"]
    assert main([*argv, "--time-limit", "8", "--seed", "1", "-o", str(tmp_path)]) == 1
    capsys.readouterr()
    run = (tmp_path / "latest").resolve()
    r = json.loads((run / "results.json").read_text())["checkers"][checker.NAME]
    shrunk = r["shrunk"]
    assert shrunk["operations"] == 2 and shrunk["minimal"] and shrunk["of"] > 50, shrunk
    first = checker.violations(CheckResult(checker.NAME, False, "", r))[0]
    again = checker.judged(_again(load_record(run), shrunk))
    assert shows(again, checker.violations, first) is not None
    assert _invocations(shrunk) == set(first.who)
    page = (run / "report.html").read_text()
    assert lead in page and page.index('id="shrunk"') < page.index('id="figure"')


def _run_dir(path: Path, workload: str, record: RunRecord) -> Path:
    """A finished run directory of ``workload`` holding ``record``'s history."""
    path.mkdir()
    test = {
        "name": f"sim-{workload}",
        "options": {"target": "sim", "workload": workload, "nemesis": ["none"], "seed": 1},
        "seed": 1,
        "status": "finished",
        "nodes": ["sim"],
        "workload_start_ns": 0,
        **record.test,
    }
    write_json(path / TEST_FILE, test)
    lines = (json.dumps(op.to_dict()) + "\n" for op in record.history)
    (path / HISTORY_FILE).write_text("".join(lines))
    (path / EVENTS_FILE).write_text("".join(json.dumps(e) + "\n" for e in record.events))
    return path


def _missed_change() -> RunRecord:
    r = watch.base()
    for i in range(1, 12):
        r.write(i, "0", i, i)
        if i != 6:
            r.collect(i + 0.02, 0, [watch.change("0", i, i)])
    r.collect(15, 0, [])
    return r.record()


def _dead_listed() -> RunRecord:
    run = paused(expires_at(10.0))
    ops = sorted(run.ops, key=lambda o: o["time"])
    return RunRecord(History.from_events(ops), test={"faults": FAULTS})


@pytest.mark.parametrize(
    ("workload", "record", "checker", "lead"),
    [
        (
            "watch",
            _missed_change,
            watch_delivery,
            "These 3 operations and 2 notifications still show the change never delivered "
            "(shrunk from 23 operations and 12 notifications, confirmed by the watch-delivery "
            "checker).",
        ),
        (
            "registry",
            _dead_listed,
            discovery,
            "These 2 operations still show the dead instance still listed (shrunk from ",
        ),
    ],
)
def test_harness_check_of_a_run_shrinks_and_its_report_opens_on_it(
    workload: str,
    record: Any,
    checker: Any,
    lead: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No sim bug makes a watcher miss a change or a dead instance stay listed: a run
    directory holding one, checked from the command line, carries the shrunk operations
    in its results.json and its report opens on them."""
    run = _run_dir(tmp_path / "run", workload, record())
    page, out = tmp_path / "page.html", tmp_path / "out"
    assert main(["check", str(run), "--out", str(out), "--html", str(page)]) == 1
    capsys.readouterr()
    (results,) = out.rglob("results.json")
    r = json.loads(results.read_text())["checkers"][checker.NAME]
    assert r["valid"] is False and r["shrunk"]["minimal"], r
    first = checker.violations(CheckResult(checker.NAME, False, "", r))[0]
    again = checker.judged(_again(load_record(run), r["shrunk"]))
    assert shows(again, checker.violations, first) is not None
    text = page.read_text()
    assert lead in text and text.index('id="shrunk"') < text.index('id="figure"')


def _lock_run() -> RunRecord:
    """Twenty-two holdings of one lock, each released; process 1 granted it at 3.1 s while
    process 0 held it from 3.0 s to its release at 3.5 s."""
    ops: list[Op] = []

    def hold(p: int, t: float, lease: int, held: float = 0.1) -> None:
        ops.append(Op(0, int(t * S), p, "invoke", "acquire", {"name": "l"}))
        granted = {"name": "l", "token": lease, "lease": lease}
        ops.append(Op(0, int((t + 0.01) * S), p, "ok", "acquire", granted))
        ops.append(Op(0, int((t + held) * S), p, "invoke", "release", {"name": "l"}))
        ops.append(Op(0, int((t + held + 0.01) * S), p, "ok", "release", {"name": "l"}))

    for n in range(10):
        hold(n % 3, n * 0.2, 100 + n)
    hold(0, 3.0, 200, held=0.5)
    hold(1, 3.1, 201)
    for n in range(10):
        hold(n % 3, 4 + n * 0.2, 300 + n)
    ops.sort(key=lambda o: o.time)
    return RunRecord(History(op.with_(index=i) for i, op in enumerate(ops)))


def test_a_lock_granted_while_held_shrinks_to_the_two_holdings_that_cannot_be_ordered() -> None:
    """The owner-aware mutex check's shrink drops whole holdings (a release never without
    its acquire: dropping one alone makes any two acquires unorderable, another story)."""
    record = _lock_run()
    r = mutex_lin.check_record(record)
    assert r.valid is False
    shrunk = r.details["shrunk"]
    assert (shrunk["holdings"], shrunk["of_holdings"], shrunk["operations"]) == (2, 22, 4)
    assert shrunk["minimal"] and shrunk["confirmed_by"] == "the mutex-linearizability checker"
    kept = {(o["process"], o["f"], o["time"]) for o in shrunk["ops"] if o["type"] == "invoke"}
    assert kept == {
        (0, "acquire", 3 * S),
        (0, "release", int(3.5 * S)),
        (1, "acquire", int(3.1 * S)),
        (1, "release", int(3.2 * S)),
    }
    again = mutex_lin.judged(_again(record, shrunk))
    assert holdings_shows(again, signature(r.details[KEY][0])) is not None
    lead = shrunk_section({"checkers": {mutex_lin.NAME: {**r.to_dict(), "valid": False}}})
    assert "These 2 holdings and 0 writes still cannot be ordered (shrunk from 22" in lead


@pytest.mark.slow
def test_the_sim_granting_past_a_lease_shrinks_the_mutex_check_to_two_holdings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The sim's lock-ignores-lease bug: a lock granted while its holder's lease was valid;
    the owner-aware mutex check's shrink, judged again, beside the mutex checker's."""
    argv = ["run", "--sim-bug", "lock-ignores-lease", "--nemesis", "none", "--time-limit", "4"]
    assert main([*argv, "--seed", "3", "-o", str(tmp_path)]) == 1
    capsys.readouterr()
    run = (tmp_path / "latest").resolve()
    r = json.loads((run / "results.json").read_text())["checkers"][mutex_lin.NAME]
    shrunk = r["shrunk"]
    assert shrunk["holdings"] == 2 and shrunk["minimal"] and shrunk["of_holdings"] > 10, shrunk
    again = mutex_lin.judged(_again(load_record(run), shrunk))
    assert holdings_shows(again, signature(r[KEY][0])) is not None
    assert "These 2 holdings and 0 writes still show the two holders" in (
        (run / "report.html").read_text()
    )
