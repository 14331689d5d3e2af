"""No fault, no valid (issue 15, item 5): a fault asked for and never injected, or never
shown to take effect, makes the run unknown with the reason."""

from __future__ import annotations

from test_mutex_records import fault, history

from checkers.faults import check_record
from checkers.record import RunRecord
from checkers.result import UNKNOWN


def record(nemesis: list[str], *events: object) -> RunRecord:
    return RunRecord(history(*events), test={"options": {"nemesis": nemesis}})  # type: ignore[arg-type]


def test_a_requested_fault_never_injected_is_unknown() -> None:
    r = check_record(record(["pause"]))
    assert r.valid == UNKNOWN
    assert "the pause fault was asked for but never injected" in r.summary
    assert r.details["never_injected"] == ["pause"]


def test_each_requested_fault_must_be_injected() -> None:
    r = check_record(record(["pause", "kill"], fault("pause", 1, 2)))
    assert r.valid == UNKNOWN and r.details["never_injected"] == ["kill"]
    both = check_record(record(["pause", "kill"], fault("pause", 1, 2), fault("kill", 3, 4)))
    assert both.valid is True and both.details["starts"] == 2


def test_no_fault_asked_is_valid_and_says_so() -> None:
    for nemesis in (["none"], []):
        r = check_record(record(nemesis))
        assert r.valid is True and r.summary == "no fault was asked for or injected"
