"""The herd effect, measured: what each handoff of a lock cost its waiters.

Reads the history (``acquire`` and ``release`` operations) and the client events the herd
workload's waiters record (``workloads.herd``): ``herd-notified``, one per notification
delivered to a client, ``herd-session-event``, one per watch the client's own connection
fired, ``herd-failed``, one per attempt that did not give the lock, and ``herd-acquire``,
the sums of one acquire (requests sent). A *handoff* is a grant that followed another
holding: every ok acquire but the first. Per handoff, counted up to the last grant:

- **notifications** delivered to clients: about N - 1 when every waiter watches the lock
  (each release wakes them all), about 1 when each watches its predecessor. The **session
  events** are counted apart, in all: a ZooKeeper client fires every watch of its
  connection when its server dies, which says nothing about the lock, and folded into the
  notifications they made a server kill look like a herd;
- **failed attempts**: tries and checks that did not give the lock;
- **requests** the waiters sent while acquiring, and their rate over the run;
- **handoff latency**: from the invocation of a release to the completion of the next
  grant (quantiles; a holding that ended without a release, a lost lease, starts none).

Where the target reads the servers' own request counters (``checkers.herd_counters``),
our count of requests, by method, is held against theirs.

This is a measurement, not a judgement of the service: the run's correctness is the
mutual exclusion and fencing checkers'. It is valid when handoffs were measured, unknown
when the run had none to measure (fewer than two waiters, or no lock changed hands) or
when the servers counted far more requests than our waiters say they sent (our count is
then not the truth).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, Final

from checkers.herd_counters import NOTIFICATIONS, CrossCheck, cross_check, describe
from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult
from checkers.stats import quantile
from checkers.words import NS, plural

NAME: Final = "herd"
NOTIFIED: Final = "herd-notified"
"""The client event of one notification delivered to a waiter."""
SESSION_EVENT: Final = "herd-session-event"
"""The client event of one watch fired by the waiter's own connection (its server lost,
its session moved or expired), not by a change of the lock."""
FAILED: Final = "herd-failed"
"""The client event of one attempt or check that did not give the lock."""
ACQUIRE: Final = "herd-acquire"
"""The client event that sums up one acquire (granted or not)."""
LATENCY_QUANTILES: Final = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))


@dataclass(frozen=True, slots=True)
class HerdMetrics:
    """One run's herd numbers (``details`` of the checker's result)."""

    recipe: str
    waiters: int
    handoffs: int
    notifications: int
    failed_attempts: int
    requests: int
    duration_s: float
    notifications_by_process: dict[str, int]
    latencies_ns: tuple[int, ...]
    after_last_grant: dict[str, int]
    """What came after the last grant, left out of the counts per handoff."""
    session_events: int = 0
    """Watches the waiters' own connections fired (in all: no handoff caused them)."""
    session_events_by_process: dict[str, int] = field(default_factory=dict)
    requests_by_method: dict[str, int] = field(default_factory=dict)
    """Every request the waiters sent while acquiring, by method (the run's whole)."""

    @property
    def notifications_in_all(self) -> int:
        """Every notification the waiters got, those after the last grant too."""
        return self.notifications + self.after_last_grant.get("notifications", 0)

    def per_handoff(self, count: int) -> float | None:
        return count / self.handoffs if self.handoffs else None

    def to_dict(self) -> dict[str, Any]:
        lat = sorted(self.latencies_ns)
        quantiles = {q: quantile(lat, x) / NS for q, x in LATENCY_QUANTILES} if lat else {}
        return {
            "recipe": self.recipe,
            "waiters": self.waiters,
            "handoffs": self.handoffs,
            "notifications": self.notifications,
            "notifications_per_handoff": self.per_handoff(self.notifications),
            "failed_attempts": self.failed_attempts,
            "failed_attempts_per_handoff": self.per_handoff(self.failed_attempts),
            "requests": self.requests,
            "requests_per_handoff": self.per_handoff(self.requests),
            "requests_per_s": self.requests / self.duration_s if self.duration_s > 0 else None,
            "notifications_by_process": self.notifications_by_process,
            "session_events": self.session_events,
            "session_events_by_process": self.session_events_by_process,
            "handoff_latency_s": {**quantiles, "max": lat[-1] / NS} if lat else None,
            "after_last_grant": self.after_last_grant,
            "requests_by_method": self.requests_by_method,
        }


def grant_times(record: RunRecord) -> list[int]:
    """The completion times of the ok acquires, in order."""
    return sorted(
        p.completion.time
        for p in record.history.client_ops().pairs()
        if p.invoke.f == "acquire" and p.completion is not None and p.completion.type == "ok"
    )


def handoff_latencies(record: RunRecord) -> list[int]:
    """Nanoseconds from each release's invocation to the next grant's completion."""
    releases = sorted(
        p.invoke.time
        for p in record.history.client_ops().pairs()
        if p.invoke.f == "release" and p.completion is not None
    )
    out = []
    for before, grant in pairwise(grant_times(record)):
        between = [r for r in releases if before < r <= grant]
        if between:
            out.append(grant - between[-1])
    return out


def herd_metrics(record: RunRecord) -> HerdMetrics:
    """The numbers of one run of the herd workload. Notifications and failed attempts
    count up to the last grant: those after it lead to no handoff (at the end of a run the
    last holder keeps the lock, and waiters give up one by one; in a queue each one leaving
    notifies its successor). Runs recorded before failed attempts were events count them
    from the acquires' sums, the end's included."""
    grants = grant_times(record)
    last = grants[-1] if grants else -1

    def before_last(kind: str) -> tuple[list[dict[str, Any]], int]:
        events = [e for e in record.events if e.get("event") == kind]
        kept = [e for e in events if isinstance(e.get("time"), int) and e["time"] <= last]
        return kept, len(events) - len(kept)

    notified, late_notified = before_last(NOTIFIED)
    failed, late_failed = before_last(FAILED)
    sessions = [e for e in record.events if e.get("event") == SESSION_EVENT]
    sums = [e for e in record.events if e.get("event") == ACQUIRE]
    if not failed and not late_failed:
        failed_attempts = sum(int(e.get("failed_attempts", 0)) for e in sums)
    else:
        failed_attempts = len(failed)
    times = [op.time for op in record.history.client_ops()]
    return HerdMetrics(
        recipe=str(record.option("recipe", "?")),
        waiters=int(record.option("concurrency", 0)),
        handoffs=max(0, len(grants) - 1),
        notifications=len(notified),
        failed_attempts=failed_attempts,
        requests=sum(int(e.get("requests", 0)) for e in sums),
        duration_s=(max(times) - min(times)) / NS if times else 0.0,
        notifications_by_process=_by_process(notified),
        latencies_ns=tuple(handoff_latencies(record)),
        after_last_grant={"notifications": late_notified, "failed_attempts": late_failed},
        session_events=len(sessions),
        session_events_by_process=_by_process(sessions),
        requests_by_method=_by_method(sums),
    )


def _by_method(sums: list[dict[str, Any]]) -> dict[str, int]:
    """The acquires' requests summed by method."""
    out: Counter[str] = Counter()
    for e in sums:
        by = e.get("requests_by_method")
        if isinstance(by, dict):
            out.update({str(m): int(n) for m, n in by.items() if isinstance(n, int)})
    return dict(sorted(out.items()))


def _by_process(events: list[dict[str, Any]]) -> dict[str, int]:
    """How many of ``events`` each process recorded, by process."""
    return dict(sorted(Counter(str(e.get("process")) for e in events).items()))


def check_record(record: RunRecord) -> CheckResult:
    """The herd numbers of a run; unknown when it had no handoff to measure, or when the
    servers' own counters show far more requests than our waiters counted."""
    m = herd_metrics(record)
    details = m.to_dict()
    ours = {**m.requests_by_method, NOTIFICATIONS: m.notifications_in_all}
    counted = cross_check(record.events, ours)
    said = describe(counted)
    if counted is not None:
        details["server_counters"] = (
            counted.to_dict() if isinstance(counted, CrossCheck) else counted
        )
    if m.waiters < 2:
        why = f"{plural(m.waiters, 'waiter')}: no herd to measure (use --concurrency 2 or more)"
        return CheckResult(NAME, UNKNOWN, why, details)
    if not m.handoffs:
        return CheckResult(NAME, UNKNOWN, "no handoff: the lock never changed hands", details)
    text = f"{summary(m, details)} {said}" if said else summary(m, details)
    if isinstance(counted, CrossCheck) and counted.far:
        return CheckResult(NAME, UNKNOWN, text, details)
    return CheckResult(NAME, True, text, details)


def summary(m: HerdMetrics, details: dict[str, Any]) -> str:
    """``42 handoffs among 10 waiters (queue recipe): 1.02 notifications per handoff ...``."""
    text = (
        f"{plural(m.handoffs, 'handoff')} among {m.waiters} waiters ({m.recipe} recipe): "
        f"{details['notifications_per_handoff']:.2f} notifications per handoff "
        f"({m.notifications} in all), {details['failed_attempts_per_handoff']:.2f} failed "
        f"attempts and {details['requests_per_handoff']:.1f} requests per handoff"
    )
    if details["requests_per_s"] is not None:
        text += f" ({details['requests_per_s']:.0f} requests/s)"
    if m.session_events:
        text += (
            f"; apart from the notifications, "
            f"{plural(m.session_events, 'watch fired', 'watches fired')} by the waiters' own "
            f"connections (a server lost, a session moved or "
            f"expired: no handoff's doing, {plural(len(m.session_events_by_process), 'waiter')})"
        )
    latency = details["handoff_latency_s"]
    if latency:
        text += (
            f"; handoff latency p50 {latency['p50'] * 1000:.0f} ms, "
            f"p99 {latency['p99'] * 1000:.0f} ms, max {latency['max'] * 1000:.0f} ms"
        )
    return text + "."
