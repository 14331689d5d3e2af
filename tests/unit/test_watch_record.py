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
from types import SimpleNamespace
from typing import Any

import pytest
from test_cli import run
from test_watch_checker import base, change

from checkers import watch_delivery
from checkers.watch_record import ABSENT, CLIENT, COMPACTED, OVERWRITTEN, RECORD
from clusters.consul.watch import ConsulWatch
from clusters.etcd.watch import EtcdWatch
from clusters.zookeeper.watch import ZkWatch
from core.client import WorkerContext
from core.run_clock import RunClock
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


# --- services that keep each key's last change only (ZooKeeper's stat, Consul's index) ---


def last_change_event(service: str, changes: list[list[Any]], **more: Any) -> dict[str, Any]:
    return {"time": 9 * 10**9, "process": 0, "event": RECORD, "service": service,
            "source": "each node's data and stat (mzxid, version), after a sync",
            "history": False, "first_revision": 0, "compact_revision": None, "revision": 4,
            "complete": True, "changes": changes, **more}  # fmt: skip


def settled_stale(revisions: bool = True) -> Any:
    """Writes 1..4 of key 0 (mzxids 1..4, or none given, as Consul's writes); a watcher
    that re-reads settles on 3 and never sees 4."""
    r = base("latest", rereads=True)
    for i in range(1, 5):
        r.write(i, "0", i, i if revisions else None)
    r.collect(3.1, 0, [change("0", 3, 3)])
    r.collect(8, 0, [])
    return r


@pytest.mark.parametrize("revisions", [True, False])
def test_a_last_change_the_service_holds_was_lost_in_our_client(revisions: bool) -> None:
    """ZooKeeper (writes give the mzxid) and Consul (writes give no index): the key's last
    change in the service's record is the one the re-reading watcher never settled on."""
    r = settled_stale(revisions)
    r.events.append(last_change_event("ZooKeeper", [["0", 4, 4]], versions={"0": 4}))
    res = watch_delivery.check_record(r.record())
    assert res.valid is False
    (finding,) = res.details["watchers"][0]["findings"]
    assert (finding["kind"], finding["value"], finding["cause"]) == ("stale-final", 4, CLIENT)
    assert (
        "Checked against ZooKeeper's own record of the keys, read back at the end of the run "
        "(each node's data and stat (mzxid, version), after a sync: each key's last change, "
        "1 key; it keeps no history of values): key 0: 4"
    ) in res.summary
    assert (
        "is the key's last change in ZooKeeper's record: the service had it to serve to a "
        "watcher that re-reads, so it was lost in our watcher client, not by ZooKeeper."
    ) in res.summary
    assert res.details["service_record"]["versions"] == {"0": 4}


def test_a_last_change_the_service_does_not_hold_is_the_services() -> None:
    r = settled_stale()
    r.events.append(last_change_event("Consul", [["0", 3, 3]]))
    res = watch_delivery.check_record(r.record())
    (finding,) = res.details["watchers"][0]["findings"]
    assert finding["cause"] == ABSENT
    assert (
        "key 0: 4 (revision 4): Consul's record holds another value as the key's last "
        "change: the service itself does not have it."
    ) in res.summary


def test_another_last_value_without_revisions_does_not_blame_the_service() -> None:
    """Consul's writes carry no index: the record's other value (3, where the missed
    change is 4) may be a later write's, so the record cannot tell; it was called the
    service's ("does not have it") on the value alone."""
    r = settled_stale(revisions=False)
    r.events.append(last_change_event("Consul", [["0", 17, 3]]))
    res = watch_delivery.check_record(r.record())
    (finding,) = res.details["watchers"][0]["findings"]
    assert finding["cause"] == OVERWRITTEN
    assert "the service itself does not have it" not in res.summary
    assert "Consul keeps only its last change: its record cannot tell" in res.summary


def test_a_repeat_of_an_overwritten_change_cannot_be_told() -> None:
    """A change delivered twice that the key's later change overwrote: a record of the
    last change only cannot tell who repeated it."""
    r = base("latest", rereads=True)
    for i in range(1, 4):
        r.write(i, "0", i, i)
    r.collect(2.1, 0, [change("0", 2, 2), change("0", 2, 2)])
    r.collect(3.1, 0, [change("0", 3, 3)])
    r.collect(8, 0, [])
    r.events.append(last_change_event("Consul", [["0", 3, 3]]))
    res = watch_delivery.check_record(r.record())
    (finding,) = res.details["watchers"][0]["findings"]
    assert (finding["kind"], finding["cause"]) == ("duplicate", OVERWRITTEN)
    assert "the key changed again after it, and Consul keeps only its last change" in res.summary


class _Zk:
    """A kazoo client holding node /p/watch/0 at mzxid 9, version 4 (key 1 never made)."""

    def __init__(self) -> None:
        self.synced: list[str] = []

    def sync(self, path: str) -> None:
        self.synced.append(path)

    def get(self, path: str) -> Any:
        from kazoo.exceptions import NoNodeError

        if not path.endswith("/0"):
            raise NoNodeError()
        return b"4", SimpleNamespace(mzxid=9, version=4)


def test_zookeeper_reads_each_nodes_stat_after_a_sync() -> None:
    backend: Any = ZkWatch.__new__(ZkWatch)
    zk = _Zk()
    backend.observer = lambda: zk
    backend.path = lambda *parts: "/p/" + "/".join(parts)
    got = backend.service_record(["0", "1"])
    assert zk.synced == ["/p/watch"]
    assert (got["history"], got["changes"], got["versions"]) == (False, [["0", 9, 4]], {"0": 4})
    assert got["revision"] == 9 and got["complete"] is True


def test_consul_reads_each_entrys_modify_index() -> None:
    backend: Any = ConsulWatch.__new__(ConsulWatch)
    backend._query = lambda index: ({"0": (4, 17), "9": (1, 3)}, 21)
    got = backend.service_record(["0", "1"])
    assert (got["history"], got["changes"], got["revision"]) == (False, [["0", 17, 4]], 21)
