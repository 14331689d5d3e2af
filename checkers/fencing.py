"""Fencing: the numbers a service grants must only go up, and the resource must enforce it.

A fencing token (a lock's ``token``, a leader's ``epoch``) is only worth something if

1. every grant of the same lock carries a number higher than every earlier grant's:
   a *reused* number lets a stale holder's writes pass as the current holder's, a
   *lowered* one lets them win and refuses the current holder's;
2. the protected resource never accepts a number lower than one it has accepted before.

Rule 1 is checked on two sources when present: the clients' take ``ok`` values (a grant
completed before another was invoked must carry a lower number; two grants to different
leases must not carry the same one) and the service's own grant log (exact order). Every
anomaly is classified (``checkers.classify.classify_number``): a crash that reset the
service's counter (a power cut that took the grant as the run's fsync setting documents:
lost as documented), else a service bug. Rule 2 is read from the resource log; with fencing
switched off on purpose (``options["fencing"]`` False) lower tokens are accepted by design,
counted, and left for ``checkers.mutex`` to judge by their harm.

A lock that hands out no numbers at all (Redis SET NX, Redlock) cannot be fenced: the
result is *not applicable* (``CheckResult.applicable``), says so, and the run's verdict
rests on ``checkers.mutex``, which judges what the resource saw.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from checkers.anomalies import KEY, NO_INDEX, Invocations, Involved, lead_with, named
from checkers.anomalies import Anomaly as Named
from checkers.classify import CAUSES, RESOURCE_BUG, Classification, classify_number
from checkers.durability import DurabilityRule, durability_rule
from checkers.holdings import (
    LOCK,
    Holding,
    ServiceGrant,
    Terms,
    attach_grants,
    declared,
    holdings,
    service_grants,
)
from checkers.leases import LeaseFacts, lease_facts
from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult, Validity
from checkers.shrink_holdings import shrink_result
from checkers.windows import FaultWindow, record_windows
from checkers.words import article, listing, plural, secs
from core.ops import Process

NAME = "fencing"
Source = Literal["service", "history"]


@dataclass(frozen=True, slots=True)
class NumberGrant:
    """One grant of a fencing number: from the service's log (``time`` exact, ``invoked``
    equal to it) or from a client's take (``time`` its ok, ``invoked`` its invocation)."""

    source: Source
    name: str | None
    number: int
    lease: Any
    process: Process | None
    time: int
    invoked: int

    @property
    def holder(self) -> Any:
        """Who got it: the lease, or for a lock without lease ids the take itself."""
        return self.lease if self.lease is not None else (self.process, self.invoked)

    def to_dict(self) -> dict[str, Any]:
        return {
            "process": self.process,
            "number": self.number,
            "lease": self.lease,
            "time": self.time,
        }


@dataclass(frozen=True, slots=True)
class Anomaly:
    """A grant whose number was not higher than an earlier grant's of the same name."""

    kind: Literal["reused", "lowered"]
    earlier: NumberGrant
    later: NumberGrant
    classification: Classification

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.later.source,
            "name": self.later.name,
            "earlier": self.earlier.to_dict(),
            "later": self.later.to_dict(),
            "classification": self.classification.to_dict(),
        }


def number_grants(
    held: Iterable[Holding], grants: Iterable[ServiceGrant], leases: dict[Any, LeaseFacts]
) -> list[NumberGrant]:
    """The numbered grants of both sources: definite holdings and the service's log."""
    out = [
        NumberGrant("history", h.name, h.number, h.lease, h.process, h.start, h.invoked)
        for h in held
        if h.start is not None and isinstance(h.number, int)
    ]
    for g in grants:
        if isinstance(g.number, int):
            process = leases[g.lease].process if g.lease in leases else None
            out.append(NumberGrant("service", g.name, g.number, g.lease, process, g.time, g.time))
    return out


def number_anomalies(
    grants: Sequence[NumberGrant],
    number: str,
    windows: Sequence[FaultWindow],
    durability: DurabilityRule | None = None,
) -> list[Anomaly]:
    """Every grant that reused a number already granted to another lease, or that was
    lower than a grant completed before it was asked for; per source and name.
    ``durability``: what the run's setting says a power cut may take, for the causes."""
    out: list[Anomaly] = []
    parts: dict[tuple[str, Any], list[NumberGrant]] = {}
    for g in grants:
        parts.setdefault((g.source, g.name), []).append(g)
    for part in parts.values():
        by_time = sorted(part, key=lambda g: g.time)
        first_of: dict[int, NumberGrant] = {}
        highest: NumberGrant | None = None  # over grants completed before ``g`` was invoked
        done = iter(by_time)
        pending = next(done, None)
        for g in sorted(part, key=lambda g: (g.invoked, g.time)):
            while pending is not None and pending.time < g.invoked:
                if highest is None or pending.number > highest.number:
                    highest = pending
                pending = next(done, None)
            seen = first_of.get(g.number)
            if seen is not None and seen.holder != g.holder and seen.time <= g.time:
                out.append(_anomaly("reused", seen, g, number, windows, durability))
            elif highest is not None and g.number < highest.number:
                out.append(_anomaly("lowered", highest, g, number, windows, durability))
            first_of.setdefault(g.number, g)
    return sorted(out, key=lambda a: a.later.time)


def distinct_count(anomalies: Sequence[Anomaly], kind: str | None = None) -> int:
    """How many grants were anomalous, counting each once though both sources saw it
    (the larger of the two sources' counts)."""
    xs = [x for x in anomalies if kind is None or x.kind == kind]
    return max((sum(x.later.source == s for x in xs) for s in ("service", "history")), default=0)


def lower_accepted(writes: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Accepted writes whose token is lower than one the resource accepted before, with
    that highest token (per resource name, in arrival order)."""
    highest: dict[Any, int] = {}
    out = []
    for w in sorted(writes, key=lambda w: int(w["time"])):
        token = w.get("token")
        if not w.get("accepted") or not isinstance(token, int):
            continue
        top = highest.get(w.get("resource"))
        if top is not None and token < top:
            out.append({"write": w, "highest_accepted": top})
        else:
            highest[w.get("resource")] = token if top is None else max(top, token)
    return out


def check_record(record: RunRecord) -> CheckResult:
    """Judge both fencing rules over a lock run; whether the resource was told to enforce
    tokens is the run's recorded ``fencing`` option (None: not recorded, taken as on). An
    invalid result carries its first anomaly's fewest holdings and writes (``shrunk``,
    ``checkers.shrink_holdings``)."""
    return shrink_result(judged(record), record, judged, LOCK)


def judged(record: RunRecord) -> CheckResult:
    """The fencing result of ``record``, without its shrink."""
    history, terms = record.history, declared(record.test, LOCK)
    enforced = record.options.get("fencing")
    windows = record_windows(record)
    service = list(record.service_events)
    writes = list(record.resource_log)
    leases = lease_facts(record.events, service)
    held = [h for h in holdings(history, terms) if h.definite]
    sgrants = service_grants(service, terms)
    attach_grants(held, sgrants)
    grants = number_grants(held, sgrants, leases)
    anomalies = number_anomalies(grants, terms.number, windows, durability_rule(record.test))
    lower = lower_accepted(writes)
    resource_bad = lower if enforced is not False else []
    paragraphs = anomaly_paragraphs(anomalies, terms)
    paragraphs += [_resource_paragraph(x, terms) for x in resource_bad]
    named_list = named_anomalies(anomalies, terms, Invocations(history))
    named_list += [_resource_anomaly(x, terms) for x in resource_bad]
    unfenced = sum(1 for w in writes if w.get("token") is None)
    n_hist = sum(1 for g in grants if g.source == "history")
    n_serv = sum(1 for g in grants if g.source == "service")

    valid: Validity
    applicable = True
    if paragraphs:
        valid = False
        parts = []
        if anomalies:
            n = distinct_count(anomalies)
            parts.append(f"{plural(n, 'grant')} reused or lowered {article(terms.number)}")
        if resource_bad:
            lower_words = plural(len(resource_bad), "lower " + terms.number)
            parts.append(f"the resource accepted {lower_words} though fencing was on")
        head = "; ".join(parts) + "."
        head = head[0].upper() + head[1:]
    elif not grants:
        valid, applicable = UNKNOWN, False
        taken = sum(1 for h in held)
        head = (
            f"Not applicable: no grant carried a fencing {terms.number} "
            f"({plural(taken, terms.tenure)}), so this {terms.thing} cannot be fenced; "
            "nothing but the lock service stands between a stale holder and the "
            "resource, and the mutual-exclusion result alone judges the run."
        )
    else:
        valid = True
        names = sorted({str(g.name) for g in grants})
        seen = (
            f"{plural(n_hist, 'grant')} seen by the clients and {n_serv} in the service's own log"
            if record.keeps_service_log
            else f"{plural(n_hist, 'grant')} seen by the clients (the service keeps no log "
            "of its grants to check them against)"
        )
        head = (
            f"{seen} ({listing(names)}): every {terms.number} was higher than the ones "
            "granted before it; "
        )
        if enforced is False:
            head += (
                f"fencing was off, so the resource accepted "
                f"{plural(len(lower), 'lower ' + terms.number)} by design (the "
                "mutual-exclusion result judges the harm)."
            )
        else:
            head += f"the resource never accepted a lower {terms.number}."
    return CheckResult(
        NAME,
        valid,
        lead_with(named_list, [head, *paragraphs]),
        {
            "grants": n_hist,
            "service_grants": n_serv,
            "anomalies": [a.to_dict() for a in anomalies],
            "resource": {
                "enforced": enforced,
                "lower_accepted": lower,
                "unfenced_writes": unfenced,
            },
            "violations": paragraphs,
            KEY: [x.to_dict() for x in named_list],
        },
        applicable,
    )


# --- plain language ----------------------------------------------------------------------


def _grouped(anomalies: Sequence[Anomaly]) -> list[list[Anomaly]]:
    """The anomalies per name, kind and cause: one paragraph (and one named anomaly) each."""
    groups: dict[tuple[Any, str, str], list[Anomaly]] = {}
    for a in anomalies:
        groups.setdefault((a.later.name, a.kind, a.classification.cause), []).append(a)
    return list(groups.values())


def anomaly_paragraphs(anomalies: Sequence[Anomaly], terms: Terms) -> list[str]:
    """One paragraph per name, kind and cause (the first anomaly told in full)."""
    out = []
    for group in _grouped(anomalies):
        name, kind = group[0].later.name, group[0].kind
        first = min(group, key=lambda a: a.later.time)
        sources = {a.later.source for a in group}
        seen = listing(
            [f"{sum(a.later.source == 'service' for a in group)} in the service's own log"]
            * ("service" in sources)
            + [f"{sum(a.later.source == 'history' for a in group)} seen by the clients"]
            * ("history" in sources)
        )
        what = (
            f"{article(terms.number)} already granted to another {terms.holder}"
            if kind == "reused"
            else f"a lower {terms.number} than one granted before"
        )
        n = distinct_count(group)
        e, lt, c = first.earlier, first.later, first.classification
        out.append(
            f"{name or 'The ' + terms.thing}: {plural(n, 'grant')} carried {what} ({seen}). "
            f"The first: process {lt.process} got {terms.number} {lt.number} at "
            f"{secs(lt.time)}, after process {e.process} had got {terms.number} {e.number} "
            f"at {secs(e.time)}. Cause: {c.label}: {c.evidence}. Fix: {c.fix}."
        )
    return out


def named_anomalies(
    anomalies: Sequence[Anomaly], terms: Terms, index: Invocations = NO_INDEX
) -> list[Named]:
    """One named anomaly per paragraph of ``anomaly_paragraphs``, in the same order:
    token (epoch) reused or lowered, the first of its group, with the group's size."""
    out = []
    for group in _grouped(anomalies):
        first = min(group, key=lambda a: a.later.time)
        e, lt = first.earlier, first.later
        kind = f"{terms.number}-{first.kind}"
        where = " by the service's own log" if lt.source == "service" else ""
        text = (
            f"process {lt.process} got {terms.number} {lt.number} at {secs(lt.time)}, "
            f"after process {e.process} had got {terms.number} {e.number} at "
            f"{secs(e.time)}{where}. Cause: {first.classification.label}."
        )
        n = distinct_count(group)
        if n > 1:  # each grant once, though both sources saw it
            text += f" {n - 1} more like it."
        involved = tuple(
            Involved(
                role,
                g.process,
                index(g.process, g.invoked) if g.source == "history" else None,
                g.invoked,
                g.time,
                f"{terms.number} {g.number}",
            )
            for role, g in (("earlier grant", e), ("later grant", lt))
        )
        out.append(Named(kind, named(kind, text), involved, lt.name, {"count": n}))
    return out


def _resource_anomaly(x: dict[str, Any], terms: Terms) -> Named:
    w = x["write"]
    text = (
        f"the resource accepted process {w.get('writer')}'s write with {terms.number} "
        f"{w.get('token')} at {secs(w['time'])}, after it had accepted {terms.number} "
        f"{x['highest_accepted']}, though fencing was on."
    )
    involved = (
        Involved(
            "write",
            w.get("writer"),
            None,
            w.get("time"),
            None,
            f"write with {terms.number} {w.get('token')}",
        ),
    )
    return Named(
        "lower-token-accepted", named("lower-token-accepted", text), involved, w.get("resource")
    )


def _resource_paragraph(x: dict[str, Any], terms: Terms) -> str:
    w = x["write"]
    c = CAUSES[RESOURCE_BUG]
    return (
        f"The resource accepted a write by process {w.get('writer')} to "
        f"{w.get('resource')!r} with {terms.number} {w.get('token')} at {secs(w['time'])}, "
        f"after it had accepted {terms.number} {x['highest_accepted']}, though fencing was "
        f"on. Cause: {c.label}. Fix: {c.fix}."
    )


def _anomaly(
    kind: Literal["reused", "lowered"],
    earlier: NumberGrant,
    later: NumberGrant,
    number: str,
    windows: Sequence[FaultWindow],
    durability: DurabilityRule | None,
) -> Anomaly:
    cause = classify_number(number, earlier.time, later.time, windows, durability)
    return Anomaly(kind, earlier, later, cause)
