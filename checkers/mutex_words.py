"""The plain words of ``checkers.mutex``: one paragraph per stale holder (who believed it
held what, while which later holdings happened, why, and what the resource did with its
writes) and per stale write (``write_paragraph``)."""

from __future__ import annotations

from typing import Any

from checkers.expiry import ExpiryRule
from checkers.holdings import Terms
from checkers.overlaps import Analysis, Group, StaleWrite
from checkers.words import listing, plural, secs, span


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
    late = (
        f"its last write arrived {danger:.3f} s after the expiry"
        if danger
        else "no write of it arrived after the expiry"
    )
    danger_words = f"danger window {danger or 0:.3f} s ({late}). "
    rule = h.get("expiry_rule")
    if rule is not None:
        return f"{_by_rule(h, ExpiryRule(**rule), t)}; {danger_words}"
    if delay >= 0:
        granted = f"granted again {delay:.3f} s after the lease expired{expiry}"
    else:
        granted = f"granted again {-delay:.3f} s before the lease would have expired{expiry}"
    return f"Handover delay {delay:.3f} s (the {t.prize} was {granted}); {danger_words}"


def _by_rule(h: dict[str, Any], rule: ExpiryRule, t: Terms) -> str:
    """The handover measured by the service's documented expiry rule: where the grant
    came in the window from the lease's deadline to the rule's latest end, the rule cited."""
    delay, after = h["handover_delay_s"], h["after_expiry_s"]
    deadline = (
        f"the lease's deadline (last renewal + TTL, estimated from keepalives at "
        f"{secs(h['lease_expiry'])})"
    )
    latest = f"the rule's latest end at {secs(h['lease_expiry_latest'])}"
    if delay > 0:
        where = f"{after:.3f} s after {deadline}, {delay:.3f} s after {latest}"
    elif delay < 0:
        where = f"{-after:.3f} s before {deadline}"
    else:
        where = f"{after:.3f} s after {deadline}, by {latest}: within the rule, no delay"
    return (
        f"Handover delay {delay:.3f} s by {rule.words()}: the {t.prize} was granted again at "
        f"{secs(h['next_acquired'])}, {where}"
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
    expiry = expiry_of(s, a)
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


def expiry_of(s: StaleWrite, a: Analysis) -> int | None:
    """When the stale writer's lease expired, at best (None: no holding or no lease facts)."""
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
