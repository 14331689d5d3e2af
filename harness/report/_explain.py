"""The counterexample sections: why a checker said what it said, in words and tables.

Each starts with its named anomalies (``checkers.anomalies``: the kind and the sentence).
Linearizability: the explanation sentences, the minimal window of operations around the
contradiction (the one that cannot be linearized marked), the longest partial
linearizations with the state each leaves, and the longest one step by step
(``_linearization``). Mutual exclusion: each violation's summary
paragraph, every handover after a lost lease (danger window and handover delay), and the
stale writes fencing rejected.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from typing import Any

from checkers.anomalies import KEY
from core.html import esc, table, tag
from core.short_text import DASH, seconds, secs
from harness.report._linearization import steps_table

LINEARIZABILITY = "linearizability"
_OP_HEADERS = ("#", "process", "operation", "outcome", "invoked", "completed")


def explanations(results: dict[str, Any] | None, shown: Set[str] = frozenset()) -> str:
    """Every checker's explanation section that has something to show. A paragraph whose
    text is in ``shown`` (the banner's sentences) is not said twice: a named anomaly keeps
    its badge and operations, a violation or summary already read is left out."""
    checkers = (results or {}).get("checkers") or {}
    parts = []
    explained = [n for n, r in checkers.items() if isinstance(r.get("counterexample"), dict)]
    for name in sorted(explained, key=lambda n: n != LINEARIZABILITY):
        r = checkers[name]
        parts.append(linearizability_section(r["counterexample"], r.get(KEY) or (), shown, name, r))
    mutex = checkers.get("mutex")
    if mutex:
        parts.append(mutex_section(mutex, shown))
    for name, r in checkers.items():
        if name not in (*explained, "mutex") and r.get(KEY):
            body = "".join(named_anomaly(a, shown) for a in r[KEY])
            body += "".join(
                tag("p", esc(v), class_="explanation violation")
                for v in r.get("violations") or ()
                if isinstance(v, str) and v not in shown  # a record: its anomaly's told
            )
            parts.append(
                tag(
                    "section",
                    tag("h2", esc(f"Violations: {name}")) + body,
                    class_="explain",
                    id=f"violations-{name}",
                )
            )
    return "".join(parts)


def linearizability_section(
    cx: dict[str, Any],
    named: Sequence[dict[str, Any]] = (),
    shown: Set[str] = frozenset(),
    checker: str = LINEARIZABILITY,
    result: dict[str, Any] | None = None,
) -> str:
    """The named anomaly, then the full chain: sentences, the window of operations and
    the partial linearizations. A checker other than ``linearizability`` that checks
    with the same search (the owner-aware mutex) gets its own section, its violation
    paragraphs first."""
    at = timer(cx.get("time_unit", "ns"))
    culprit = (cx.get("op") or {}).get("index")
    window = cx.get("window") or {}
    rows = [_op_row(o, at, o.get("index") == culprit) for o in window.get("ops", ())]
    body = "".join(named_anomaly(a, shown) for a in named)
    if checker != LINEARIZABILITY:
        body += "".join(
            tag("p", esc(v), class_="explanation violation")
            for v in (result or {}).get("violations") or ()
            if v not in shown
        )
    body += "".join(
        tag("p", esc(s), class_="explanation") for s in cx.get("sentences", ()) if s not in shown
    )
    body += tag(
        "h3",
        esc(f"The operations around it ({at(window.get('start'))} to {at(window.get('end'))})"),
    )
    body += table(_OP_HEADERS, rows, "ops")
    before = cx.get("state_before_text")
    if before is not None:
        body += tag(
            "p",
            "Before it, the longest legal order leaves the state " + tag("code", esc(before)) + ".",
        )
    lins = cx.get("linearizations") or []
    if lins:
        body += tag("h3", "Partial linearizations: the longest legal orders found")
        # the longest step by step when it can be (the same ops in a line would say it twice)
        body += steps_table(cx, at) or _linearization(1, lins[0], at)
        body += "".join(_linearization(i, lz, at) for i, lz in enumerate(lins[1:], 2))
    title = "Linearizability counterexample"
    if checker != LINEARIZABILITY:
        title += f": {checker}"
    if cx.get("partition") is not None:
        title += f" (key {cx['partition']})"
    anchor = "counterexample" if checker == LINEARIZABILITY else f"counterexample-{checker}"
    return tag("section", tag("h2", esc(title)) + body, class_="explain", id=anchor)


def named_anomaly(a: dict[str, Any], shown: Set[str] = frozenset()) -> str:
    """One named anomaly: its kind as a badge, its sentence (unless ``shown`` already
    has it: then a pointer to the banner), its operations."""
    ops = ", ".join(f"#{i}" for i in a.get("ops") or ())
    where = tag("span", esc(f" (operations {ops})"), class_="muted") if ops else ""
    sentence = str(a.get("sentence", ""))
    said = tag("span", "as said at the top", class_="muted") if sentence in shown else esc(sentence)
    return tag(
        "p",
        tag("span", esc(a.get("label", a.get("kind", ""))), class_="kind") + " " + said + where,
        class_="named-anomaly",
        data_kind=str(a.get("kind", "")),
    )


def mutex_section(r: dict[str, Any], shown: Set[str] = frozenset()) -> str:
    """Violations, handovers and stale writes of a mutual-exclusion result."""
    body = "".join(named_anomaly(a, shown) for a in r.get(KEY) or ())
    for v in r.get("violations") or ():
        if v not in shown:
            body += tag("p", esc(v), class_="explanation violation")
    handovers = r.get("handovers") or []
    if handovers:
        body += tag("h3", "Handovers after a lost lease")
        body += table(
            (
                "holder",
                "ended by",
                "lease expiry",
                "last write",
                "danger window",
                "next holder",
                "acquired",
                "handover delay",
            ),
            [_handover_row(h) for h in handovers],
            "handovers",
        )
    rejected = r.get("stale_rejected") or []
    if rejected:
        body += tag("h3", esc(f"Stale writes fencing rejected ({len(rejected)})"))
        body += "".join(
            tag("p", esc(s.get("explanation", "")), class_="explanation ok") for s in rejected
        )
    if not (r.get(KEY) or r.get("violations") or handovers or rejected):
        body = tag("p", "No overlap of holders, no stale write, no handover after a lost lease.")
    head = str(r.get("summary") or "").split("\n\n", 1)[0]
    lead = "" if head in shown else tag("p", esc(head))
    return tag(
        "section",
        tag("h2", "Mutual exclusion") + lead + body,
        class_="explain",
        id="mutex",
    )


def _linearization(n: int, lz: dict[str, Any], at: Any) -> str:
    length = lz.get("length", 0)
    tail = lz.get("tail") or []
    shown = f"the last {len(tail)} of {length}" if len(tail) < length else f"all {length}"
    ops = " → ".join(
        f"{tag('span', esc('p' + str(o.get('process'))), class_='proc')} "
        f"{tag('code', esc(o.get('call', o.get('f'))))}"
        for o in tail
    )
    after = lz.get("state_after_text", lz.get("state_after"))
    return tag(
        "div",
        tag(
            "div",
            esc(f"#{n}: {shown} operations, leaving the state ") + tag("code", esc(after)),
            class_="lin-head",
        )
        + tag("div", ops, class_="lin-ops"),
        class_="linearization",
    )


def _op_row(o: dict[str, Any], at: Any, culprit: bool) -> list[str]:
    mark = tag("span", "✗ cannot be linearized", class_="culprit") if culprit else ""
    outcome = o.get("type", "")
    if o.get("certain") is False:
        outcome += " (may or may not have happened)"
    return [
        esc(o.get("index")),
        esc(f"p{o.get('process')}"),
        tag("code", esc(o.get("call", o.get("f")))) + " " + mark,
        tag("span", esc(outcome), class_=f"outcome {o.get('type', '')}"),
        esc(at(o.get("invoke_time"))),
        esc(at(o.get("complete_time"))),
    ]


def _handover_row(h: dict[str, Any]) -> list[str]:
    danger = h.get("danger_window_s")
    expiry = seconds(h.get("lease_expiry"))
    rule = h.get("expiry_rule")
    if isinstance(rule, dict):  # the service may end it later, by its documented rule
        expiry += f" to {seconds(h.get('lease_expiry_latest'))} ({rule.get('target')}'s rule)"
    return [
        esc(f"p{h.get('process')} (token {h.get('token')})"),
        esc(h.get("ended_by", "")),
        esc(expiry),
        esc(seconds(h.get("last_write_arrival"))),
        tag("b" if danger else "span", esc(secs(danger))),
        esc(f"p{h.get('next_process')} (token {h.get('next_token')})"),
        esc(seconds(h.get("next_acquired"))),
        esc(secs(h.get("handover_delay_s"))),
    ]


def timer(unit: str) -> Any:
    """Times in words: seconds, or event numbers for order-only history formats."""
    if unit == "event":
        return lambda t: DASH if t is None else f"event {t}"
    return seconds
