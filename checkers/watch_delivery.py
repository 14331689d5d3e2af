"""Watch delivery: did every watcher learn every committed change it should have, once, in
order, and settle on each key's last write?

What a watcher owes depends on what its mechanism promises (recorded by the client in its
``subscribed`` notification, ``workloads.watch``):

- ``every-change`` (etcd's watch from a revision, the sim's): each committed change after
  the watcher's first snapshot is delivered once, in revision order. A change never
  delivered is a *gap*, one delivered twice a *duplicate*, one delivered after a later
  one *out of order*: all violations. Changes the service compacted away while the watcher
  was behind are excused when the watcher then re-read every key and re-subscribed (the
  compaction was *handled*); a compaction it did not follow with a re-read is a violation.
- ``latest`` (ZooKeeper's one-shot watches, Consul's blocking queries): a notification
  says the key changed; changes in between are coalesced, so *missed* changes are counted,
  not blamed. Duplicates and going back are still violations.

At the end, every watcher still reporting once the writes are over must settle on each
key's last committed write. A stale final value is a violation for a watcher that
re-reads (or is promised every change); for one that trusts the notification's value
without re-reading (``--watch-mode payload``) it is the expected consequence, shown with
its counts. Changes that completed within ``SETTLE_NS`` of a watcher's last report are
not owed yet. No watcher, no committed write, or no watcher left at the end: unknown.

A change missed, repeated or reordered, or a key's last change a watcher that re-reads
never settled on, is looked up in the service's own record of the keys, read back at the
end of the run where the target reads one (``checkers.watch_record``: etcd's history with
its revisions and compaction revision; ZooKeeper's and Consul's last change of each key)
before anyone is blamed: when the service holds it once, the cause named is our watcher
client, not the service.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult
from checkers.shrink_ops import Violation, shrink_result
from checkers.watch_record import Finding, ServiceRecord, blame, cause_of, read_record
from checkers.watch_streams import (
    EVERY_CHANGE,
    SETTLE_NS,
    Stream,
    WatchRun,
    Write,
    possible_last,
    read_watch_run,
)
from checkers.words import plural
from core.ops import Op

NAME = "watch-delivery"
NOT_BLAMED = (
    "Not blamed on the service: the service's own revisions are not read back, so the "
    "watcher's client (ours: its resume, a timed-out or frozen watcher) is not ruled out; "
    "file a bug only after reproducing it with the service's log or revisions."
)


@dataclass
class Watcher:
    """What one watcher process got, counted: see the module docstring."""

    process: Any
    delivery: str
    rereads: bool
    mechanism: str
    delivered: int = 0
    missed: int = 0
    """Changes it should have had and never got (gaps, for every-change delivery)."""
    excused: int = 0
    """Changes compacted away while it was behind (or skipped by a re-subscription)."""
    duplicates: int = 0
    out_of_order: int = 0
    compactions: int = 0
    handled: int = 0
    resumes: int = 0
    errors: int = 0
    stale_final: dict[str, list[Any]] = field(default_factory=dict)
    """Key -> [the value it settled on, the last write's value(s)]."""
    settled: bool = False
    """Whether it still reported once the writes were over (its final values count)."""
    examples: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    """The changes it missed (every-change delivery), got twice or out of order."""

    def to_dict(self, record: ServiceRecord | str | None = None) -> dict[str, Any]:
        """As JSON, each finding with what the service's record says of it (``cause``)."""
        d = dict(self.__dict__)
        d["process"] = self.process
        d["findings"] = [{**asdict(f), "cause": cause_of(record, f)} for f in self.findings]
        return d


def _revision_of(writes: list[Write]) -> dict[Any, int | None]:
    return {repr(w.value): w.revision for w in writes}


def follow_stream(s: Stream, run: WatchRun) -> Watcher:
    """Replay one watcher's notifications against the committed writes."""
    w = Watcher(s.process, s.delivery, s.rereads, s.mechanism)
    pos: dict[str, int | None] = {}
    start: dict[str, tuple[int | None, int]] = {}
    got: dict[str, set[str]] = {}
    excused: dict[str, list[tuple[int, int]]] = {}
    final: dict[str, Any] = {}
    pending: set[str] = set()
    for n in s.notes:
        kind, key = n.get("kind"), str(n.get("key"))
        if kind == "compacted":
            w.compactions += 1
            pending = set(pos)
        elif kind in ("resumed", "error"):
            w.resumes += kind == "resumed"
            w.errors += kind == "error"
        elif kind in ("snapshot", "change"):
            rev, before, value = n.get("revision"), pos.get(key), repr(n.get("value"))
            if kind == "snapshot":
                if key not in start:
                    start[key] = (rev, int(n.get("time", 0)))
                elif before is not None and rev is not None and rev > before:
                    excused.setdefault(key, []).append((before, rev))
                if key in pending:
                    pending.discard(key)
                    w.handled += not pending
            elif value in got.get(key, set()):
                w.duplicates += 1
                w.examples.append(f"key {key}: {n.get('value')!r} (revision {rev}) delivered again")
                w.findings.append(Finding("duplicate", key, n.get("value"), rev))
            elif before is not None and rev is not None and rev < before:
                w.out_of_order += 1
                w.examples.append(f"key {key}: revision {rev} delivered after {before}")
                w.findings.append(Finding("out-of-order", key, n.get("value"), rev))
            else:
                w.delivered += 1
            got.setdefault(key, set()).add(value)
            final[key] = n.get("value")
            if rev is not None:
                pos[key] = rev if before is None else max(before, rev)
    owed_until = s.last_report - SETTLE_NS
    for key, writes in run.writes.items():
        if key not in start:
            continue
        rev0, t0 = start[key]
        for wr in writes:
            after = (
                wr.revision > rev0
                if wr.revision is not None and rev0 is not None
                else wr.invoked > t0
            )
            done = wr.ok if wr.ok is not None else wr.invoked
            if not after or done > owed_until or repr(wr.value) in got.get(key, set()):
                continue
            if any(lo < (wr.revision or -1) <= hi for lo, hi in excused.get(key, [])):
                w.excused += 1
                continue
            w.missed += 1
            if w.delivery == EVERY_CHANGE:
                w.findings.append(Finding("missed", key, wr.value, wr.revision))
            if w.delivery == EVERY_CHANGE and len(w.examples) < 5:
                w.examples.append(
                    f"key {key}: change to {wr.value!r} (revision {wr.revision}) never delivered"
                )
    ends = run.writes_end
    w.settled = ends is not None and s.last_report >= ends + SETTLE_NS
    if w.settled:
        for key, writes in run.writes.items():
            last = possible_last(writes)
            if key in final and final[key] not in last:
                w.stale_final[key] = [final[key], last]
                w.examples.append(f"key {key}: settled on {final[key]!r}, not {last[-1]!r}")
                if (w.delivery == EVERY_CHANGE or w.rereads) and len(last) == 1:
                    revision = next((x.revision for x in writes if x.value == last[-1]), None)
                    w.findings.append(Finding("stale-final", key, last[-1], revision))
    return w


def _violates(w: Watcher) -> bool:
    strict = w.delivery == EVERY_CHANGE
    stale = bool(w.stale_final) and (strict or w.rereads)
    gaps = strict and w.missed > 0
    unhandled = w.compactions > w.handled
    return gaps or stale or unhandled or w.duplicates > 0 or w.out_of_order > 0


LABELS = {
    "missed": "change never delivered",
    "duplicate": "change delivered twice",
    "out-of-order": "change delivered out of order",
    "stale-final": "last change never settled on",
}
"""Each finding's kind in the words a report calls it by."""


def check_record(record: RunRecord) -> CheckResult:
    """Judge every watcher's deliveries (see the module docstring); an invalid result
    carries its first finding's fewest writes and notifications (``shrunk``,
    ``checkers.shrink_ops``: the write, the watcher's subscription and the deliveries
    around it)."""
    return shrink_result(judged(record), record, judged, violations, _collects)


def _collects(op: Op) -> bool:
    """A watcher's ``collect``: each notification it returned a record of its own."""
    return op.f == "collect"


def violations(result: CheckResult) -> list[Violation]:
    """Every watcher's findings ``result`` names, as violations (a watcher broke its
    promise only in what it found: ``follow_stream``)."""
    out = []
    for w in result.details.get("watchers") or ():
        for f in w.get("findings") or ():
            finding = Finding(f["kind"], f["key"], f["value"], f["revision"])
            out.append(
                Violation(
                    finding.kind,
                    (w.get("process"), finding.key, repr(finding.value)),
                    frozenset(),
                    LABELS.get(finding.kind, finding.kind),
                    f"watcher {w.get('process')}: {LABELS.get(finding.kind, finding.kind)}: "
                    + finding.words(),
                )
            )
    return out


def judged(record: RunRecord) -> CheckResult:
    """The watch-delivery result of ``record``, without its shrink."""
    run = read_watch_run(record)
    watchers = [follow_stream(s, run) for s in run.streams if s.notes]
    kept = read_record(record.events)
    details: dict[str, Any] = {
        "watchers": [w.to_dict(kept) for w in watchers],
        "writes": sum(len(ws) for ws in run.writes.values()),
        "compactions_asked": len(run.compactions),
        "service_record": kept.to_dict() if isinstance(kept, ServiceRecord) else kept,
    }
    if not watchers or not run.writes:
        why = "no watcher reported anything" if not watchers else "no write was committed"
        return CheckResult(NAME, UNKNOWN, f"Nothing to judge: {why}.", details)
    bad = [w for w in watchers if _violates(w)]
    settled = [w for w in watchers if w.settled]
    counts = _counts(watchers)
    if bad:
        ex = "; ".join(e for w in bad for e in w.examples[:2])
        findings = [f for w in bad for f in w.findings]
        said = blame(kept, findings) if findings else None
        summary = (
            f"{plural(len(bad), 'watcher')} of {len(watchers)} broke its promise: {ex}. {counts}"
            f" {said or NOT_BLAMED}"
        )
        return CheckResult(NAME, False, summary, details)
    if not settled:
        return CheckResult(
            NAME,
            UNKNOWN,
            "No watcher was still reporting once the writes were over: their final "
            f"values cannot be judged. {counts}",
            details,
        )
    return CheckResult(NAME, True, f"Every watcher kept its mechanism's promise. {counts}", details)


def _counts(watchers: list[Watcher]) -> str:
    parts = [
        f"{plural(sum(w.delivered for w in watchers), 'change')} delivered",
        f"{sum(w.missed for w in watchers)} missed",
    ]
    excused = sum(w.excused for w in watchers)
    if excused:
        parts.append(f"{excused} compacted away or skipped by a re-subscription")
    comp = sum(w.compactions for w in watchers)
    if comp:
        handled = sum(w.handled for w in watchers)
        parts.append(f"{plural(comp, 'compaction')} hit a watcher, {handled} handled")
    stale = [w for w in watchers if w.stale_final]
    if stale:
        expected = all(not w.rereads for w in stale)
        why = (
            " (expected: they trust the notification's value without re-reading)"
            if expected
            else ""
        )
        parts.append(f"{plural(len(stale), 'watcher')} settled on a stale value{why}")
    return ", ".join(parts) + "."
