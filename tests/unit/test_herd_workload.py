"""The herd workload: its metric (``checkers.herd``), the sim service's watch primitive,
the report's tables and plot, the recipes a target refuses, and end to end on sim (the
naive recipe's notifications per handoff grow with the waiters, the queue's stay at 1)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_mutex_records import S, history
from test_sim_service import service

from checkers import herd
from checkers.herd import ACQUIRE, FAILED, NOTIFIED
from checkers.record import RunRecord
from core.option_checks import OptionError
from core.options import RunOptions
from harness.validate import check_run
from workloads.herd.report import HerdPoint, markdown_tables, plot_svg, section
from workloads.section import RunView


def cycle(p: int, t: float, hold: float) -> list[tuple[float, Any, str, str, Any]]:
    """Process ``p`` granted at ``t`` (asked 1 s before), releasing ``hold`` s later."""
    return [
        (t - 1, p, "invoke", "acquire", None),
        (t, p, "ok", "acquire", {"token": int(t * 10), "lease": p, "name": "lock-0"}),
        (t + hold, p, "invoke", "release", None),
        (t + hold + 0.01, p, "ok", "release", None),
    ]


def record(waiters: int, notified: dict[int, int], *cycles: list[Any]) -> RunRecord:
    events: list[dict[str, Any]] = [
        {"time": 0, "process": p, "event": NOTIFIED, "lock": "lock-0"}
        for p, n in notified.items()
        for _ in range(n)
    ]
    events += [
        {"time": 0, "process": 0, "event": ACQUIRE, "failed_attempts": 2, "requests": 5},
        {"time": 0, "process": 1, "event": ACQUIRE, "failed_attempts": 1, "requests": 3},
    ]
    test = {"options": {"concurrency": waiters, "recipe": "naive"}}
    return RunRecord(history(*cycles), [], events, test)


def test_notifications_failed_attempts_and_requests_per_handoff() -> None:
    # three grants: two handoffs; 6 notifications over three waiters
    r = record(3, {0: 1, 1: 2, 2: 3}, cycle(0, 1.0, 0.5), cycle(1, 1.6, 0.5), cycle(2, 2.4, 0.5))
    result = herd.check_record(r)
    d = result.details
    assert result.valid is True
    assert (d["handoffs"], d["notifications"], d["notifications_per_handoff"]) == (2, 6, 3.0)
    assert d["failed_attempts_per_handoff"] == 1.5 and d["requests_per_handoff"] == 4.0
    assert d["notifications_by_process"] == {"0": 1, "1": 2, "2": 3}
    assert "2 handoffs among 3 waiters (naive recipe): 3.00 notifications per handoff" in (
        result.summary
    )


def test_what_follows_the_last_grant_is_left_out_of_the_handoffs() -> None:
    # two handoffs; then the last holder keeps the lock and the queue drains: each waiter
    # leaving notifies its successor, which checks again and fails
    r = record(3, {}, cycle(0, 1.0, 0.5), cycle(1, 1.6, 0.5), cycle(2, 2.4, 0.5))
    at = [int(t * S) for t in (1.2, 1.3, 2.0, 2.4, 3.0, 3.5)]
    r.events.extend({"time": t, "process": 1, "event": NOTIFIED} for t in at)
    r.events.extend({"time": t, "process": 2, "event": FAILED} for t in at[:5])
    d = herd.check_record(r).details
    assert (d["notifications"], d["failed_attempts"]) == (4, 4)
    assert d["after_last_grant"] == {"notifications": 2, "failed_attempts": 1}
    assert d["notifications_per_handoff"] == 2.0


def test_handoff_latency_runs_from_the_release_to_the_next_grant() -> None:
    # 0 releases at 1.5, 1 granted at 1.6; 1 releases at 2.1, 2 granted at 2.4
    r = record(3, {}, cycle(0, 1.0, 0.5), cycle(1, 1.6, 0.5), cycle(2, 2.4, 0.5))
    latencies = herd.handoff_latencies(r)
    assert [round(x / S, 3) for x in latencies] == [0.1, 0.3]
    assert herd.check_record(r).details["handoff_latency_s"]["max"] == pytest.approx(0.3)


def test_a_holding_that_ended_without_release_starts_no_latency() -> None:
    lost = cycle(0, 1.0, 0.5)[:2]  # granted, never released (its lease was lost)
    r = record(2, {}, lost, cycle(1, 3.0, 0.5))
    assert herd.handoff_latencies(r) == []
    assert herd.check_record(r).details["handoffs"] == 1


def test_no_handoff_or_one_waiter_measures_nothing() -> None:
    one = herd.check_record(record(1, {}, cycle(0, 1.0, 0.5), cycle(0, 3.0, 0.5)))
    assert one.valid == "unknown" and "no herd to measure" in one.summary
    none = herd.check_record(record(3, {}, cycle(0, 1.0, 0.5)))
    assert none.valid == "unknown" and "never changed hands" in none.summary


def test_sim_watch_wakes_every_watcher_of_the_lock_on_one_release() -> None:
    svc, _ = service()

    async def scenario() -> tuple[Any, ...]:
        holder, *others = (svc.lease_grant(10)["lease"] for _ in range(4))
        got = svc.lock_try("l", holder)
        tries = [svc.lock_try("l", o) for o in others]
        watches = [asyncio.create_task(svc.lock_watch("l", got["token"], 5)) for _ in others]
        await asyncio.sleep(0.01)
        svc.lock_release("l", holder)
        woken = await asyncio.gather(*watches)
        first = svc.lock_try("l", others[0])
        late = await svc.lock_watch("l", got["token"], 5)  # that holding is over: at once
        return got, tries, woken, first, late

    got, tries, woken, first, late = asyncio.run(scenario())
    assert got["token"] is not None
    assert all(t == {"token": None, "held_by": got["token"]} for t in tries)
    assert woken == [{"notified": True}] * 3
    assert first["token"] > got["token"]
    assert late == {"notified": False}


def test_sim_watch_times_out_and_a_queued_acquire_says_it_waited() -> None:
    svc, _ = service()

    async def scenario() -> tuple[Any, ...]:
        a, b = svc.lease_grant(10)["lease"], svc.lease_grant(10)["lease"]
        first = await svc.lock_acquire("l", a, 1)
        held = svc.lock_try("l", b)
        quiet = await svc.lock_watch("l", held["held_by"], 0.05)
        queued = asyncio.create_task(svc.lock_acquire("l", b, 5))
        await asyncio.sleep(0.01)
        svc.lock_release("l", a)
        return first, quiet, await queued

    first, quiet, queued = asyncio.run(scenario())
    assert first["queued"] is False and queued["queued"] is True
    assert quiet == {"notified": False}


def test_a_recipe_the_target_lacks_is_refused_with_the_reason() -> None:
    opts = RunOptions.of(target="consul", workload="herd", recipe="queue", lease_ttl=5, keepalive=1)
    with pytest.raises(OptionError, match=r"consul has no queue recipe.*use --recipe naive"):
        check_run(opts)
    with pytest.raises(OptionError, match="sim has no recipe 'line'; choose from naive, queue"):
        check_run(RunOptions.of(target="sim", workload="herd", recipe="line"))
    assert check_run(RunOptions.of(target="etcd", workload="herd", recipe="queue", lease_ttl=5))


@pytest.mark.parametrize("target", ["redis", "redlock"])
def test_redis_refuses_the_herd_with_the_reason(target: str) -> None:
    """Redis has no notification a waiter can rely on and no queue of waiters: asking
    for the herd there says so, instead of listing the workloads it has."""
    with pytest.raises(OptionError, match=r"no herd workload: a waiter could only wait on"):
        check_run(RunOptions.of(target=target, workload="herd"))


def point(target: str, recipe: str, n: int, per: float) -> HerdPoint:
    details = {
        "handoffs": 10,
        "notifications_per_handoff": per,
        "failed_attempts_per_handoff": per,
        "requests_per_handoff": 2 * per,
        "requests_per_s": 40.0,
        "handoff_latency_s": {"p50": 0.012},
    }
    return HerdPoint(target, recipe, n, details, "valid")


def test_tables_per_target_and_one_plot_with_a_line_per_target_and_recipe() -> None:
    points = [
        point("etcd", r, n, n - 1 if r == "naive" else 1)
        for r in ("naive", "queue")
        for n in (5, 10)
    ] + [point("zookeeper", "naive", 5, 4)]
    text = markdown_tables(points)
    assert text.startswith("etcd:") and "\n\nzookeeper:" in text
    assert "| 10 | naive | 10 | 9.00 | 9.00 | 18.0 | 40 | 12 ms | valid |" in text
    svg = plot_svg(points)
    assert svg.count("<polyline") == 3 and "etcd queue" in svg and "zookeeper naive" in svg


def test_a_run_report_shows_its_herd_numbers() -> None:
    details = {
        "waiters": 4,
        "recipe": "queue",
        "handoffs": 7,
        "notifications_per_handoff": 1.0,
        "notifications_by_process": {"0": 3, "1": 4},
    }
    html = section(RunView(RunRecord(history()), {"checkers": {herd.NAME: details}}))
    assert "queue recipe, 4 waiters" in html and "process 1: 4" in html
    assert section(RunView(RunRecord(history()), {"checkers": {}})) == ""


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["naive", "queue"])
def test_on_sim_naive_wakes_the_herd_and_the_queue_one(recipe: str, tmp_path: Path) -> None:
    args = ["--workload", "herd", "--recipe", recipe, "--concurrency", "4", "--nemesis", "none"]
    args += ["--time-limit", "4", "--recovery-time", "0.5", "--work-time", "0.02"]
    args += ["--acquire-wait", "2", "--lease-ttl", "3", "--keepalive", "1"]
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    measured = results["checkers"][herd.NAME]
    assert results["checkers"]["mutex"]["valid"] is True
    assert measured["handoffs"] >= 10
    per = measured["notifications_per_handoff"]
    assert (1.8 <= per <= 3.2) if recipe == "naive" else (0.9 <= per <= 1.1), measured


def test_harness_compare_shows_the_herd_tables_the_workload_declares(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``harness compare`` names no workload: it prints under its matrix, and draws on its
    page, what each workload shows across runs (``Workload.across``), loaded through the
    registry: here the herd's table and plot."""
    from test_cli import run

    from core.store import write_json

    for recipe, per in (("naive", 4.0), ("queue", 1.0)):
        run_dir = tmp_path / f"herd-{recipe}" / "20260101T000000Z"
        run_dir.mkdir(parents=True)
        options = {"target": "sim", "workload": "herd", "recipe": recipe, "concurrency": 5}
        write_json(run_dir / "test.json", {"name": f"herd-{recipe}", "options": options})
        details = {**point("sim", recipe, 5, per).details, "waiters": 5, "recipe": recipe}
        write_json(run_dir / "results.json", {"valid": True, "checkers": {herd.NAME: details}})
    page = tmp_path / "matrix.html"
    code, out, _ = run(capsys, "compare", str(tmp_path), "--html", str(page))
    flat = " ".join(out.split())
    assert code == 0 and "Herd effect, per target: sim:" in flat, out
    assert "| 5 | naive | 10 | 4.00 | 4.00 | 8.0 | 40 | 12 ms | valid |" in flat
    assert 'id="herd-effect"' in page.read_text() and "sim queue" in page.read_text()
