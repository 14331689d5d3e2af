"""workloads.common.resource: the fencing rule, the write log, and the resource process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.run_clock import RunClock
from core.store import JsonlWriter, read_jsonl
from workloads.common.resource import FencedStore, ResourceClient, ResourceServer
from workloads.common.wire import NotSent, Rejected


def store(fencing: bool, log: JsonlWriter | None = None) -> FencedStore:
    return FencedStore(fencing, RunClock(), log)


def test_fencing_rejects_lower_tokens_and_accepts_equal_ones() -> None:
    s = store(True)
    assert s.write(1, "r", 1, "a")["accepted"]
    assert s.write(2, "r", 2, "b")["accepted"]
    stale = s.write(1, "r", 1, "c")
    assert (stale["accepted"], stale["highest_before"]) == (False, 2)
    assert s.write(2, "r", 2, "d")["accepted"]  # same holder writing again
    assert s.read("r") == {"value": "d", "writer": 2, "highest": 2}
    assert s.write(3, "other", 1, "x")["accepted"]  # tokens are per resource


def test_without_fencing_everything_is_accepted_but_logged_as_it_was() -> None:
    s = store(False)
    s.write(2, "r", 2, "b")
    stale = s.write(1, "r", 1, "c")
    assert stale["accepted"] and stale["highest_before"] == 2
    assert s.read("r") == {"value": "c", "writer": 1, "highest": 2}  # the corruption


def test_tokenless_writes_are_accepted_and_flagged_unfenced() -> None:
    s = store(True)
    s.write(1, "r", 5, "a")
    w = s.write(2, "r", None, "b")
    assert w["accepted"] and w["unfenced"] and s.read("r")["highest"] == 5


def test_log_has_one_line_per_write(tmp_path: Path) -> None:
    with JsonlWriter(tmp_path / "log.jsonl") as log:
        s = store(True, log)
        s.write(1, "r", 2, "a")
        s.write(2, "r", 1, "b")
    lines = list(read_jsonl(tmp_path / "log.jsonl"))
    assert [set(line) for line in lines] == [
        {"time", "writer", "resource", "token", "value", "accepted", "highest_before", "unfenced"}
    ] * 2
    assert lines[0]["time"] <= lines[1]["time"]
    assert [line["accepted"] for line in lines] == [True, False]


@pytest.fixture(params=[True, False], ids=["fencing-on", "fencing-off"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ResourceServer]:
    with ResourceServer(tmp_path / "resource.jsonl", RunClock(), fencing=request.param) as s:
        yield s


def test_resource_process_round_trip(server: ResourceServer) -> None:
    c = ResourceClient(server.address)
    assert c.write(2, "lock", 2, "new").accepted
    stale = c.write(1, "lock", 1, "old")
    assert stale.accepted is (not server.fencing) and stale.highest_before == 2
    assert c.read("lock")["highest"] == 2
    with pytest.raises(Rejected, match="token"):
        c.write(1, "lock", "seven", "x")  # type: ignore[arg-type]
    c.close()
    records = server.records()
    assert [(r["writer"], r["accepted"]) for r in records] == [(2, True), (1, not server.fencing)]


def test_stopped_resource_refuses_connections(tmp_path: Path) -> None:
    s = ResourceServer(tmp_path / "r.jsonl", RunClock())
    s.start()
    address = s.address
    s.stop()
    s.stop()
    with pytest.raises(NotSent):
        ResourceClient(address).read("r")
