"""An id handed out twice across a power cut (issue 34), named by the run's fsync setting:
Redis's INCR under appendfsync everysec answers before it fsyncs, so a cut within the
next 2 s may take the increment and the restarted server hands the same id out again,
lost as documented; under appendfsync always the same records blame nobody; without a
rule, or with no cut between the two issues, the duplicate is only a duplicate."""

from __future__ import annotations

from typing import Any

from test_classify_power import FACTS
from test_mutex_records import Event, fault, history

from checkers import ids
from checkers.classify import UNEXPLAINED, UNSYNCED
from checkers.record import RunRecord
from clusters.target_registry import TARGETS
from core.options import RunOptions
from harness.suite import found_causes


def issue(at: float, process: int, id_: int) -> list[Event]:
    return [(at, process, "invoke", "next-id", None), (at + 0.002, process, "ok", "next-id", id_)]


def run(persistence: str | None, cut_at: float = 1.0, discarded: int = 64) -> dict[str, Any]:
    """Ids 1-3 issued, a cut of n1 at ``cut_at`` discarding ``discarded`` bytes of the
    append-only file, then id 3 again: the ids checker's results."""
    value = {"nodes": ["n1"], "discarded": {"n1": {"aof": discarded}}, "proof": {"n1": True}}
    h = history(
        issue(0.1, 0, 1),
        issue(0.2, 1, 2),
        issue(0.6, 0, 3),
        fault("power-loss", cut_at, cut_at + 1.0, value),
        issue(2.5, 1, 3),
    )
    opts = RunOptions.of(
        target="redis", workload="unique-ids", persistence=persistence, nemesis=["power-loss"]
    )
    rules = [r.to_dict() for r in TARGETS["redis"].rules_for(opts)]
    test = {"options": {"target": "redis"}, "faults": FACTS, "service_rules": rules}
    return ids.check_record(RunRecord(h, test=test)).to_dict()


def test_an_id_issued_again_after_an_everysec_cut_is_lost_as_documented() -> None:
    r = run("aof-everysec")
    assert r["valid"] is False and r["duplicate_ids"] == 1
    [dup] = r["duplicates"]
    c = dup["classification"]
    assert c["cause"] == UNSYNCED and c["expected"] is True
    assert c["evidence"].startswith("id 3 (process 0 at 0.602 s) was acknowledged 0.399 s")
    assert "not fsynced under redis's appendfsync everysec" in c["evidence"]
    assert "64 bytes on n1" in c["evidence"] and "lost, as documented (up to 2 s)" in c["evidence"]
    assert "handed it out again (process 1 at 2.502 s)" in c["evidence"]
    assert "lost, as documented" in r["summary"]
    assert found_causes({"checkers": {"ids": r}}) == {UNSYNCED}


def test_the_same_duplicate_under_appendfsync_always_blames_nobody() -> None:
    c = run("aof-always")["duplicates"][0]["classification"]
    assert c["cause"] == UNEXPLAINED and c["expected"] is False
    assert "every acknowledged write is fsynced before its answer" in c["evidence"]


def test_a_duplicate_the_rule_does_not_explain_is_only_a_duplicate() -> None:
    assert "classification" not in run("none")["duplicates"][0]  # no rule
    late = run("aof-everysec", cut_at=2.9)  # the cut came after the second issue
    assert "classification" not in late["duplicates"][0]
    old = run("aof-everysec", cut_at=2.4)  # acknowledged 1.8 s before: within 2 s
    assert old["duplicates"][0]["classification"]["cause"] == UNSYNCED
    nothing = run("aof-everysec", discarded=0)  # the cut discarded nothing
    assert "classification" not in nothing["duplicates"][0]
    assert found_causes({"checkers": {"ids": nothing}}) == set()
