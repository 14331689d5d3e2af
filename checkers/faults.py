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
from checkers.windows import FaultFacts


def requested_faults(record: RunRecord) -> list[str]:
    """The faults the run was asked for, from test.json (none for a bare history)."""
    asked = record.options.get("nemesis") or []
    return [str(n) for n in asked if n != "none"] if isinstance(asked, list) else []


def check_faults(record: RunRecord) -> CheckResult:
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
    return CheckResult(
        "faults",
        True,
        f"{starts} fault(s) applied, each shown to take effect"
        if starts
        else "no fault was asked for or injected",
        {"starts": starts},
    )
