"""Statistics of a run's client operations: latency, throughput, availability under faults.

- **latency**: per operation ``f`` and outcome (``ok``, ``fail``, ``info``), the count and
  the p50, p90, p99 and max of completion minus invocation, in seconds (nearest rank). An
  operation that never returned has no latency; it is counted under ``open``;
- **throughput**: completions per 1 s bucket of the run clock (by completion time), split
  by outcome;
- **availability**: answered / completed client operations, for the operations whose
  interval overlaps each fault window (``checkers.windows``) and for those that overlap
  none. An operation is answered when it ended ``ok`` or with a refusal the service gives
  by design (``checkers.refusals``: a CAS whose value differed, a lock held by another, a
  stale token refused at the resource...): the service was there to say no. A ``fail``
  for lack of the service (refused connection, no leader) and an ``info`` are outages.
  Each row keeps ``ok_ops`` and adds ``refused_ops``, the designed refusals among them.

The verdict is about what the run can prove, not about speed. A fault window in which no
client operation succeeded proves nothing about that fault: every other checker would
pass it vacuously. A run in which every window of a kind of fault asked for was such a
window did not test that fault: it is ``unknown`` unless the user accepts it (test options
``accept_unavailable``: true), which makes it valid with the fact said out loud. A silent
window of a fault that another window of the same kind did test (the last partition
of a run, started as the workload ended) is said, and the verdict stands. A
crash is the exception: a service whose every node serving the clients was killed (the
one-node sim) cannot answer until the restart, and what a crash tests is what the restarted
service still knows, so a crash window (``kill``) is proven by an operation that succeeded after
the window ended. A run where no client operation completed at all is ``unknown`` too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from checkers.record import RunRecord
from checkers.refusals import refused_by_design
from checkers.result import UNKNOWN, CheckResult, Validity
from checkers.windows import CRASHES, FaultWindow, record_windows
from checkers.words import NS, listing, plural, seconds, secs
from core.history import Pair

NAME: Final = "stats"
QUANTILES: Final = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))
BUCKET_NS: Final = NS


def quantile(sorted_values: Sequence[int], q: float) -> int:
    """The nearest-rank ``q`` quantile of non-empty sorted values."""
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def latencies(pairs: Sequence[Pair]) -> dict[str, dict[str, Any]]:
    """``{f: {outcome: {"count", "p50", "p90", "p99", "max"}}}`` in seconds; operations
    that never returned are counted under ``open`` without latencies."""
    by: dict[str, dict[str, list[int]]] = {}
    opened: dict[str, int] = {}
    for p in pairs:
        if p.completion is None:
            opened[p.invoke.f] = opened.get(p.invoke.f, 0) + 1
            continue
        by.setdefault(p.invoke.f, {}).setdefault(p.completion.type, []).append(
            p.completion.time - p.invoke.time
        )
    out: dict[str, dict[str, Any]] = {}
    for f in sorted({*by, *opened}):
        row: dict[str, Any] = {}
        for outcome, values in sorted(by.get(f, {}).items()):
            xs = sorted(values)
            row[outcome] = {
                "count": len(xs),
                **{k: seconds(quantile(xs, q)) for k, q in QUANTILES},
                "max": seconds(xs[-1]),
            }
        if f in opened:
            row["open"] = {"count": opened[f]}
        out[f] = row
    return out


def throughput(pairs: Sequence[Pair], bucket_ns: int = BUCKET_NS) -> list[dict[str, Any]]:
    """Completions per bucket: ``[{"t": start s, "ok", "fail", "info", "ops_per_s"}]``,
    every bucket from the run's start to its last completion (empty ones included)."""
    done = [p.completion for p in pairs if p.completion is not None]
    if not done:
        return []
    last = max(c.time for c in done) // bucket_ns
    counts = [{"ok": 0, "fail": 0, "info": 0} for _ in range(last + 1)]
    for c in done:
        counts[max(0, c.time // bucket_ns)][c.type] += 1
    return [
        {"t": seconds(i * bucket_ns), **n, "ops_per_s": round(sum(n.values()) * NS / bucket_ns, 3)}
        for i, n in enumerate(counts)
    ]


def availability(
    pairs: Sequence[Pair], windows: Sequence[FaultWindow], run_end: int
) -> dict[str, Any]:
    """``{"windows": [window + ok/refused/completed/availability], "outside": {...}}``."""
    rows = []
    inside: set[int] = set()
    for w in windows:
        end = w.end if w.end is not None else run_end
        hits = [
            i
            for i, p in enumerate(pairs)
            if p.completion is not None and p.invoke.time <= end and p.completion.time >= w.start
        ]
        inside.update(hits)
        rows.append({**w.to_dict(), **_ratio([pairs[i] for i in hits])})
    outside = [p for i, p in enumerate(pairs) if p.completion is not None and i not in inside]
    return {"windows": rows, "outside": _ratio(outside)}


def check_record(record: RunRecord) -> CheckResult:
    """Latency, throughput and availability of a run; unknown when a fault proved nothing
    (unless the run's options say ``accept_unavailable``, recorded)."""
    history = record.history
    accept_unavailable = bool(record.option("accept_unavailable"))
    windows = [w for w in record_windows(record) if w.ok]
    pairs = history.client_ops().pairs()
    run_end = history[-1].time if len(history) else 0
    avail = availability(pairs, windows, run_end)
    proven = [
        r["ok_ops"] > 0 or _served_after(w, pairs)
        for r, w in zip(avail["windows"], windows, strict=True)
    ]
    silent = [r for r, p in zip(avail["windows"], proven, strict=True) if not p]
    tested = {r["kind"] for r, p in zip(avail["windows"], proven, strict=True) if p}
    unproven = [r for r in silent if r["kind"] not in tested]
    completed = sum(1 for p in pairs if p.completion is not None)
    ok = sum(1 for p in pairs if p.type == "ok")
    refused = sum(1 for p in pairs if refused_by_design(p.completion))
    parts = [f"{plural(completed, 'client operation')} completed, {ok} ok"]
    if refused:
        parts[0] += f", {refused} refused by design (answered)"
    for r in avail["windows"]:
        until = "the end" if r["end"] is None else secs(r["end"], 1)
        parts.append(
            f"{r['kind']} {secs(r['start'], 1)} to {until}: {_pct(r['availability'])} available"
        )
    parts.append(f"outside faults: {_pct(avail['outside']['availability'])} available")
    head = "; ".join(parts) + "."
    valid: Validity = True
    if completed == 0:
        valid = UNKNOWN
        head += " No client operation completed: this run proves nothing."
    else:
        head += _silent_but_tested([r for r in silent if r["kind"] in tested])
    if completed and unproven:
        which = listing(f"{r['kind']} from {secs(r['start'])}" for r in unproven)
        those = "that fault" if len(unproven) == 1 else "those faults"
        fact = (
            f" No operation succeeded during {plural(len(unproven), 'fault window')} "
            f"({which}), and no other window of {those}: the run proves nothing about "
            f"{those}"
        )
        if accept_unavailable:
            head += fact + ", which the test accepts (accept_unavailable)."
        else:
            valid = UNKNOWN
            head += (
                fact + ". Pass --accept-unavailable (a suite: accept_unavailable = true)"
                " to accept such a run."
            )
    return CheckResult(
        NAME,
        valid,
        head,
        {
            "latency": latencies(pairs),
            "throughput": throughput(pairs),
            "availability": avail,
            "unproven_faults": [{k: r[k] for k in ("kind", "start", "end")} for r in unproven],
            "silent_windows": [{k: r[k] for k in ("kind", "start", "end")} for r in silent],
            "accept_unavailable": accept_unavailable,
        },
    )


def _silent_but_tested(rows: list[dict[str, Any]]) -> str:
    """`` No operation succeeded during partition from 23.0 s; other windows of that
    fault tested it.`` ('' for none)."""
    if not rows:
        return ""
    which = listing(f"{r['kind']} from {secs(r['start'])}" for r in rows)
    return (
        f" No operation succeeded during {plural(len(rows), 'fault window')} ({which}); "
        "other windows of the same fault tested it."
    )


def _served_after(window: FaultWindow, pairs: Sequence[Pair]) -> bool:
    """Whether ``window`` is a crash after which the restarted service answered."""
    end = window.end
    return (
        CRASHES in window.effects
        and end is not None
        and any(p.type == "ok" and p.invoke.time > end for p in pairs)
    )


def _ratio(pairs: Sequence[Pair]) -> dict[str, Any]:
    """The ok, refused-by-design and completed operations among ``pairs``, and the
    fraction answered (ok or refused by design)."""
    ok = sum(1 for p in pairs if p.type == "ok")
    refused = sum(1 for p in pairs if refused_by_design(p.completion))
    return {
        "ok_ops": ok,
        "refused_ops": refused,
        "completed_ops": len(pairs),
        "availability": round((ok + refused) / len(pairs), 6) if pairs else None,
    }


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"
