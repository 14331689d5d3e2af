"""Issue 30, item 6: a stale read under a read mode its service documents as not
linearizable is named with that rule as its cause, cited, with the servers' roles and
zxids the clients recorded; evidence that contradicts the rule is never excused.

The history is the shape the ZooKeeper runs showed (``harness run --target zookeeper
--workload cas-register --read-mode sync``, and ``/tmp/wt-zk/probe.py`` in the branch's
report): process 0, a client of the follower n2, writes 2 (zxid 0x100000005, acknowledged
at 3 s); process 1, a client of the leader n1, syncs and reads at 4 s, and the leader
answers at zxid 0x100000004 with the value before the write.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli import run

from checkers.anomalies import KEY
from checkers.linearizability import check_record
from checkers.record import RunRecord
from checkers.served import ServedIndex
from clusters.target_registry import TARGETS
from core.history import History
from core.options import RunOptions
from core.store import write_json

S = 1_000_000_000
WROTE, BEFORE = 0x100000005, 0x100000004


def options(**kw: Any) -> RunOptions:
    return RunOptions.from_mapping({"target": "zookeeper", "workload": "cas-register", **kw})


def history() -> History:
    events = [
        (0, 0, "invoke", "write", 1, "n2"),
        (1, 0, "ok", "write", 1, "n2"),
        (2, 0, "invoke", "write", 2, "n2"),
        (3, 0, "ok", "write", 2, "n2"),
        (4, 1, "invoke", "read", None, "n1"),
        (5, 1, "ok", "read", 1, "n1"),
    ]
    return History.from_events(
        {"time": t * S, "process": p, "type": ty, "f": f, "value": v, "key": 0, "node": n}
        for t, p, ty, f, v, n in events
    )


def served(t: float, process: int, server: str, role: str, applied: int, version: int) -> Any:
    return {
        "time": int(t * S),
        "process": process,
        "event": "served",
        "server": server,
        "role": role,
        "position": "zxid",
        "hex": True,
        "applied": applied,
        "version": version,
    }


def answers(read_applied: int = BEFORE) -> list[dict[str, Any]]:
    return [
        served(0.5, 0, "n2", "follower", BEFORE, BEFORE),
        served(2.5, 0, "n2", "follower", WROTE, WROTE),
        served(4.5, 1, "n1", "leader", read_applied, BEFORE),
    ]


def recorded(read_mode: str | None = "sync", **kw: Any) -> dict[str, Any]:
    opts = options(read_mode=read_mode) if read_mode else options()
    rules = [r.to_dict() for r in TARGETS["zookeeper"].rules_for(opts)]
    return {"name": "constructed", "options": opts.to_dict(), "service_rules": rules, **kw}


def named(events: list[dict[str, Any]], test_json: dict[str, Any]) -> dict[str, Any]:
    result = check_record(RunRecord(history(), [], events, test_json))
    assert result.valid is False
    a: dict[str, Any] = result.details[KEY][0]
    assert result.summary == a["sentence"] and a["kind"] == "stale-read"
    return a


def test_a_stale_sync_read_through_the_leader_is_zookeepers_documented_rule() -> None:
    a = named(answers(), recorded())
    assert a["sentence"] == (
        "stale read (key 0): process 1 read 1 at t=4.000 s, but process 0's write 2 had taken "
        "effect before the read began (acknowledged at t=3.000 s). Cause: zookeeper's "
        "documented rule, a sync before a read is not a quorum operation: n1, the leader, "
        "answered the read at zxid 0x100000004, before it had applied the write (zxid "
        "0x100000005) that n2, the follower, had acknowledged."
    )
    c = a["classification"]
    assert (c["cause"], c["expected"]) == ("documented-rule", True)
    assert c["fix"].endswith(
        "(https://zookeeper.apache.org/doc/r3.9.3/zookeeperInternals.html#sc_consistency)"
    )


def test_a_plain_read_is_named_by_the_plain_rule() -> None:
    a = named(answers(), recorded(read_mode=None))
    assert (
        "Cause: zookeeper's documented rule, a read is answered by one server from its own state"
        in a["sentence"]
    )


def test_a_server_that_had_applied_the_write_is_not_excused() -> None:
    """The leader answered at the write's zxid and still returned the value before it:
    ZooKeeper's rule does not allow that (nor does it fit a harness that recorded what
    happened), so the cause is unexplained, not the rule."""
    a = named(answers(read_applied=WROTE), recorded())
    c = a["classification"]
    assert (c["cause"], c["expected"]) == ("unexplained", False)
    assert (
        "having applied the write (zxid 0x100000005), yet returned the value of zxid 0x100000004"
        in a["sentence"]
    )
    assert "which the rule does not allow" in a["sentence"]


def test_without_the_servers_answers_the_rule_is_named_unconfirmed() -> None:
    a = named([], recorded())
    assert a["classification"]["cause"] == "documented-rule"
    assert a["sentence"].endswith("the run recorded no answer of the read's server to confirm it.")


def test_a_run_without_such_a_rule_keeps_its_story() -> None:
    """etcd's linearizable reads, or a run recorded before the rules: no cause is named."""
    a = named(answers(), recorded(service_rules=[]))
    assert "Cause" not in a["sentence"] and "classification" not in a
    assert a["sentence"].endswith("the initial value.") or "was set by" in a["sentence"]


@pytest.mark.parametrize(
    ("kw", "settings"),
    [
        ({"read_mode": "sync"}, ["a sync before a read"]),
        ({"read_mode": "plain"}, ["a read"]),
        ({}, ["a read"]),
        ({"workload": "lock"}, []),
    ],
)
def test_the_rules_said_with_a_run_are_the_ones_about_it(
    kw: dict[str, Any], settings: list[str]
) -> None:
    rules = TARGETS["zookeeper"].rules_for(options(**kw))
    assert [r.setting for r in rules] == settings
    assert all(r.explains == "stale-read" and r.source.startswith("https://") for r in rules)


def test_an_operation_finds_the_answer_recorded_while_it_was_open() -> None:
    index = ServedIndex(answers())
    assert index.lookup(1, 4 * S, 5 * S).server == "n1"  # type: ignore[union-attr]
    assert index.lookup(1, 4 * S, 4 * S + 1) is None  # its answer came after: not its
    assert index.lookup(0, 2 * S, 3 * S).version == WROTE  # type: ignore[union-attr]
    assert index.lookup(1, 5 * S, None) is None


def test_harness_check_names_the_cause(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """From the command line: a run directory's check says the rule and its evidence."""
    (tmp_path / "history.jsonl").write_text("".join(op.to_json() + "\n" for op in history()))
    (tmp_path / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in answers()))
    write_json(tmp_path / "test.json", recorded())
    code, out, _ = run(capsys, "check", str(tmp_path))
    assert code == 1
    assert (
        "Cause: zookeeper's documented rule, a sync before a read is not a quorum operation: n1, "
        "the leader, answered the read at zxid 0x100000004" in out
    )
    results = json.loads((tmp_path / "results.json").read_text())
    lin = results["checkers"]["linearizability"]
    assert lin[KEY][0]["classification"]["cause"] == "documented-rule"


class _Socket:
    def __init__(self, ip: str) -> None:
        self.ip = ip

    def getpeername(self) -> tuple[str, int]:
        return (self.ip, 2181)


def test_a_zookeeper_session_records_its_server_role_and_zxids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The evidence as ZooKeeper's register records it: the node its connection is to
    (a failover names the new one), the role srvr gives once per connection, the reply's
    zxid and the znode's mzxid."""
    from types import SimpleNamespace

    from clusters.zookeeper import served as zk_served
    from core.client import WorkerContext
    from core.run_clock import RunClock

    asked: list[str] = []
    roles = {"10.0.0.1": "leader", "10.0.0.2": "follower"}

    def mode(ip: str) -> str:
        asked.append(ip)
        return roles[ip]

    monkeypatch.setattr(zk_served, "mode", mode)
    ctx = WorkerContext(process=3, clock=RunClock(), events_path=tmp_path / "events.jsonl")
    rec = zk_served.Served(ctx, zk_served.names_of({"n1": "10.0.0.1:2181", "n2": "10.0.0.2:2181"}))
    zk: Any = SimpleNamespace(_connection=SimpleNamespace(_socket=_Socket("10.0.0.1")))
    zk.last_zxid = BEFORE
    rec.record(zk, BEFORE)
    zk.last_zxid = WROTE
    rec.record(zk, WROTE)
    zk._connection._socket = _Socket("10.0.0.2")  # the session failed over to n2
    rec.record(zk, None)
    rec.close()
    lines = [json.loads(x) for x in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert asked == ["10.0.0.1", "10.0.0.2"]
    assert [(e["server"], e["role"], e["applied"], e["version"]) for e in lines] == [
        ("n1", "leader", BEFORE, BEFORE),
        ("n1", "leader", WROTE, WROTE),
        ("n2", "follower", WROTE, None),
    ]
    assert all(e["event"] == "served" and e["process"] == 3 for e in lines)
    assert rec.server == "n2"
