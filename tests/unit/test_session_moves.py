"""Issue 30, item 4: a moved session is named.

A ZooKeeper registry instance kept its registration through a 17 s partition of its
server because its session reconnected to another server; the discovery verdict said "no
instance died long enough to be removed" and not a word of the move. The instance now
records each reconnection with the server it is to and the one it was to
(``session-state`` ``CONNECTED``, ``server``, ``was``), and the discovery checker names
the move, with the fault it happened in.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from kazoo.client import KazooState
from test_cli import run
from test_discovery import FAULTS, Run

from checkers import discovery
from checkers.record import RunRecord
from clusters.zookeeper import session as zk_session
from clusters.zookeeper.discovery import ZkDiscovery
from core.client import WorkerContext
from core.faults import PARTITION
from core.history import History
from core.run_clock import RunClock
from core.store import write_json
from workloads.discovery import InstanceClient

S = 1_000_000_000
NAMES = {"10.0.0.1": "n1", "10.0.0.2": "n2"}


class _Peer:
    def __init__(self, ip: str) -> None:
        self.ip = ip

    def getpeername(self) -> tuple[str, int]:
        return (self.ip, 2181)


class _Kazoo:
    """What ``ZkSession`` uses of a ``KazooClient``, connected to 10.0.0.1 at first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._session_id = 0x77
        self._session_timeout = 3000
        self._connection = SimpleNamespace(_socket=_Peer("10.0.0.1"))
        self.listeners: list[Any] = []

    def start(self, timeout: float) -> None:
        pass

    def add_listener(self, listener: Any) -> None:
        self.listeners.append(listener)

    def create(self, *args: Any, **kwargs: Any) -> None:
        pass

    def stop(self) -> None:
        pass

    def close(self) -> None:
        pass


def test_an_instance_records_its_session_moving_to_another_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The instance's events when its server is lost and kazoo reconnects to another."""
    clients: list[_Kazoo] = []

    def new_client(*args: Any) -> _Kazoo:
        clients.append(_Kazoo())
        return clients[-1]

    monkeypatch.setattr(zk_session, "new_client", new_client)
    ctx = WorkerContext(process=0, clock=RunClock(), events_path=tmp_path / "events.jsonl")

    def connect() -> ZkDiscovery:
        return ZkDiscovery(["10.0.0.1:2181", "10.0.0.2:2181"], names=NAMES)

    instance = InstanceClient(ctx, connect, "n1", ttl=3.0, keepalive=1.0)
    instance.backend.register("i0", 3.0)
    (zk,) = clients
    (listener,) = zk.listeners
    listener(KazooState.SUSPENDED)
    zk._connection._socket = _Peer("10.0.0.2")  # kazoo reconnected to the next server
    listener(KazooState.CONNECTED)
    instance.events.close()
    lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    states = [(e["state"], e.get("server"), e.get("was"), e["lock"]) for e in lines]
    assert states == [("SUSPENDED", None, None, "i0"), ("CONNECTED", "n2", "n1", "i0")]


def moved_run() -> tuple[History, list[dict[str, Any]]]:
    """i0 registered at 1 s; a partition cuts its server n1 off from 5 s to 22 s; its
    connection is lost at 5.5 s and its session reconnects to n2 at 6.2 s; it stays
    listed throughout."""
    r = Run()
    r.register(1.0, 0)
    r.heartbeats(0, 1.5, 25.0)
    r.fault(PARTITION.name, 5.0, 22.0, {"grudge": {"n1": ["n2", "n3"]}})
    r.lists(2, 1.05, 25.0, lambda t: {"i0"}, node="n2")
    events = [
        {"time": int(5.5 * S), "process": 0, "event": "session-state", "lease": 0x77,
         "lock": "i0", "state": "SUSPENDED"},
        {"time": int(6.2 * S), "process": 0, "event": "session-state", "lease": 0x77,
         "lock": "i0", "state": "CONNECTED", "server": "n2", "was": "n1"},
    ]  # fmt: skip
    return History.from_events(sorted(r.ops, key=lambda o: o["time"])), events


def test_the_verdict_names_the_moved_session_and_the_fault() -> None:
    history, events = moved_run()
    res = discovery.check_record(RunRecord(history, [], events, {"faults": FAULTS}))
    assert res.valid is True, res.summary
    assert "No instance died long enough to be removed." in res.summary
    assert (
        "1 session move (i0): i0's session moved from n1 to n2 at 6.200 s (its connection "
        "lost at 5.500 s, during a network partition" in res.summary
    )
    assert res.summary.endswith("the session, and its registration, lived on.")
    (move,) = res.details["session_moves"]
    assert (move["member"], move["from"], move["to"]) == ("i0", "n1", "n2")


def test_a_reconnection_to_the_same_server_is_no_move() -> None:
    history, events = moved_run()
    events[1]["server"] = "n1"
    res = discovery.check_record(RunRecord(history, [], events, {"faults": FAULTS}))
    assert res.details["session_moves"] == [] and "session move" not in res.summary


def test_harness_check_names_the_move(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """From the command line: a recorded registry run's check."""
    history, events = moved_run()
    (tmp_path / "history.jsonl").write_text("".join(op.to_json() + "\n" for op in history))
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    options = {"target": "zookeeper", "workload": "registry", "nemesis": ["partition"]}
    write_json(
        tmp_path / "test.json", {"name": "zk-registry", "options": options, "faults": FAULTS}
    )
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 0, out
    results = json.loads((tmp_path / "results.json").read_text())
    summary = results["checkers"][discovery.NAME]["summary"]
    assert "i0's session moved from n1 to n2 at 6.200 s" in summary


def test_the_zookeeper_registry_clients_name_the_servers_by_node() -> None:
    """The target's registry builder gives the sessions the cluster's node names (a
    picklable factory: the workers get it)."""
    import pickle

    from clusters.target_registry import TARGETS
    from core.options import RunOptions

    cluster: Any = SimpleNamespace(
        endpoints=lambda: {"n1": "10.0.0.1:2181", "n2": "10.0.0.2:2181"}, run_id="r"
    )
    opts = RunOptions.from_mapping({"target": "zookeeper", "workload": "registry"})
    factory = pickle.loads(pickle.dumps(TARGETS["zookeeper"].client_factory(opts, cluster, None)))
    connect, node = factory.connector.for_slot(1)
    session = connect()
    assert node == "n2" and session._names == NAMES and session.addresses[0] == "10.0.0.2:2181"
