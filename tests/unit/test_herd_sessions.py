"""Issue 30, item 4: the herd counts separate notifications from session events.

On ZooKeeper, a server killed under its waiters made ``kazoo`` fire every watch of their
dropped connections (a ``WatchedEvent`` of type ``NONE``, ``KazooClient._session_callback``),
and the herd checker counted each as a notification of the lock: a server kill looked like
a herd. The backend now records them apart (``herd-session-event``) and the checker and the
run's report count them apart, with what they were.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from kazoo.protocol.states import EventType, KeeperState, WatchedEvent
from test_cli import run
from test_herd_workload import cycle, record
from test_mutex_records import S

from checkers import herd
from checkers.herd import NOTIFIED, SESSION_EVENT
from clusters.zookeeper.herd import ZkHerd
from core.client import WorkerContext
from core.run_clock import RunClock
from core.store import write_json
from workloads.common.lease import EventLog
from workloads.herd import Tally


class _FiringZk:
    """A kazoo client whose ``exists`` sets the watch and fires it at once with ``event``."""

    def __init__(self, event: WatchedEvent) -> None:
        self.event = event

    def exists(self, path: str, watch: Any) -> object:
        watch(self.event)
        return SimpleNamespace(czxid=1)


@pytest.mark.parametrize(
    ("event", "kind"),
    [
        (WatchedEvent(EventType.NONE, KeeperState.CONNECTING, None), SESSION_EVENT),
        (WatchedEvent(EventType.DELETED, KeeperState.CONNECTED, "/h/lock"), NOTIFIED),
    ],
)
def test_a_watch_fired_by_the_connection_is_a_session_event(
    event: WatchedEvent, kind: str, tmp_path: Path
) -> None:
    """What the ZooKeeper waiter records when its watch fires: the node's deletion is a
    notification; the connection dropping (type NONE) is a session event."""
    ctx = WorkerContext(process=2, clock=RunClock(), events_path=tmp_path / "events.jsonl")
    log = EventLog(ctx)
    tally = Tally(log, "lock-0", "naive")
    backend: Any = ZkHerd.__new__(ZkHerd)
    backend.zk = _FiringZk(event)
    backend._wait_gone("/h/lock", float("inf"), 5.0, tally)
    tally.close(False)
    log.close()
    lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert [e["event"] for e in lines] == [kind, herd.ACQUIRE]
    sums = lines[-1]
    assert (sums["notifications"], sums["session_events"]) == (
        (0, 1) if kind == SESSION_EVENT else (1, 0)
    )
    if kind == SESSION_EVENT:
        assert lines[0]["about"] == "connection CONNECTING fired the watch of /h/lock"


def killed_server_record() -> Any:
    """Two handoffs, 4 notifications of the lock, and 3 watches fired when the server of
    waiters 1 and 2 was killed."""
    r = record(3, {0: 1, 1: 1, 2: 2}, cycle(0, 1.0, 0.5), cycle(1, 1.6, 0.5), cycle(2, 2.4, 0.5))
    r.events.extend(
        {"time": int(1.8 * S), "process": p, "event": SESSION_EVENT, "lock": "lock-0"}
        for p in (1, 2, 2)
    )
    return r


def test_session_events_are_not_notifications_per_handoff() -> None:
    result = herd.check_record(killed_server_record())
    d = result.details
    assert (d["notifications"], d["notifications_per_handoff"]) == (4, 2.0)
    assert d["session_events"] == 3
    assert d["session_events_by_process"] == {"1": 1, "2": 2}
    assert (
        "apart from the notifications, 3 watches fired by the waiters' own connections "
        "(a server lost, a session moved or expired: no handoff's doing, 2 waiters)"
    ) in result.summary


def test_harness_check_and_the_report_say_the_session_events_apart(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """From the command line: a recorded herd run's check, then its report, whose herd
    section the workload declares (``Workload.sections``) and the report loads through the
    registry."""
    r = killed_server_record()
    (tmp_path / "history.jsonl").write_text("".join(op.to_json() + "\n" for op in r.history))
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in r.events))
    options = {"target": "zookeeper", "workload": "herd", "concurrency": 3, "recipe": "naive"}
    write_json(tmp_path / "test.json", {"name": "zookeeper-herd-kill", "options": options})
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code in (0, 2), out  # the herd is a measure; the run's other checkers decide
    results = json.loads((tmp_path / "results.json").read_text())
    measured = results["checkers"][herd.NAME]
    assert (measured["notifications_per_handoff"], measured["session_events"]) == (2.0, 3)
    code, out, _ = run(capsys, "report", str(tmp_path))
    assert code in (0, 2), out
    html = (tmp_path / "report.html").read_text()
    assert "Herd: naive recipe, 3 waiters" in html
    assert "session events, apart" in html and "process 2: 2" in html
