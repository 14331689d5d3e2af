"""Mutual exclusion of a lock (or a leadership), judged and explained in plain words (the
words in ``checkers.mutex_words``).

Reads three records of a run (plus the service's own log when it keeps one):

- the protected resource's write log (``workloads.common.resource``): what arrived, when, with
  which token, and what the resource did with it;
- the client history: ``acquire``/``release`` (or ``campaign``/``resign``) operations,
  whose ``ok`` completions carry ``{"token"|"epoch": n, "lease": id, "name": lock}``;
- the client events: ``lease-granted`` / ``keepalive`` / ``lease-lost`` per lease;
- the service's events (``run_dir/sim/events.jsonl``): exact grants and lease expiries.

``checkers.overlaps`` finds the overlapping holdings, stale writes and handovers;
``checkers.classify`` says why each happened. The verdict:

- *invalid* when two holders overlapped while the earlier lease was certainly still valid
  (the service, a clock jump or a crash broke mutual exclusion), or when the resource
  accepted a stale write (the harm a fencing token exists to prevent);
- *unknown* when an overlap cannot be judged (no lease events for the earlier holder), or
  when nothing was held and nothing written (the run proves nothing);
- *valid* otherwise: a paused holder whose lease expired overlapped in its own view, but
  its stale writes, if any, were rejected by fencing.

The summary has one paragraph per stale holder ("process 2 believed it held lock-0 from
11.98 s to 26.34 s while 17 later holdings happened"), not one line per overlapping pair;
``details["overlaps"]`` still lists every pair with its duration.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from checkers.anomalies import (
    KEY,
    NO_INDEX,
    Anomaly,
    Invocations,
    Involved,
    first_sentences,
    lead_with,
    named,
)
from checkers.attribution import LibraryRecord
from checkers.classify import Classification
from checkers.durability import durability_rule
from checkers.expiry import expiry_rule
from checkers.foreign_release import summary as foreign_summary
from checkers.holdings import ELECTION, LOCK, Holding, Terms, declared
from checkers.mutex_words import expiry_of, group_paragraph, write_paragraph
from checkers.overlaps import Analysis, Group, StaleWrite, analyse
from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult, Validity
from checkers.shrink_holdings import shrink_result
from checkers.windows import record_windows
from checkers.words import plural, secs

NAME = "mutex"


@dataclass(frozen=True, slots=True)
class Judgement:
    """A verdict over an ``Analysis``: validity, head line, paragraphs and details."""

    valid: Validity
    head: str
    paragraphs: list[str]
    violations: list[str]
    details: dict[str, Any]
    anomalies: list[Anomaly]
    """One per violation, in the same order, named (``checkers.anomalies``)."""


def check_record(record: RunRecord) -> CheckResult:
    """Judge the mutual exclusion of a lock run (see the module docstring); an invalid
    result carries its first violation's fewest holdings and writes (``shrunk``,
    ``checkers.shrink_holdings``)."""
    return shrink_result(judged(record), record, judged, LOCK)


def judged(record: RunRecord) -> CheckResult:
    """The mutual-exclusion result of ``record``, without its shrink."""
    history = record.history
    found = analyse(
        record.resource_log,
        history,
        record.events,
        record.service_events,
        record_windows(record),
        declared(record.test, LOCK),
        expiry_rule(record.test),
        durability_rule(record.test),
        LibraryRecord.of(record.test),
    )
    j = judge(found, Invocations(history))
    return CheckResult(NAME, j.valid, lead_with(j.anomalies, [j.head, *j.paragraphs]), j.details)


def judge(a: Analysis, index: Invocations = NO_INDEX) -> Judgement:
    """The mutual-exclusion verdict over an analysis, with its words; ``index`` finds the
    history index of a holding's take."""
    t = a.terms
    accepted = [s for s in a.stale if s.accepted]
    rejected = [s for s in a.stale if not s.accepted]
    grouped = {id(w) for g in a.groups for w in g.writes_after}
    paragraphs: list[str] = []
    violations: list[str] = []
    anomalies: list[Anomaly] = []
    group_texts = [group_paragraph(g, t) for g in a.groups]
    for g, text in zip(a.groups, group_texts, strict=True):
        paragraphs.append(text)
        if g.violates:
            violations.append(text)
            anomalies.append(group_anomaly(g, t, index))
    for s in accepted:
        if id(s.write) not in grouped:
            text = write_paragraph(s, a)
            paragraphs.append(text)
            violations.append(text)
            anomalies.append(write_anomaly(s, text, t, index))

    valid: Validity
    if violations:
        valid = False
    elif (not a.held and not a.writes) or any(g.undecided for g in a.groups):
        valid = UNKNOWN
    else:
        valid = True
    later = sum(len(g.later) for g in a.groups)
    head = (
        f"{plural(len(a.held), t.tenure)}, {plural(len(a.writes), 'write')} at the resource; "
        f"{plural(len(a.groups), 'stale ' + t.holder)} overlapped by "
        f"{plural(later, 'later ' + t.tenure)} ({len(a.lease_valid_groups)} with the "
        f"earlier lease still valid); "
        f"{plural(len(accepted), 'stale write')} accepted, {len(rejected)} rejected by fencing."
    )
    if valid is True and rejected:
        head += " Fencing stopped every stale write."
    if valid == UNKNOWN and not a.held:
        head += f" Nothing was {t.hold}: this run proves nothing about mutual exclusion."
    details = {
        "holdings": len(a.held),
        "writes": len(a.writes),
        "overlaps": a.overlaps,
        "overlap_groups": [group_dict(g, x) for g, x in zip(a.groups, group_texts, strict=True)],
        "stale_accepted": [stale_dict(s, a) for s in accepted],
        "stale_rejected": [stale_dict(s, a) for s in rejected],
        "handovers": a.handovers,
        "released_another": foreign_summary(a.foreign),
        "violations": violations,
        KEY: [x.to_dict() for x in anomalies],
    }
    return Judgement(valid, head, paragraphs, violations, details, anomalies)


# --- named anomalies ---------------------------------------------------------------------


def group_anomaly(g: Group, t: Terms, index: Invocations) -> Anomaly:
    """A violating group named: two holders (leaders) at once while the earlier lease was
    valid, else the stale write (a deposed leader's) that the resource accepted."""
    h, x = g.first, g.later[0]
    election = t.number == ELECTION.number
    what = h.name or f"the {t.thing}"
    involved = [
        holding_involved(h, f"stale {t.holder}", t, index),
        holding_involved(x, f"later {t.holder}", t, index),
    ]
    c = g.takeover.classification

    def granted(verb: str) -> str:
        return (
            f"process {x.process} {verb} granted {what} ({t.number} {x.number}) at "
            f"{secs(g.taken_over_at)}"
        )

    accepted = next((w for w in g.writes_after if w.get("accepted")), None)
    said = c if g.kind == "lease-valid" or accepted is None else g.harm or c
    if g.kind == "lease-valid" or accepted is None:
        kind = "two-leaders" if election else "two-holders"
        text = (
            f"{granted('was')} while process {h.process}'s lease ({t.number} "
            f"{h.number}) was still valid. Cause: {c.label}."
        )
    else:
        kind = "deposed-write-accepted" if election else "stale-write-accepted"
        involved.append(write_involved(accepted, t))
        text = (
            f"the resource accepted process {h.process}'s write with {t.number} "
            f"{accepted.get('token')} at {secs(accepted['time'])}, after "
            f"{granted('had been')}. "
            f"Cause: {(g.harm or c).label}."
        )
    return Anomaly(kind, named(kind, text), tuple(involved), h.name, attributed(said))


def write_anomaly(s: StaleWrite, paragraph: str, t: Terms, index: Invocations) -> Anomaly:
    """An accepted stale write outside any overlap group, named by its first sentences."""
    election = t.number == ELECTION.number
    kind = "deposed-write-accepted" if election else "stale-write-accepted"
    involved = [write_involved(s.write, t)]
    if s.holding is not None:
        involved.insert(0, holding_involved(s.holding, f"stale {t.holder}", t, index))
    text = first_sentences(paragraph)
    text = text[:1].lower() + text[1:]
    extra = attributed(s.cause)
    return Anomaly(kind, named(kind, text), tuple(involved), s.write.get("resource"), extra)


def attributed(c: Classification | None) -> dict[str, Any]:
    """An anomaly's ``attribution`` (``checkers.blame``), when its cause has one."""
    if c is None or c.attribution is None:
        return {}
    return {"attribution": c.attribution.to_dict()}


def holding_involved(h: Holding, role: str, t: Terms, index: Invocations) -> Involved:
    """A holding as an anomaly's participant: its take's index, invocation and grant."""
    return Involved(
        role, h.process, index(h.process, h.invoked), h.invoked, h.start, f"{t.number} {h.number}"
    )


def write_involved(w: dict[str, Any], t: Terms) -> Involved:
    """A write the resource logged, as an anomaly's participant (not a history op)."""
    verdict = "accepted" if w.get("accepted") else "rejected"
    return Involved(
        "write",
        w.get("writer"),
        None,
        w.get("time"),
        None,
        f"write with {t.number} {w.get('token')}, {verdict}",
    )


def group_dict(g: Group, summary: str) -> dict[str, Any]:
    """A group as JSON."""
    return {
        "process": g.first.process,
        "name": g.first.name,
        "token": g.first.number,
        "holding": g.first.to_dict(),
        "kind": g.kind,
        "later_count": len(g.later),
        "later": [x.to_dict() for x in g.later],
        "taken_over_at": g.taken_over_at,
        "believed_after_takeover_s": g.believed_after_s,
        "both_believed_s": g.both_s,
        "writes_after_takeover": g.writes_after,
        "violation": g.violates,
        "classification": g.takeover.classification.to_dict(),
        "accepted_because": None if g.harm is None else g.harm.to_dict(),
        "summary": summary,
    }


def stale_dict(s: StaleWrite, a: Analysis) -> dict[str, Any]:
    """A stale write as JSON, with its explanation."""
    return {
        "kind": s.kind,
        "write": s.write,
        "lease_expiry": expiry_of(s, a),
        "classification": None if s.cause is None else s.cause.to_dict(),
        "explanation": write_paragraph(s, a),
    }
