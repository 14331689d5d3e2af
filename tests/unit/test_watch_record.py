"""Issue 30: a watch-delivery violation is checked against the service's own record.

Our etcd watcher's resume once delivered 21 changes twice, and the verdict could only say
"not blamed on the service: its revisions are not read back". The client of the first
thread now reads back the service's record of the keys when it closes (etcd: its history,
with revisions and the compaction revision; the sim: its store's changes), recorded as a
``service-record`` event, and the delivery checker looks each finding up in it: a change
the service holds once was the service's to deliver, so a miss or a repeat is our client's.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from test_cli import run
from test_watch_checker import base, change

from checkers import watch_delivery
from checkers.watch_record import ABSENT, CLIENT, COMPACTED, RECORD
from clusters.etcd.watch import EtcdWatch
from core.client import WorkerContext
from core.clock import RunClock
from core.store import write_json
from workloads.watch import WatchClient


def record_event(changes: list[list[Any]], first: int = 1, **more: Any) -> dict[str, Any]:
    return {
        "time": 9 * 10**9,
        "process": 0,
        "event": RECORD,
        "service": "etcd",
        "source": "its MVCC history, replayed by a watch",
        "history": True,
        "first_revision": first,
        "compact_revision": first if first > 1 else None,
        "revision": 7,
        "complete": True,
        "changes": changes,
        **more,
    }


def resumed_twice() -> Any:
    """Writes 1..4 of key 0 at revisions 1..4; the watcher misses 2 and, after a resume,
    gets 3 again."""
    r = base()
    for i in range(1, 5):
        r.write(i, "0", i, i)
    r.collect(1.1, 0, [change("0", 1, 1)])
    r.collect(3.1, 0, [change("0", 3, 3), {"kind": "resumed", "revision": 3}, change("0", 3, 3)])
    r.collect(4.1, 0, [change("0", 4, 4)])
    r.collect(8, 0, [])
    return r


HISTORY = [["0", i, i] for i in range(1, 5)]


def test_without_a_record_nothing_is_blamed() -> None:
    res = watch_delivery.check_record(resumed_twice().record())
    assert res.valid is False and "Not blamed on the service" in res.summary
    assert res.details["service_record"] is None


def test_changes_the_service_holds_once_were_lost_in_our_client() -> None:
    r = resumed_twice()
    r.events.append(record_event(HISTORY))
    res = watch_delivery.check_record(r.record())
    assert res.valid is False
    assert (
        "Checked against etcd's own record of the keys, read back at the end of the run (its "
        "MVCC history, replayed by a watch: 4 changes, revisions 1 to 7): 2 of the changes "
        "(key 0: 3 (revision 3), ...) are in etcd's history once, at their revisions, and "
        "etcd's watch delivers every change it holds after the revision a watch starts "
        "from: the service had them to deliver, so they were lost or repeated in our "
        "watcher client (its resume or reconnection), not by etcd."
    ) in res.summary
    assert "Not blamed on the service" not in res.summary
    found = {(f["kind"], f["revision"]): f["cause"] for f in res.details["watchers"][0]["findings"]}
    assert found == {("duplicate", 3): CLIENT, ("missed", 2): CLIENT}
    assert res.details["service_record"]["changes"] == 4


def test_a_change_the_service_does_not_hold_or_compacted_is_said_so() -> None:
    r = resumed_twice()
    r.events.append(record_event([["0", 3, 3], ["0", 4, 4]], first=3))  # compacted at 3
    res = watch_delivery.check_record(r.record())
    found = {(f["kind"], f["revision"]): f["cause"] for f in res.details["watchers"][0]["findings"]}
    assert found == {("duplicate", 3): CLIENT, ("missed", 2): COMPACTED}
    assert "came before etcd's compaction (its history starts at revision 3)" in res.summary
    r = resumed_twice()
    r.events.append(record_event([["0", 1, 1], ["0", 3, 3], ["0", 4, 4]]))
    res = watch_delivery.check_record(r.record())
    found = {(f["kind"], f["revision"]): f["cause"] for f in res.details["watchers"][0]["findings"]}
    assert found[("missed", 2)] == ABSENT
    assert "key 0: 2 (revision 2): not in etcd's history" in res.summary


def test_a_record_that_could_not_be_read_is_said() -> None:
    r = resumed_twice()
    r.events.append({"time": 1, "process": 0, "event": RECORD, "error": "OpUnknown: timed out"})
    res = watch_delivery.check_record(r.record())
    assert "could not be read back at the end of the run (OpUnknown: timed out)" in res.summary


def test_harness_check_names_our_client(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """From the command line: a recorded etcd watch run's check."""
    r = resumed_twice()
    rec = r.record()
    ops = [{**json.loads(op.to_json()), "index": i} for i, op in enumerate(rec.history)]
    (tmp_path / "history.jsonl").write_text("".join(json.dumps(op) + "\n" for op in ops))
    events = [record_event(HISTORY)]
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    options = {"target": "etcd", "workload": "watch", "nemesis": ["none"]}
    write_json(tmp_path / "test.json", {"name": "etcd-watch", "options": options})
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 1
    assert "so they were lost or repeated in our watcher client" in " ".join(out.split())


class _Backend:
    """A watch backend whose service keeps a record (``KeepsHistory``)."""

    closed = False

    def service_record(self, keys: list[str]) -> dict[str, Any]:
        return {"service": "etcd", "history": True, "changes": [[k, 1, None] for k in keys]}

    def follow(self, keys: Any, emit: Any, stop: threading.Event) -> None:
        stop.wait()

    def close(self) -> None:
        self.closed = True


def test_the_first_threads_client_records_the_service_record_as_it_closes(
    tmp_path: Path,
) -> None:
    events = tmp_path / "events.jsonl"
    for thread in (0, 1):
        ctx = WorkerContext(process=thread, clock=RunClock(), events_path=events, thread=thread)
        WatchClient(ctx, _Backend, keys=2).close()
    (line,) = [json.loads(x) for x in events.read_text().splitlines()]
    assert line["event"] == RECORD and line["process"] == 0
    assert line["changes"] == [["0", 1, None], ["1", 1, None]]


class _Gateway(EtcdWatch):
    """An ``EtcdWatch`` answering from a fake etcd whose history was compacted at 3."""

    def __init__(self) -> None:
        self.prefix = "p"
        self.watches: list[int] = []

    def key(self, *parts: str) -> str:
        return "/".join((self.prefix, *parts))

    def call(self, path: str, body: dict[str, Any], what: str, timeout: Any = None) -> Any:
        from clusters.etcd.gateway import b64

        kv = {"key": b64("p/watch/0"), "mod_revision": "5", "value": b64("5")}
        return {"header": {"revision": "6"}, "kvs": [kv]}

    def stream(self, path: str, body: dict[str, Any], what: str, timeout: float) -> Any:
        from clusters.etcd.gateway import b64

        start = body["create_request"]["start_revision"]
        self.watches.append(start)
        yield {"created": True}
        if start < 3:
            yield {"compact_revision": "3", "canceled": True}
            return
        for rev in range(3, 6):
            kv = {"key": b64("p/watch/0"), "mod_revision": str(rev), "value": b64(str(rev))}
            yield {"events": [{"kv": kv}]}


def test_etcd_reads_its_history_from_its_compaction_revision() -> None:
    g = _Gateway()
    got = g.service_record(["0"])
    assert g.watches == [1, 3]
    assert (got["first_revision"], got["compact_revision"], got["revision"]) == (3, 3, 6)
    assert got["complete"] is True and got["changes"] == [["0", 3, 3], ["0", 4, 4], ["0", 5, 5]]


@pytest.mark.slow
def test_a_sim_watch_run_records_the_service_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """From the command line: a sim watch run reads back its store's changes; its
    delivery verdict reports the record it had."""
    args = ["--workload", "watch", "--time-limit", "3", "--nemesis", "none", "-o", str(tmp_path)]
    code, out, _ = run(capsys, "run", *args)
    assert code == 0, out
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    kept = results["checkers"]["watch-delivery"]["service_record"]
    assert kept["service"] == "sim" and kept["complete"] is True and kept["changes"] > 0
