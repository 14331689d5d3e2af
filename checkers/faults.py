"""Did the faults take effect? A run whose fault did not happen proves nothing about it.

Every nemesis operation completes ``ok`` with its proof, or ``fail`` (or ``info``) when it
could not be shown to take effect. Any such failure makes this checker ``unknown``, and
so the run: never ``valid`` for the wrong reason.
"""

from __future__ import annotations

from typing import Any

from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult


def check_faults(record: RunRecord) -> CheckResult:
    starts = 0
    failed: list[dict[str, Any]] = []
    for pair in record.history.nemesis_ops().pairs():
        c = pair.completion
        if c is None:
            failed.append({"f": pair.invoke.f, "time": pair.invoke.time, "error": "no completion"})
            continue
        if c.f.startswith("start-"):
            starts += 1
        if c.type != "ok":
            failed.append({"f": c.f, "time": c.time, "error": c.error})
    if failed:
        first = failed[0]
        return CheckResult(
            "faults", UNKNOWN,
            f"{len(failed)} fault operation(s) could not be shown to take effect, first "
            f"{first['f']} at t={first['time'] / 1e9:.2f} s: {first['error']}. What the run "
            "shows about that fault is unknown.",
            {"failed": failed, "starts": starts},
        )
    return CheckResult("faults", True,
                       f"{starts} fault(s) applied, each shown to take effect"
                       if starts else "no fault was injected", {"starts": starts})
