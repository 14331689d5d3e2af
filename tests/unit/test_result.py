"""How checker results compose into a run's verdict, not-applicable results included."""

from __future__ import annotations

from checkers.result import UNKNOWN, CheckResult, overall, worst
from harness.report._verdict import checker_verdicts, headline


def test_worst_orders_invalid_unknown_valid() -> None:
    assert worst([True, UNKNOWN, False]) is False
    assert worst([True, UNKNOWN]) == UNKNOWN
    assert worst([True, True]) is True


def test_overall_leaves_out_what_does_not_apply() -> None:
    mutex = CheckResult("mutex", True)
    fencing = CheckResult("fencing", UNKNOWN, "Not applicable: no token.", applicable=False)
    assert overall([mutex, fencing]) is True
    assert overall([CheckResult("mutex", False), fencing]) is False


def test_a_run_where_nothing_applies_is_unknown() -> None:
    fencing = CheckResult("fencing", UNKNOWN, applicable=False)
    assert overall([fencing]) == UNKNOWN
    assert overall([]) == UNKNOWN


def test_the_report_says_n_a_and_lists_it_last() -> None:
    results = {
        "valid": True,
        "checkers": {
            "fencing": CheckResult(
                "fencing", UNKNOWN, "Not applicable: no token.", applicable=False
            ).to_dict(),
            "mutex": CheckResult("mutex", True, "No overlap.").to_dict(),
        },
    }
    verdicts = checker_verdicts(results)
    assert [(v.checker, v.word) for v in verdicts] == [("mutex", "valid"), ("fencing", "n/a")]
    assert headline(results) == "Valid: mutex: No overlap."
