"""Mutual exclusion of a lock (or a leadership), judged and explained in plain words.

Reads three records of a run (plus the service's own log when it keeps one):

- the protected resource's write log (``workloads.resource``): what arrived, when, with
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
from checkers.holdings import ELECTION, LOCK, Holding, Terms
from checkers.overlaps import Analysis, Group, StaleWrite, analyse
from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult, Validity
from checkers.windows import record_windows
from checkers.words import listing, plural, secs, span

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
    """Judge the mutual exclusion of a lock run; see the module docstring."""
    history = record.history
    found = analyse(
        record.resource_log,
        history,
        record.events,
        record.service_events,
        record_windows(record),
        LOCK,
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
    return Anomaly(kind, named(kind, text), tuple(involved), h.name)


def write_anomaly(s: StaleWrite, paragraph: str, t: Terms, index: Invocations) -> Anomaly:
    """An accepted stale write outside any overlap group, named by its first sentences."""
    election = t.number == ELECTION.number
    kind = "deposed-write-accepted" if election else "stale-write-accepted"
    involved = [write_involved(s.write, t)]
    if s.holding is not None:
        involved.insert(0, holding_involved(s.holding, f"stale {t.holder}", t, index))
    text = first_sentences(paragraph)
    text = text[:1].lower() + text[1:]
    return Anomaly(kind, named(kind, text), tuple(involved), s.write.get("resource"))


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


# --- plain language ----------------------------------------------------------------------


def group_paragraph(g: Group, t: Terms) -> str:
    """One paragraph for a stale holder and every later holding that overlapped it."""
    h = g.first
    what = f"{h.name or 'the ' + t.thing} ({t.number} {h.number})"
    until = "the end of the run" if h.end is None else f"{secs(h.end)} ({_ended(h.ended_by)})"
    procs = sorted({str(x.process) for x in g.later})
    others = f"{'process' if len(procs) == 1 else 'processes'} {listing(procs)}"
    numbers = _numbers(t, [x.number for x in g.later])
    c = g.takeover.classification
    text = (
        f"process {h.process} believed it {t.hold} {what} from {secs(h.start)} to "
        f"{until}, while {plural(len(g.later), 'later ' + t.tenure)} happened ({others}, "
        f"{numbers}), the first granted at "
        f"{secs(g.taken_over_at)}. It went on believing it {t.hold} it for "
        f"{g.believed_after_s:.3f} s after that, {g.both_s:.3f} s of it while another "
        f"process believed so too. Cause: {c.label}: {c.evidence}. {_handover_words(g, t)}"
        f"{_at_resource(g, t)}"
    )
    if g.harm is not None and g.harm is not c:
        text += f" Why it got through: {g.harm.label}: {g.harm.evidence}."
    if g.violates:
        text += f" Fix: {(g.harm or c).fix}."
    if g.kind == "lease-valid" and not g.undecided:
        return f"Two {t.holder}s at once: {text}"
    return text[0].upper() + text[1:]


def _numbers(t: Terms, numbers: list[int | None]) -> str:
    """``token 7``, ``tokens 8-22``, ``all with token 1``."""
    if len(numbers) == 1:
        return f"{t.number} {numbers[0]}"
    distinct = {n for n in numbers}
    if len(distinct) == 1:
        return f"all with {t.number} {numbers[0]}"
    return f"{t.number}s {span(numbers)}"


def _handover_words(g: Group, t: Terms) -> str:
    """The handover's two numbers in words (empty when the expiry is unknown)."""
    h = g.handover
    if h is None or h["lease_expiry"] is None:
        return ""
    delay, danger = h["handover_delay_s"], h["danger_window_s"]
    expiry = (
        ""
        if h["lease_expiry_source"] == "service"
        else (f", estimated from keepalives at {secs(h['lease_expiry'])}")
    )
    if delay >= 0:
        granted = f"granted again {delay:.3f} s after the lease expired{expiry}"
    else:
        granted = f"granted again {-delay:.3f} s before the lease would have expired{expiry}"
    late = (
        f"its last write arrived {danger:.3f} s after the expiry"
        if danger
        else "no write of it arrived after the expiry"
    )
    return (
        f"Handover delay {delay:.3f} s (the {t.prize} was {granted}); danger window "
        f"{danger or 0:.3f} s ({late}). "
    )


def _at_resource(g: Group, t: Terms) -> str:
    ws = g.writes_after
    if not ws:
        return "It wrote nothing to the resource after the takeover."
    acc = [w for w in ws if w.get("accepted")]
    rej = [w for w in ws if not w.get("accepted")]
    first = ws[0]
    where = (
        f"At the resource, {plural(len(ws), 'write')} of it arrived after the takeover, "
        f"the first at {secs(first['time'])} with {t.number} {first.get('token')} (the "
        f"resource had seen {t.number} {first.get('highest_before')})"
    )
    if acc and rej:
        return (
            f"{where}: {len(acc)} accepted, {len(rej)} rejected. An accepted stale write "
            f"overwrote a newer {t.holder}'s data."
        )
    if acc and all(_before_newer(w) for w in acc):
        return (
            f"{where}: accepted. A {t.holder} that had lost the {t.prize} wrote before "
            f"the newer {t.holder}'s first write reached the resource, so fencing could "
            f"not tell it from a current {t.holder}'s; a newer {t.holder} that read the "
            f"resource before it may lose that update."
        )
    if acc:
        return (
            f"{where}: accepted. A {t.holder} that had lost the {t.prize} overwrote a "
            f"newer {t.holder}'s data, the corruption fencing exists to prevent."
        )
    return f"{where}: rejected by fencing, as designed."


def _before_newer(w: dict[str, Any]) -> bool:
    """Whether a stale write's token was not lower than any the resource had seen: no
    newer holder's write had reached it yet."""
    token, highest = w.get("token"), w.get("highest_before")
    return highest is None or (isinstance(token, int) and token >= highest)


def write_paragraph(s: StaleWrite, a: Analysis) -> str:
    """One paragraph for a stale write: who wrote what, when, and what became of it."""
    w, t = s.write, a.terms
    expiry = _expiry_of(s, a)
    if expiry is None:
        window = ""
    elif s.time > expiry:
        window = (
            f" Its lease had expired by {secs(expiry)}; the write arrived "
            f"{secs(s.time - expiry)} later (the danger window)."
        )
    else:
        window = f" Its lease was renewed until about {secs(expiry)}."
    head = f"Process {w['writer']} wrote {w.get('value')!r} to {w.get('resource')!r}"
    if s.kind == "token":
        what = (
            f"{head} with {t.number} {w.get('token')} at {secs(s.time)}, after the "
            f"resource had seen {t.number} {w.get('highest_before')}."
        )
    elif s.kind == "superseded":
        what = (
            f"{head} with {t.number} {w.get('token')} at {secs(s.time)}, after another "
            f"process had been granted the {t.prize} after it; the {t.number} was not "
            "lower than the resource's highest, so fencing could not tell."
        )
    else:
        what = (
            f"{head} without a {t.number} at {secs(s.time)}, after another process had "
            f"been granted the {t.prize} after it."
        )
    if s.accepted:
        verdict = (
            f" The resource accepted it: a {t.holder} that had lost the {t.prize} "
            f"overwrote a newer {t.holder}'s data (fencing off, or no {t.number} it "
            "could judge). This is the corruption fencing exists to prevent."
        )
        if s.cause is not None:
            verdict += f" Cause: {s.cause.label}: {s.cause.evidence}. Fix: {s.cause.fix}."
    else:
        verdict = f" The resource rejected it: fencing stopped the stale {t.holder}, as designed."
    return what + window + verdict


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
        "lease_expiry": _expiry_of(s, a),
        "classification": None if s.cause is None else s.cause.to_dict(),
        "explanation": write_paragraph(s, a),
    }


def _expiry_of(s: StaleWrite, a: Analysis) -> int | None:
    if s.holding is None:
        return None
    facts = a.leases.get(s.holding.lease)
    return facts.best_expiry()[0] if facts is not None else None


def _ended(ended_by: str) -> str:
    return {
        "released": "when it released",
        "release-failed": "when its release failed",
        "release-unknown": "when it tried to release",
        "lease-lost": "when it noticed its lease lost",
        "closed": "when its worker was stopped and its client closed",
    }.get(ended_by, ended_by)
