"""A workload declares its operation names (``workloads.holders.Holder``, issue 31): a run
records them in test.json's ``holder`` and the checkers of holdings and the report read
them from there, not from a list of their own; a test.json written before the
declaration reads by the names runs used then."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import recorded_run
from test_mutex import paused_holder
from test_mutex_records import S, run_record

from checkers import mutex
from checkers.holdings import ELECTION, LOCK, declared, recorded_terms
from core.history import History
from harness.report._locks import terms_of
from workloads.holders import LEADER, WRITER
from workloads.lock.ops import LOCK_HOLDER
from workloads.workload_registry import WORKLOADS

RENAMED = {"acquire": "grab", "release": "drop"}


def renamed(history: History) -> History:
    """``history`` with the lock's operations under other names."""
    return History(o.with_(f=RENAMED.get(o.f, o.f)) for o in history)


def grab_drop() -> dict[str, object]:
    """The test.json ``holder`` of a lock whose operations are ``grab`` and ``drop``."""
    return {**LOCK_HOLDER.to_dict(), "takes": ["grab"], "gives": ["drop"]}


def test_the_mutex_checker_reads_the_declared_operations() -> None:
    log, h, events = paused_holder(fencing=False)
    record = run_record(log, renamed(h), events)
    declared_record = type(record)(
        record.history, record.resource_log, record.events, {"holder": grab_drop()}
    )
    found = mutex.check_record(declared_record)
    (stale,) = found.details["stale_accepted"]
    assert stale["lease_expiry"] == 22 * S and len(found.details["overlaps"]) == 1
    # Without the declaration the renamed operations are no holding at all (today's names):
    # the stale write is told by its token alone, no lease, no overlap.
    undeclared = mutex.check_record(record).details
    assert undeclared["stale_accepted"][0]["lease_expiry"] is None
    assert not undeclared["overlaps"]


def test_a_test_json_without_the_declaration_reads_by_todays_names() -> None:
    assert declared({}, LOCK) is LOCK and declared({"holder": None}, ELECTION) is ELECTION
    assert declared({"holder": {"takes": "acquire"}}, LOCK) is LOCK  # not a list: not read
    log, h, events = paused_holder(fencing=False)
    assert mutex.check_record(run_record(log, h, events)).valid is False


def test_the_terms_follow_the_declared_number() -> None:
    assert recorded_terms({"holder": LEADER.to_dict()}) == ELECTION
    assert recorded_terms({"holder": LOCK_HOLDER.to_dict()}) == LOCK
    assert recorded_terms({"holder": WRITER.to_dict()}) is None  # not numbered: nothing drawn
    assert recorded_terms({"holder": None}) is None
    terms = terms_of(History([]), {"holder": grab_drop()})
    assert terms is not None and terms.take == ("grab",) and terms.holder == LOCK.holder


def test_every_holding_workload_declares_what_its_checkers_read() -> None:
    numbered = {w.name for w in WORKLOADS.values() if w.holder and w.holder.number}
    assert numbered >= {"lock", "election", "herd"}


@pytest.mark.slow
def test_a_run_records_its_workloads_operations(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    test = recorded_run(
        capsys,
        tmp_path,
        *("--workload", "election", "--time-limit", "3", "--recovery-time", "0"),
        *("--nemesis", "none"),
    )
    assert test["holder"] == LEADER.to_dict()
    assert test["holder"]["takes"] == ["campaign"] and test["holder"]["number"] == "epoch"
