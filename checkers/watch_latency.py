"""Watch notification latency: from a write's ok to each watcher's receipt of it.

For every ``change`` notification whose value names a write that completed ok, the
latency is the watcher's receive time minus the write's ok time, on the run's one
monotonic clock. A notification can arrive before the writer heard its ok (the service
notifies as it commits): those are counted (``before_ok``) and enter the quantiles as 0.
Quantiles in milliseconds, overall and per watcher process, plus the deliveries per
second of each watcher (``per_second``: the report draws them over time). Informational:
valid whenever a latency was measured, unknown (not applicable) when none was.
"""

from __future__ import annotations

from typing import Any

from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult
from checkers.stats import quantile
from checkers.watch_streams import read_watch_run

NAME = "watch-latency"
QUANTILES = (0.5, 0.9, 0.99, 1.0)


def _ms(sorted_ns: list[int]) -> dict[str, float]:
    return {f"p{round(q * 100)}": round(quantile(sorted_ns, q) / 1e6, 3) for q in QUANTILES}


def check_record(record: RunRecord) -> CheckResult:
    """Measure the latencies; see the module docstring."""
    run = read_watch_run(record)
    ok_time = {
        (w.key, repr(w.value)): w.ok for ws in run.writes.values() for w in ws if w.ok is not None
    }
    everyone: list[int] = []
    before_ok = 0
    per: dict[str, Any] = {}
    for s in run.streams:
        mine: list[int] = []
        seconds: dict[int, int] = {}
        for n in s.notes:
            if n.get("kind") != "change":
                continue
            t = int(n.get("time", 0))
            seconds[t // 1_000_000_000] = seconds.get(t // 1_000_000_000, 0) + 1
            done = ok_time.get((str(n.get("key")), repr(n.get("value"))))
            if done is None:
                continue
            before_ok += t < done
            mine.append(max(0, t - done))
        everyone.extend(mine)
        per[str(s.process)] = {
            "count": len(mine),
            **(_ms(sorted(mine)) if mine else {}),
            "per_second": sorted(seconds.items()),
        }
    details: dict[str, Any] = {"count": len(everyone), "before_ok": before_ok, "watchers": per}
    if not everyone:
        return CheckResult(NAME, UNKNOWN, "No notification of a completed write.", details, False)
    details.update(_ms(sorted(everyone)))
    q = details
    summary = (
        f"{len(everyone)} notifications: latency from the write's ok p50 {q['p50']} ms, "
        f"p90 {q['p90']} ms, p99 {q['p99']} ms, max {q['p100']} ms"
        + (f" ({before_ok} arrived before the writer's ok)" if before_ok else "")
        + "."
    )
    return CheckResult(NAME, True, summary, details)
