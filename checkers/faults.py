"""Did the faults take effect? A run whose fault did not happen proves nothing about it.

Every nemesis operation completes ``ok`` with its proof, or ``fail`` (or ``info``) when it
could not be shown to take effect. Any such failure makes this checker ``unknown``, and
so the run: never ``valid`` for the wrong reason. So does a fault that was asked for
(``options.nemesis`` in test.json) and never started with its proof: a run under
``--nemesis kill`` that never killed anything tested nothing about kills. A fault ``X``
is started by the op test.json names for it (``faults``), else ``start-X`` (the naming of
every nemesis).
"""

from __future__ import annotations

from typing import Any

from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult
from checkers.windows import FaultFacts, FaultWindow, record_windows


def requested_faults(record: RunRecord) -> list[str]:
    """The faults the run was asked for, from test.json (none for a bare history)."""
    asked = record.options.get("nemesis") or []
    return [str(n) for n in asked if n != "none"] if isinstance(asked, list) else []


def check_record(record: RunRecord) -> CheckResult:
    """Unknown when a fault could not be shown to take effect or never started."""
    starts = 0
    facts = FaultFacts(record.test.get("faults"))
    proven: set[str] = set()
    failed: list[dict[str, Any]] = []
    for pair in record.history.nemesis_ops().pairs():
        c = pair.completion
        if c is None:
            failed.append({"f": pair.invoke.f, "time": pair.invoke.time, "error": "no completion"})
            continue
        fault = facts.started_by(c.f)
        if fault is not None:
            starts += 1
            if c.type == "ok":
                proven.add(fault)
        if c.type != "ok":
            failed.append({"f": c.f, "time": c.time, "error": c.error})
    if failed:
        first = failed[0]
        return CheckResult(
            "faults",
            UNKNOWN,
            f"{len(failed)} fault operation(s) could not be shown to take effect, first "
            f"{first['f']} at t={first['time'] / 1e9:.2f} s: {first['error']}. What the run "
            "shows about that fault is unknown.",
            {"failed": failed, "starts": starts},
        )
    missing = [f for f in requested_faults(record) if f not in proven]
    if missing:
        return CheckResult(
            "faults",
            UNKNOWN,
            f"the {', '.join(missing)} fault was asked for but never injected: the run "
            "shows nothing about it (give a longer --time-limit or a shorter "
            "--nemesis-interval).",
            {"never_injected": missing, "starts": starts},
        )
    return _as_applied(record, starts)


def _as_applied(record: RunRecord, starts: int) -> CheckResult:
    """Every fault took effect: say for how long each was applied, and whether each
    fault asked for got the duration it was asked for at least once. A fault whose every
    window was cut short (by the end of the run, an interruption) was never tested as
    asked: unknown."""
    if not starts:
        return CheckResult("faults", True, "no fault was asked for or injected", {"starts": 0})
    history = record.history
    run_end = history[-1].time if len(history) else 0
    windows = [w for w in record_windows(record) if w.ok]
    short = [w for w in windows if w.cut_short(run_end)]
    applied = [
        {
            "kind": w.kind,
            "start_s": round(w.start / 1e9, 3),
            "lasted_s": round(w.lasted_s(run_end), 3),
            "asked_s": w.asked_s,
            "cut_short": w.cut_short(run_end),
        }
        for w in windows
    ]
    details = {"starts": starts, "applied": applied}
    never_whole = [
        kind
        for kind in dict.fromkeys(w.kind for w in windows)
        if all(w.cut_short(run_end) for w in windows if w.kind == kind)
    ]
    if never_whole:
        longest = {k: max(w.lasted_s(run_end) for w in windows if w.kind == k) for k in never_whole}
        said = "; ".join(
            f"{k}: longest {secs_of(longest[k])} of {secs_of(_asked(windows, k))} asked"
            for k in never_whole
        )
        return CheckResult(
            "faults",
            UNKNOWN,
            f"every window of {', '.join(never_whole)} was cut short ({said}): the run never "
            "held that fault as long as it asked, so it shows nothing about it at that "
            "length (give a longer --time-limit, or ask for a shorter fault).",
            {**details, "never_whole": never_whole},
        )
    head = f"{starts} fault(s) applied, each shown to take effect: " + "; ".join(
        _applied_words(w, run_end) for w in windows
    )
    if short:
        head += (
            f". {len(short)} of {len(windows)} cut short (applied for less than half of what "
            "was asked, by a heal or the end of the run)"
        )
    return CheckResult("faults", True, head, details)


def _asked(windows: list[FaultWindow], kind: str) -> float:
    return max(w.asked_s or 0.0 for w in windows if w.kind == kind)


def secs_of(s: float) -> str:
    return f"{s:.1f} s"


def _applied_words(w: FaultWindow, run_end: int) -> str:
    """``partition 12.3-22.4 s (10.1 s)``, with ``cut short: 2.1 of 10 s asked``."""
    end = w.end if w.end is not None else run_end
    words = f"{w.kind} {w.start / 1e9:.1f}-{end / 1e9:.1f} s"
    lasted = secs_of(w.lasted_s(run_end))
    if w.asked_s is None:
        return f"{words} ({lasted})"
    asked = secs_of(w.asked_s)
    if w.cut_short(run_end):
        return f"{words} (cut short: {lasted} of {asked} asked)"
    return f"{words} ({lasted} of {asked} asked)"
