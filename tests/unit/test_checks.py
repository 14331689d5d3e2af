"""Which checkers each workload gets (``workloads.workload_registry``, through harness.analysis),
and the results.json they make from a run directory (as `harness check` runs them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_mutex_records import (
    by_time,
    fault,
    history,
    holding,
    lease_events,
    service_grant,
    service_lease,
    write,
)

from checkers.record import RunRecord
from core.errors import HarnessError
from core.history import History
from core.store import write_json
from harness.analysis import check_run, checkers_for, recorded_facts, service_log


def names(workload: str, target: str = "sim", **facts: Any) -> list[str]:
    """The checkers of a run recorded with ``facts`` in test.json (none: a run recorded
    before them, whose facts come from its target's spec)."""
    test = recorded_facts({"options": {"workload": workload, "target": target}, **facts})
    record = RunRecord(History([]), test=test)
    return [c(record).checker for c in checkers_for(record)]


def test_each_workload_gets_its_checkers() -> None:
    lin = ["mutex", "fencing", "mutex-linearizability", "stats", "faults"]
    assert names("lock") == lin
    assert names("lock", "etcd") == lin
    no_claim = ["mutex", "fencing", "stats", "faults"]
    assert names("lock", "redlock") == no_claim  # no linearizable claim
    assert names("lock", "gone") == no_claim  # a target no longer known
    assert names("election") == ["election", "stats", "faults"]
    assert names("cas-register") == ["linearizability", "stats", "faults"]
    assert names("") == ["linearizability", "faults"]  # a run that names no workload


def test_the_recorded_fact_decides_not_the_target_name() -> None:
    lin = ["mutex", "fencing", "mutex-linearizability", "stats", "faults"]
    assert names("lock", "redlock", linearizable_locks=True) == lin
    no_claim = ["mutex", "fencing", "stats", "faults"]
    assert names("lock", "etcd", linearizable_locks=False) == no_claim
    assert names("lock", "anything", linearizable_locks=True) == lin


def test_an_old_run_dir_gets_the_fact_from_the_registry(tmp_path: Path) -> None:
    d = run_dir(tmp_path, fencing=True)  # its test.json predates linearizable_locks
    assert "mutex-linearizability" in check_run(d)["checkers"]


def test_the_service_log_is_read_where_test_json_says(tmp_path: Path) -> None:
    d = run_dir(tmp_path, fencing=True)
    test = json.loads((d / "test.json").read_text())
    (d / "sim").rename(d / "service")
    write_json(d / "test.json", {**test, "service_log": "service/events.jsonl"})
    ho = check_run(d)["checkers"]["mutex"]["handovers"][0]
    assert ho["lease_expiry_source"] == "service"
    write_json(d / "test.json", {**test, "service_log": None})  # a target that keeps none
    ho = check_run(d)["checkers"]["mutex"]["handovers"][0]
    assert ho["lease_expiry_source"] != "service"


def test_an_old_run_dir_gets_its_service_log_from_the_registry() -> None:
    assert service_log({"options": {"target": "sim"}}) == "sim/events.jsonl"
    assert service_log({"options": {"target": "gone"}}) is None
    assert service_log({"service_log": "x/y.jsonl", "options": {"target": "sim"}}) == "x/y.jsonl"


@pytest.mark.parametrize("bad", ["/etc/passwd", "../elsewhere.jsonl", 42])
def test_a_service_log_outside_the_run_dir_is_one_line(bad: Any) -> None:
    with pytest.raises(HarnessError) as e:
        service_log({"service_log": bad})
    assert "\n" not in str(e.value) and "service_log" in str(e.value)


def run_dir(tmp: Path, fencing: bool, extra: dict[str, Any] | None = None) -> Path:
    """A sim lock run on disk: 1 paused 2..20 s, its lease expired at 11 s (the sim
    server's log says so), 2 took over at 11.01 s, 1's late write arrived at 20.005 s."""
    h = history(
        holding(1, 0.0, 0.1, 1, 11),
        (0.2, 1, "invoke", "write", {"name": "lock"}),
        holding(2, 0.5, 11.1, 2, 22, release=12.0),
        fault("client-pause", 2.0, 20.0, {"processes": [1]}),
        (20.01, 1, "ok" if not fencing else "fail", "write", None),
    )
    (tmp / "sim").mkdir(parents=True)
    (tmp / "history.jsonl").write_text("".join(op.to_json() + "\n" for op in h))
    lines = {
        "resource.jsonl": [write(11.5, 2, 2, None, True), write(20.005, 1, 1, 2, not fencing)],
        "events.jsonl": by_time(
            lease_events(1, 11, [0.05, 1.0], lost=20.02), lease_events(2, 22, [0.6, 11.05])
        ),
        "sim/events.jsonl": by_time(
            service_lease(11, 0.04, [1.0], expired=11.0),
            service_lease(22, 0.59, [11.0], revoked=12.02),
            service_grant(0.05, 11, 1),
            service_grant(11.01, 22, 2),
        ),
    }
    for name, rows in lines.items():
        (tmp / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    options = {"workload": "lock", "target": "sim", "fencing": fencing, "extra": extra or {}}
    write_json(tmp / "test.json", {"name": "constructed", "options": options})
    return tmp


def test_results_json_of_a_paused_holder_with_fencing(tmp_path: Path) -> None:
    out = check_run(run_dir(tmp_path, fencing=True))
    assert out["valid"] is True, json.dumps(out, indent=1)
    saved = json.loads((tmp_path / "results.json").read_text())
    assert set(saved["checkers"]) == {
        "mutex",
        "fencing",
        "mutex-linearizability",
        "stats",
        "faults",
    }
    mutex = saved["checkers"]["mutex"]
    (g,) = mutex["overlap_groups"]
    assert g["classification"]["cause"] == "lease-expired-while-paused"
    (ho,) = mutex["handovers"]
    assert ho["lease_expiry_source"] == "service" and ho["danger_window_s"] == 9.005
    assert abs(ho["handover_delay_s"] - 0.01) < 1e-9
    assert saved["checkers"]["mutex-linearizability"]["lease_ends_by_service"] >= 1
    stats = saved["checkers"]["stats"]
    assert stats["availability"]["windows"][0]["kind"] == "client-pause"


def test_results_json_of_a_paused_holder_without_fencing(tmp_path: Path) -> None:
    out = check_run(run_dir(tmp_path, fencing=False))
    assert out["valid"] is False
    c = out["checkers"]
    assert c["mutex"]["valid"] is False and c["fencing"]["valid"] is True
    assert c["mutex-linearizability"]["valid"] is True  # the service itself was correct
    (text,) = c["mutex"]["violations"]
    assert "lease expired while its holder was paused" in text and "Fix: fencing" in text


@pytest.mark.parametrize("legacy", [False, True], ids=["option", "older-extra-table"])
def test_accept_unavailable_is_read_from_the_options(tmp_path: Path, legacy: bool) -> None:
    """A pause during which no operation even ran proves nothing about it: unknown, unless
    the test's options accept it (older runs kept it in an ``extra`` table)."""
    d = run_dir(tmp_path / "a", fencing=True)
    h = history(
        (0.0, 1, "invoke", "acquire", {"name": "lock"}),
        (0.1, 1, "ok", "acquire", {"token": 1, "lease": 11, "name": "lock"}),
        fault("client-pause", 5.0, 6.0, {"processes": [1]}),
    )
    (d / "history.jsonl").write_text("".join(op.to_json() + "\n" for op in h))
    assert check_run(d)["checkers"]["stats"]["valid"] == "unknown"
    opts = json.loads((d / "test.json").read_text())
    if legacy:
        opts["options"]["extra"] = {"accept_unavailable": True}
    else:
        opts["options"]["accept_unavailable"] = True
    write_json(d / "test.json", opts)
    assert check_run(d)["checkers"]["stats"]["valid"] is True


def test_recorded_facts_fill_in_an_older_run_without_changing_its_test_json() -> None:
    older = {"options": {"workload": "lock", "target": "etcd"}}
    facts = recorded_facts(older)
    assert facts["linearizable_locks"] is True and "service_log" in facts
    assert older == {"options": {"workload": "lock", "target": "etcd"}}, "left as it was"
    recorded = {**older, "linearizable_locks": False, "service_log": None}
    assert recorded_facts(recorded)["linearizable_locks"] is False, "what a run recorded wins"
