"""Issue 29, "Evidence cross-checked": a run directory whose records were lost, cut or
changed after the run gets no verdict from them.

One real sim run (a lock without fencing, its holder paused: a stale write accepted,
INVALID) is made once through the `harness run` command; each test tampers with a copy
and checks it with `harness check` (``harness.cli.main``): the checkers that read the
broken record are unknown with the reason, the run is unknown, and the intact copy is
still INVALID. Before this, the resource's log cut to 5 lines or deleted checked valid.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_checks import run_dir as constructed_run
from test_cli import run

from checkers import evidence
from checkers.record import Reading, RunRecord
from core.history import History

pytestmark = pytest.mark.slow

SHORT = [
    "--lease-ttl", "2", "--keepalive", "0.5", "--pause-at", "1.5", "--pause-for", "4",
    "--time-limit", "7", "--recovery-time", "1", "--work-time", "0.1",
    "--acquire-wait", "1", "--seed", "7",
]  # fmt: skip
"""The classic scenario at a few seconds' length (as tests/unit/test_run_sim.py)."""

LOCK_RECORDS = {"test.json", "history.jsonl", "resource.jsonl", "events.jsonl", "sim/events.jsonl"}


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run directory of one INVALID sim lock run, as `harness run` left it."""
    out = tmp_path_factory.mktemp("evidence")
    argv = ["run", "--workload", "lock", "--fencing", "off", "--nemesis", "client-pause"]
    r = subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv, *SHORT, "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert r.returncode == 1, r.stdout + r.stderr
    return (out / "latest").resolve()


@pytest.fixture
def copy(original: Path, tmp_path: Path) -> Path:
    """A copy of the run directory to tamper with."""
    d = tmp_path / "run"
    shutil.copytree(original, d, symlinks=True)
    return d


def acknowledged(d: Path) -> int:
    """The writes the run's history acknowledges (ok)."""
    ops = [json.loads(line) for line in (d / "history.jsonl").read_text().splitlines()]
    return sum(1 for op in ops if op["f"] == "write" and op["type"] == "ok")


def check(capsys: pytest.CaptureFixture[str], d: Path) -> tuple[int, str, dict[str, Any]]:
    """`harness check D`: its exit code, its output and the results.json it wrote."""
    code, out, err = run(capsys, "check", str(d))
    assert "Traceback" not in out + err, out + err
    return code, out, json.loads((d / "results.json").read_text())


def unknown_for(results: dict[str, Any], names: set[str], reason: str) -> None:
    """Each checker of ``names`` is unknown with ``reason`` in its summary; no other
    checker is made unknown by the evidence."""
    for name, r in results["checkers"].items():
        if name in names:
            assert r["valid"] == "unknown", (name, r["summary"])
            assert reason in r["summary"] and r["evidence"], (name, r["summary"])
        else:
            assert "evidence" not in r, (name, r["summary"])
    assert results["valid"] == "unknown" and results["verdict"] == "unknown"


def test_the_run_records_the_digest_of_each_record(original: Path) -> None:
    results = json.loads((original / "results.json").read_text())
    digests = results["record_digests"]
    assert set(digests) == LOCK_RECORDS
    assert all(v.startswith("sha256:") and len(v) == 7 + 64 for v in digests.values())
    assert "changed_since_run" not in results and "evidence" not in results


def test_the_intact_run_is_still_invalid(capsys: pytest.CaptureFixture[str], copy: Path) -> None:
    code, out, results = check(capsys, copy)
    assert code == 1 and results["valid"] is False, out
    assert results["checkers"]["mutex"]["valid"] is False
    assert results["checkers"]["fencing"]["valid"] is True
    assert "changed:" not in out and "changed_since_run" not in results
    assert set(results["record_digests"]) == LOCK_RECORDS  # the run's, kept


def test_the_resource_log_cut_to_5_lines_is_unknown_not_valid(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    """The issue's reproduction: `head -5 resource.jsonl` checked valid."""
    lines = (copy / "resource.jsonl").read_text().splitlines(keepends=True)
    (copy / "resource.jsonl").write_text("".join(lines[:5]))
    code, out, results = check(capsys, copy)
    n = acknowledged(copy)
    reason = f"resource.jsonl has 5 accepted writes but the history acknowledges {n}"
    assert code == 2, out
    unknown_for(results, {"mutex", "fencing"}, reason)
    assert f"{n - 5} of them are not in it (the first: process" in out
    assert "changed: resource.jsonl changed since the run (digest differs)" in out
    assert results["changed_since_run"] == ["resource.jsonl changed since the run (digest differs)"]
    on_records = results["checkers"]["fencing"]["on_the_records"]
    assert on_records["valid"] is True, "what the broken record alone would have said"


def test_the_resource_log_deleted_is_unknown(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    (copy / "resource.jsonl").unlink()
    code, out, results = check(capsys, copy)
    reason = f"resource.jsonl is missing but the history acknowledges {acknowledged(copy)} writes"
    assert code == 2, out
    unknown_for(results, {"mutex", "fencing"}, reason)
    assert f"unknown (mutex, fencing): {reason}" in out
    assert "resource.jsonl is gone since the run" in out


def test_the_resource_log_emptied_is_unknown(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    (copy / "resource.jsonl").write_text("")
    code, out, results = check(capsys, copy)
    reason = f"resource.jsonl is empty but the history acknowledges {acknowledged(copy)} writes"
    assert code == 2, out
    unknown_for(results, {"mutex", "fencing"}, reason)


def test_the_resource_log_cut_mid_line_is_unknown(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    """A last line cut mid-JSON is what a killed run leaves, but this run finished."""
    data = (copy / "resource.jsonl").read_bytes()
    ninth = [i for i, b in enumerate(data) if b == ord("\n")][8]
    (copy / "resource.jsonl").write_bytes(data[: ninth + 30])
    code, out, results = check(capsys, copy)
    reason = "resource.jsonl ends in a line cut short mid-JSON (line 10) though the run finished"
    assert code == 2, out
    unknown_for(results, {"mutex", "fencing"}, reason)


def test_the_events_deleted_under_faults_is_unknown(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    (copy / "events.jsonl").unlink()
    code, out, results = check(capsys, copy)
    reason = "events.jsonl is missing though the run asked for faults"
    assert code == 2, out
    unknown_for(results, {"mutex", "fencing", "mutex-linearizability"}, reason)
    assert results["checkers"]["faults"]["valid"] is True  # its windows are the history's


def test_grants_missing_from_the_services_log_are_unknown(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    log = copy / "sim" / "events.jsonl"
    rows = log.read_text().splitlines(keepends=True)
    kept = [r for r in rows if json.loads(r).get("event") != "lock-granted"][:-1]
    kept += [r for r in rows if json.loads(r).get("event") == "lock-granted"][:3]
    log.write_text("".join(kept))
    code, out, results = check(capsys, copy)
    assert code == 2, out
    unknown_for(
        results,
        {"mutex", "fencing", "mutex-linearizability"},
        "sim/events.jsonl, the service's own log, has 3 grants but the clients saw",
    )


def test_a_service_that_keeps_no_log_is_said_not_called_inconsistent(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    """As an etcd run's: test.json names no service log, and none is there."""
    test = json.loads((copy / "test.json").read_text())
    (copy / "test.json").write_text(json.dumps({**test, "service_log": None}))
    shutil.rmtree(copy / "sim")
    code, out, results = check(capsys, copy)
    assert code == 1 and results["checkers"]["mutex"]["valid"] is False, out
    (said,) = results["evidence"]["unchecked"]
    assert said.startswith("the service (sim) keeps no log of its grants: the clients'")
    assert "not an inconsistency" in said and "broken" not in results["evidence"]
    assert "test.json changed since the run (digest differs)" in results["changed_since_run"]
    assert "sim/events.jsonl is gone since the run (the run recorded its digest)" in out


def test_a_history_edited_after_the_run_is_said_beside_the_verdict(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    """The verdict is the one the files give as they are now (the same INVALID here: the
    edit changed no operation's meaning); the change is said beside it, by every later
    check, for results.json keeps the run's digests."""
    history = copy / "history.jsonl"
    history.write_text(history.read_text().replace('"node":"sim"', '"node":"sim-edited"', 1))
    changed = "history.jsonl changed since the run (digest differs)"
    for _ in range(2):
        code, out, results = check(capsys, copy)
        assert code == 1 and results["valid"] is False, out
        assert f"    changed: {changed}" in out
        assert results["changed_since_run"] == [changed]
    code, out, _ = run(capsys, "report", str(copy))
    assert code == 1 and f"  changed: {changed}" in out
    page = (copy / "report.html").read_text()
    assert f"Not as the run left it: {changed}." in page


def test_a_killed_runs_cut_last_line_is_a_note_not_a_broken_record(tmp_path: Path) -> None:
    """A run that did not finish leaves a cut last line in any record it was writing: said
    as a note; the relations still hold the rest to account."""
    from harness.analysis import check_run

    d = constructed_run(tmp_path, fencing=False)
    with (d / "resource.jsonl").open("a") as f:
        f.write('{"time": 3, "wri')
    assert check_run(d)["valid"] is False  # no status: not said to have finished
    test = json.loads((d / "test.json").read_text())
    (d / "test.json").write_text(json.dumps({**test, "status": "finished"}))
    results = check_run(d)
    assert results["valid"] == "unknown"
    assert (
        "resource.jsonl ends in a line cut short mid-JSON (line 3)"
        in (results["evidence"]["broken"]["resource"])
    )


def test_every_record_kind_has_its_relation_and_every_need_a_kind() -> None:
    assert set(evidence.KINDS) == {"history", "resource", "events", "service"}
    assert all(k in evidence.KINDS for ks in evidence.NEEDS.values() for k in ks)
    assert evidence.needs("stats") == ("history",)


def test_a_record_built_in_memory_is_not_judged() -> None:
    """Only what was read from files can be missing or cut short."""
    assert evidence.problems(RunRecord(History([])), evidence.KINDS) == {}
    record = RunRecord(History([]), readings={"events": Reading("events.jsonl", False)})
    assert evidence.problems(record, ["events"]) == {}  # no faults, no status: not expected


READS = {"resource_log": "resource", "events": "events", "service_events": "service"}


def test_the_needs_say_what_each_checker_reads() -> None:
    """Every checker module that reads a side record (``record.events``...) says so in
    ``evidence.NEEDS``: a new reader cannot go unguarded. (``linearizability``, which
    reads the clients' events only to name a stale read's cause, has no ``NAME``.)"""
    import importlib
    import re

    root = Path(evidence.__file__).parent
    for path in sorted(root.glob("*.py")):
        module = importlib.import_module(f"checkers.{path.stem}")
        name = getattr(module, "NAME", None)
        if not isinstance(name, str) or path.stem == "evidence":
            continue
        read = set(re.findall(r"record\.(resource_log|events|service_events)\b", path.read_text()))
        for attribute in read:
            assert READS[attribute] in evidence.needs(name), (name, attribute)


def test_a_service_log_entry_without_its_fields_is_a_broken_record(tmp_path: Path) -> None:
    """A grant the service's log holds without its time: the record is broken, the
    checkers that read it unknown, and nothing crashes."""
    from harness.analysis import check_run

    d = constructed_run(tmp_path, fencing=True)
    with (d / "sim" / "events.jsonl").open("a") as f:
        f.write(
            json.dumps({"event": "lock-granted", "lock": "lock", "lease": 7, "token": 9}) + "\n"
        )
    test = json.loads((d / "test.json").read_text())
    (d / "test.json").write_text(json.dumps({**test, "service_log": "sim/events.jsonl"}))
    results = check_run(d)
    assert results["valid"] == "unknown"
    said = results["evidence"]["broken"]["service"]
    assert said.startswith("sim/events.jsonl holds an entry that is not one of its kind (KeyError")
    assert results["checkers"]["fencing"]["valid"] == "unknown"


def test_a_run_whose_test_json_is_gone_is_unknown_not_checked_on_defaults(
    capsys: pytest.CaptureFixture[str], copy: Path
) -> None:
    """Without test.json the run's workload and model are not known: the history was
    checked as a plain register history and said valid (an INVALID lock run). Now every
    checker is unknown with the reason; the target's records still there are not called
    gone because this check did not read them."""
    (copy / "test.json").unlink()
    code, out, results = check(capsys, copy)
    assert code == 2 and results["valid"] == "unknown", out
    gone = "test.json is gone since the run, so its workload, model and options are not known"
    assert all(gone in r["summary"] for r in results["checkers"].values()), out
    assert f"unknown ({', '.join(results['checkers'])}): {gone}" in out
    assert results["changed_since_run"] == [
        "test.json is gone since the run (the run recorded its digest)"
    ]
