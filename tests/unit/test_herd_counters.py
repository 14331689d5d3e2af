"""Issue 30: the herd's request counts cross-checked with the servers' own counters.

Our waiters count their requests by method; the servers' counters (etcd's
``grpc_server_started_total``, the sim's requests served per op) are read as the run opens
and as it closes. When the servers counted far more than our waiters say they sent, our
count is not the truth and the herd's numbers are no measurement: the verdict says so, and
which counter.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli import run
from test_herd_workload import cycle, record

from checkers import herd
from checkers.herd import ACQUIRE
from checkers.herd_counters import COUNTERS, END, START, CrossCheck, cross_check
from checkers.result import UNKNOWN
from clusters.etcd.metrics import started

ETCD = {"service": "etcd", "source": "grpc_server_started_total of each member's /metrics"}
COVERS = {"Txn": ["Txn"], "Watch": ["Watch"]}


def counters(phase: str, nodes: dict[str, dict[str, int]], **extra: Any) -> dict[str, Any]:
    return {"time": 0, "process": 0, "event": COUNTERS, "phase": phase, **ETCD, "nodes": nodes,
            "covers": COVERS, "errors": {}, **extra}  # fmt: skip


def acquire(by_method: dict[str, int]) -> dict[str, Any]:
    return {"time": 0, "process": 1, "event": ACQUIRE, "requests": sum(by_method.values()),
            "requests_by_method": by_method}  # fmt: skip


def herd_run(ends: dict[str, dict[str, int]]) -> Any:
    """Two handoffs whose waiters counted 30 Txn and 20 Watch requests; the members'
    counters at the start (10 and 5 Txn already) and at the end ``ends``."""
    r = record(3, {0: 1, 1: 1}, cycle(0, 1.0, 0.5), cycle(1, 1.6, 0.5), cycle(2, 2.4, 0.5))
    r.events.extend([acquire({"Txn": 20, "Watch": 12}), acquire({"Txn": 10, "Watch": 8})])
    r.events.append(counters(START, {"n1": {"Txn": 10, "Watch": 0}, "n2": {"Txn": 5}}))
    r.events.append(counters(END, ends))
    return r


def test_servers_counting_about_ours_agree() -> None:
    """Releases add a Txn each: the servers' count is above ours, within reason."""
    result = herd.check_record(herd_run({"n1": {"Txn": 40, "Watch": 12}, "n2": {"Txn": 9}}))
    assert result.valid is True
    counted = result.details["server_counters"]["counters"]
    assert counted == {
        "Txn": {"ours": 30, "servers": 34, "far_above": False},
        "Watch": {"ours": 20, "servers": 12, "far_above": False},
    }
    assert (
        "Cross-checked with etcd's own counters (grpc_server_started_total of each member's "
        "/metrics), the servers counted about as many as our waiters did: Txn 34 against "
        "our 30, Watch 12 against our 20."
    ) in result.summary


def test_servers_counting_far_more_make_the_measurement_unknown() -> None:
    result = herd.check_record(herd_run({"n1": {"Txn": 400, "Watch": 12}, "n2": {"Txn": 5}}))
    assert result.valid == UNKNOWN
    assert result.details["server_counters"]["counters"]["Txn"]["far_above"] is True
    assert (
        "the servers counted far more than our waiters did: Txn 390 against our 30 (more "
        "than 2 x ours + 20, beyond what releases, leases and pings add): our count is "
        "not the truth"
    ) in result.summary
    assert "Watch" not in result.summary.split("did:")[1].split("(")[0]


def test_a_restarted_server_counts_from_its_restart_and_an_unread_one_not_at_all() -> None:
    """A killed member's counters start again from zero: its end count is what it served
    since; a member unread at the end is not counted. Both only lower the servers' figure,
    so neither can make our count look wrong."""
    ends = {"n1": {"Txn": 3, "Watch": 1}}
    r = herd_run(ends)
    r.events[-1]["errors"] = {"n2": "ConnectionError: refused"}
    checked = cross_check(r.events, {"Txn": 30, "Watch": 20})
    assert isinstance(checked, CrossCheck)
    assert checked.restarted == ("n1",) and checked.unread == ("n2",)
    assert [(t.counter, t.servers) for t in checked.tallies] == [("Txn", 3), ("Watch", 1)]
    assert "n1 restarted: counted from the restart" in checked.words()
    assert "n2 could not be read at the end: not counted" in checked.words()


@pytest.mark.parametrize(
    ("events", "said"),
    [
        ([], None),
        ([counters(START, {"n1": {"Txn": 1}})], "the servers' counters were not read at the end"),
        ([{"event": COUNTERS, "phase": END, "error": "no member's /metrics could be read"}],
         "no member's /metrics could be read"),
    ],
)  # fmt: skip
def test_counters_missing_or_unread_are_said(events: list[dict[str, Any]], said: Any) -> None:
    assert cross_check(events, {"Txn": 1}) == said


def test_a_counter_none_of_our_methods_covers_is_not_compared() -> None:
    r = [counters(END, {"n1": {"Txn": 500, "Watch": 3}})]
    checked = cross_check(r, {"Watch": 3})
    assert isinstance(checked, CrossCheck)
    assert [t.counter for t in checked.tallies] == ["Watch"] and not checked.far


def test_etcd_metrics_page_started_calls_by_method() -> None:
    """The lines of etcd 3.5.16's /metrics (read from our image's member)."""
    page = "\n".join(
        [
            "# TYPE grpc_server_started_total counter",
            'grpc_server_started_total{grpc_method="Txn",grpc_service="etcdserverpb.KV",'
            'grpc_type="unary"} 217',
            'grpc_server_started_total{grpc_method="Watch",grpc_service="etcdserverpb.Watch",'
            'grpc_type="bidi_stream"} 136',
            'grpc_server_handled_total{grpc_code="OK",grpc_method="Txn",'
            'grpc_service="etcdserverpb.KV",grpc_type="unary"} 999',
        ]
    )
    assert started(page, ("Txn", "Watch", "Range")) == {"Range": 0, "Txn": 217, "Watch": 136}


def test_a_sim_herd_run_cross_checks_its_counts_from_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``harness run --workload herd`` on sim: the service counts the requests it served
    per op, the waiters theirs, and the herd's verdict holds them together."""
    code, out, _ = run(
        capsys, "run", "--workload", "herd", "--nemesis", "none", "--time-limit", "3",
        "--concurrency", "3", "--work-time", "0.05", "-o", str(tmp_path),
    )  # fmt: skip
    assert code == 0, out
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    counted = results["checkers"][herd.NAME]["server_counters"]
    assert counted["service"] == "sim" and counted["counters"], counted
    for tally in counted["counters"].values():
        assert tally["ours"] > 0 and abs(tally["servers"] - tally["ours"]) <= 2, counted
    assert "Cross-checked with sim's own counters" in out


MNTR = "\n".join(
    [
        "zk_version\t3.9.3-1, built on 2026-03-08 16:19 UTC",
        "zk_packets_received\t812",
        "zk_cnt_node_deleted_watch_count\t40",
        "zk_sum_node_deleted_watch_count\t160",
        "zk_sum_node_changed_watch_count\t1",
        "zk_avg_node_deleted_watch_count\t4.0",
    ]
)


def test_zookeeper_counts_the_watches_it_fired_in_mntr() -> None:
    """ZooKeeper 3.9's mntr (read from our image's server) counts no requests per
    operation, but the watchers each kind of change triggered: summed, the notifications
    it sent, held against our waiters' notifications."""
    from clusters.zookeeper.mntr import watches_fired

    assert watches_fired(MNTR) == 161
    assert watches_fired("zk_version\t3.9.3") is None
    events = [
        {"event": COUNTERS, "phase": START, "nodes": {"n1": {"watches fired": 10}}},
        {"event": COUNTERS, "phase": END, "service": "ZooKeeper", "source": "mntr",
         "nodes": {"n1": {"watches fired": 171}}, "covers": {"watches fired": ["notifications"]}},
    ]  # fmt: skip
    checked = cross_check(events, {"notifications": 150, "exists": 400})
    assert isinstance(checked, CrossCheck)
    assert [(t.counter, t.ours, t.servers) for t in checked.tallies] == [
        ("watches fired", 150, 161)
    ]
    assert not checked.far
    assert "watches fired 161 against our 150 notifications" in checked.words()
