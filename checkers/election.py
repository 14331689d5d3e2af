"""Election safety: at most one leader per epoch, epochs that only go up, and no deposed
leader's write accepted.

A leadership is a holding (``campaign`` ok ``{"epoch": n, "lease": id, "name": e}`` to
``resign`` or a noticed lease loss), so this checker is the mutual-exclusion analysis
(``checkers.overlaps``, judged by ``checkers.mutex.judge``) in election words, plus the
epoch rules of ``checkers.fencing`` (an epoch is the leadership's fencing number):

- two leaders elected with the same epoch, or a leader with a lower epoch than one elected
  before it: a service bug (or a crash that reset the counter);
- two processes that both believed they led: how long, and why (``checkers.classify``);
  invalid when the earlier leader's lease was still valid;
- a deposed leader's write accepted by the resource: invalid.

``details`` has the mutex keys (``overlaps``, ``overlap_groups``, ``stale_accepted``,
``stale_rejected``, ``handovers``, ``violations``, ``named_anomalies``: epoch reuse, epoch
lowered, two leaders, deposed leader's write accepted) plus ``epoch_anomalies`` and
``two_leaders_s`` (per election, the time during which two processes believed they led).
"""

from __future__ import annotations

from typing import Any

from checkers.anomalies import KEY, Invocations, lead_with
from checkers.durability import durability_rule
from checkers.expiry import expiry_rule
from checkers.fencing import (
    anomaly_paragraphs,
    distinct_count,
    named_anomalies,
    number_anomalies,
    number_grants,
)
from checkers.holdings import ELECTION, declared, service_grants
from checkers.mutex import judge
from checkers.overlaps import analyse, both_believed_s
from checkers.record import RunRecord
from checkers.result import CheckResult, worst
from checkers.shrink_holdings import shrink_result
from checkers.windows import record_windows
from checkers.words import plural

NAME = "election"


def check_record(record: RunRecord) -> CheckResult:
    """Judge the election safety of an election run (see the module docstring); an
    invalid result carries its first violation's fewest leaderships and writes
    (``shrunk``, ``checkers.shrink_holdings``)."""
    return shrink_result(judged(record), record, judged, ELECTION)


def judged(record: RunRecord) -> CheckResult:
    """The election result of ``record``, without its shrink."""
    history = record.history
    windows = record_windows(record)
    service = list(record.service_events)
    terms = declared(record.test, ELECTION)
    durability = durability_rule(record.test)
    found = analyse(
        record.resource_log,
        history,
        record.events,
        service,
        windows,
        terms,
        expiry_rule(record.test),
        durability,
    )
    index = Invocations(history)
    j = judge(found, index)
    grants = number_grants(found.held, service_grants(service, terms), found.leases)
    anomalies = number_anomalies(grants, terms.number, windows, durability)
    epoch_paragraphs = anomaly_paragraphs(anomalies, terms)
    named = [*named_anomalies(anomalies, terms, index), *j.anomalies]
    valid = worst([j.valid, not anomalies])
    by_name: dict[Any, list[dict[str, Any]]] = {}
    for p in found.overlaps:
        by_name.setdefault(p["first"]["name"], []).append(p)
    two = {str(n): both_believed_s(ps) for n, ps in by_name.items()}
    head = j.head
    if anomalies:
        reused, lowered = distinct_count(anomalies, "reused"), distinct_count(anomalies, "lowered")
        if reused:
            head += (
                f" Epochs: {plural(reused, 'leader')} got an epoch another leader already "
                "had (at most one leader per epoch)."
            )
        if lowered:
            head += (
                f" Epochs: {plural(lowered, 'leader')} got a lower epoch than an earlier "
                "leader (epochs must increase)."
            )
    elif grants:
        head += " Epochs: one leader per epoch, each higher than the last."
    if two:
        longest = max(v or 0.0 for v in two.values())
        head += f" Two processes believed they led at once for {longest:.3f} s in all."
    violations = epoch_paragraphs + j.violations
    return CheckResult(
        NAME,
        valid,
        lead_with(named, [head, *epoch_paragraphs, *j.paragraphs]),
        {
            **j.details,
            "violations": violations,
            KEY: [x.to_dict() for x in named],
            "epoch_anomalies": [x.to_dict() for x in anomalies],
            "two_leaders_s": two,
        },
    )
