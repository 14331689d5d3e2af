"""The watch workload on the Docker targets, through the real ``harness run`` command.

- etcd's revisioned watch, under partitions and kills with a compaction every 0.5 s:
  no change missed, none twice, every compaction that caught a watcher behind handled
  (re-read, re-subscribed; that one happens is not certain, the handling itself is shown
  on the sim's store in tests/unit/test_sim_watch.py), every watcher settled on the last
  writes;
- ZooKeeper's one-shot watches under writes faster than re-registration: trusting the
  event (``--watch-mode payload``) misses changes; re-reading ends on the last writes;
- Consul's blocking queries: changes coalesce, the final values are the last writes.

The time limits leave room for the workers' start-up on a loaded machine (the writes
happen in the time limit, the watchers settle in the recovery time).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_workloads import client_ops, no_leftovers, run

pytestmark = [pytest.mark.docker, pytest.mark.slow]
__all__ = ["no_leftovers"]  # the fixture: no container may outlive a test

WATCH = ["--workload", "watch", "--concurrency", "6", "--watchers", "3", "--keys", "2"]
SHORT = ["--time-limit", "10", "--recovery-time", "3", "--nemesis", "none"]


def watchers(results: dict[str, Any]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = results["checkers"]["watch-delivery"]["watchers"]
    assert found, "no watcher reported"
    return found


def test_etcd_watch_misses_nothing_under_partitions_and_kills_and_handles_compaction(
    tmp_path: Path,
) -> None:
    faults = ["--nemesis", "partition,kill", "--nemesis-interval", "2"]
    code, results, _ = run(
        tmp_path, "--target", "etcd", *WATCH, *faults, "--compact-every", "0.5",
        "--time-limit", "14", "--recovery-time", "4",
    )  # fmt: skip
    assert code == 0, results["checkers"]["watch-delivery"]["summary"]
    ws = watchers(results)
    assert all(w["missed"] == 0 and w["duplicates"] == 0 and w["out_of_order"] == 0 for w in ws)
    assert all(w["settled"] and not w["stale_final"] for w in ws)
    # A compaction catches a watcher only when it is behind as the compaction comes (a
    # reconnection after a kill, in 1 of 3 runs here): every one that did was handled.
    assert all(w["handled"] == w["compactions"] for w in ws)
    assert results["checkers"]["faults"]["valid"] is True


def test_etcd_keeps_a_record_of_the_keys_to_check_deliveries_against(tmp_path: Path) -> None:
    """Issue 30: at the end of the run the first client reads back etcd's own history of
    the keys (from its last compaction on); it holds every write acknowledged since, each
    at the revision the writer was given."""
    code, results, run_dir = run(
        tmp_path, "--target", "etcd", *WATCH, *SHORT, "--compact-every", "2"
    )
    delivery = results["checkers"]["watch-delivery"]
    assert code == 0, delivery["summary"]
    kept = delivery["service_record"]
    assert kept["service"] == "etcd" and kept["complete"] is True, kept
    assert kept["compact_revision"] == kept["first_revision"] > 1, kept
    (event,) = [
        json.loads(line)
        for line in (run_dir / "events.jsonl").read_text().splitlines()
        if '"service-record"' in line
    ]
    held = {(key, revision): value for key, revision, value in event["changes"]}
    acknowledged = {
        (str(op["key"]), op["value"]["revision"]): op["value"]["value"]
        for op in client_ops(run_dir)
        if op["f"] == "write" and op["type"] == "ok"
        and op["value"]["revision"] >= kept["first_revision"]
    }  # fmt: skip
    assert acknowledged and held == acknowledged


def test_zookeeper_payload_mode_misses_changes(tmp_path: Path) -> None:
    code, results, _ = run(
        tmp_path, "--target", "zookeeper", *WATCH, *SHORT, "--watch-mode", "payload"
    )
    assert code == 0, results["checkers"]["watch-delivery"]["summary"]
    ws = watchers(results)
    assert all(not w["rereads"] and w["delivery"] == "latest" for w in ws)
    assert sum(w["missed"] for w in ws) > 0


def holds_each_keys_last_write(results: dict[str, Any], run_dir: Path, service: str) -> None:
    """Issue 30: the service's own record of each key's last change (ZooKeeper's stat,
    Consul's ModifyIndex), read back at the end, holds a value written to the key, at a
    revision no acknowledged write passed (where the writes were given one)."""
    kept = results["checkers"]["watch-delivery"]["service_record"]
    assert kept["service"] == service and kept["history"] is False, kept
    (event,) = [
        json.loads(line)
        for line in (run_dir / "events.jsonl").read_text().splitlines()
        if '"service-record"' in line
    ]
    written: dict[str, set[Any]] = {}
    highest: dict[str, int] = {}
    for op in client_ops(run_dir):
        if op["f"] == "write" and op["type"] == "invoke":
            written.setdefault(str(op["key"]), set()).add(op["value"])
        if op["f"] == "write" and op["type"] == "ok" and op["value"]["revision"] is not None:
            key = str(op["key"])
            highest[key] = max(highest.get(key, 0), op["value"]["revision"])
    assert written and {key for key, _, _ in event["changes"]} == set(written), event
    for key, revision, value in event["changes"]:
        assert value in written[key], (key, value)
        assert revision >= highest.get(key, 0), (key, revision, highest)


def test_zookeeper_reread_mode_ends_on_the_last_write(tmp_path: Path) -> None:
    code, results, run_dir = run(tmp_path, "--target", "zookeeper", *WATCH, *SHORT)
    assert code == 0, results["checkers"]["watch-delivery"]["summary"]
    ws = watchers(results)
    assert all(w["rereads"] and w["settled"] and not w["stale_final"] for w in ws)
    holds_each_keys_last_write(results, run_dir, "ZooKeeper")


def test_consul_blocking_queries_end_on_the_last_write(tmp_path: Path) -> None:
    code, results, run_dir = run(tmp_path, "--target", "consul", *WATCH, *SHORT)
    assert code == 0, results["checkers"]["watch-delivery"]["summary"]
    ws = watchers(results)
    assert all(w["settled"] and not w["stale_final"] and w["duplicates"] == 0 for w in ws)
    assert sum(w["delivered"] for w in ws) > 0
    holds_each_keys_last_write(results, run_dir, "Consul")
