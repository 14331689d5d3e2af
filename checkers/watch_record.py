"""The service's own record of the watched keys, and what it says of a delivery finding.

A watcher that missed a change, or got one twice, broke its mechanism's promise; but the
watcher is the service's watch *and our client* (its resume, its reconnection). Before a
finding is blamed on anyone, it is looked up in what the service itself keeps of the keys,
read back once the run is over (``workloads.watch.KeepsHistory``; etcd: its MVCC history
from its compaction revision on, replayed by a watch from there) and recorded as one
client event::

    {"event": "service-record", "service": "etcd", "source": TEXT, "history": true,
     "first_revision": N, "compact_revision": N | null, "revision": N, "complete": BOOL,
     "changes": [[key, revision, value], ...]}

or ``{"event": "service-record", "service": ..., "error": TEXT}`` when it could not be
read. ``history`` says the record holds every change from ``first_revision`` on (not only
each key's last one), ``complete`` that it was read up to the keys' last change.

What it says of a finding (``Finding``):

- the change is in the service's history, once, at its revision: the service had it to
  deliver (a watch from a revision gets every change the service holds after it), so a
  change missed or delivered twice was lost or repeated in our watcher client
  (``CLIENT``);
- the change is before the service's compaction revision: its record cannot tell
  (``COMPACTED``);
- the change is not in the history the service holds: the service itself does not have
  it (``ABSENT``); a change it holds twice is its own (``TWICE``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from checkers.words import plural

RECORD: Final = "service-record"
"""The client event that carries the service's record of the watched keys."""
CLIENT, COMPACTED, ABSENT, TWICE, UNREAD = "client", "compacted", "absent", "twice", "unread"


@dataclass(frozen=True, slots=True)
class Finding:
    """A watcher's broken promise about one change: ``missed`` (never delivered),
    ``duplicate`` (delivered again) or ``out-of-order`` (after a later revision)."""

    kind: str
    key: str
    value: Any
    revision: int | None

    def words(self) -> str:
        return f"key {self.key}: {self.value!r} (revision {self.revision})"


@dataclass(frozen=True)
class ServiceRecord:
    """What the service held of the keys at the end of the run (see the module docstring)."""

    service: str
    source: str
    first: int
    compacted: int | None
    revision: int
    complete: bool
    changes: dict[str, dict[int, list[Any]]]
    """Key -> revision -> the values the service holds at it (one, in a sound history)."""

    @property
    def count(self) -> int:
        return sum(len(vs) for by_rev in self.changes.values() for vs in by_rev.values())

    def says(self, f: Finding) -> str:
        """The kind of what the record says of ``f`` (``CLIENT``, ``COMPACTED``,
        ``ABSENT``, ``TWICE``)."""
        if f.revision is None or f.revision < self.first:
            return COMPACTED
        held = self.changes.get(f.key, {}).get(f.revision, [])
        matching = [v for v in held if repr(v) == repr(f.value)]
        if not matching:
            return ABSENT if self.complete else UNREAD
        return TWICE if len(matching) > 1 else CLIENT

    def to_dict(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "source": self.source,
            "first_revision": self.first,
            "compact_revision": self.compacted,
            "revision": self.revision,
            "complete": self.complete,
            "changes": self.count,
        }


def read_record(events: Iterable[dict[str, Any]]) -> ServiceRecord | str | None:
    """The last service record the run's clients recorded; its error (a str) when it
    could not be read; None when none was recorded (the target reads none)."""
    last = None
    for e in events:
        if e.get("event") == RECORD:
            last = e
    if last is None:
        return None
    if last.get("error") is not None or not last.get("history"):
        return str(last.get("error") or "it holds only each key's last change")
    changes: dict[str, dict[int, list[Any]]] = {}
    for c in last.get("changes") or ():
        if isinstance(c, list) and len(c) == 3 and isinstance(c[1], int):
            changes.setdefault(str(c[0]), {}).setdefault(c[1], []).append(c[2])
    compacted = last.get("compact_revision")
    return ServiceRecord(
        str(last.get("service") or "the service"),
        str(last.get("source") or "its own record"),
        int(last.get("first_revision") or 1),
        compacted if isinstance(compacted, int) else None,
        int(last.get("revision") or 0),
        bool(last.get("complete")),
        changes,
    )


def blame(record: ServiceRecord | str | None, findings: Sequence[Finding]) -> str | None:
    """What the service's record says of the findings, in sentences; None when the run
    recorded no record (the caller says nothing was read back)."""
    if record is None:
        return None
    if isinstance(record, str):
        return (
            f"The service's own record of the keys could not be read back at the end of the "
            f"run ({record}), so the watcher's client is not ruled out."
        )
    svc = record.service
    held = (
        f"Checked against {svc}'s own record of the keys, read back at the end of the run "
        f"({record.source}: {plural(record.count, 'change')}, revisions {record.first} to "
        f"{record.revision}" + ("" if record.complete else ", not read to the end") + ")"
    )
    by_kind: dict[str, list[Finding]] = {}
    for f in findings:
        by_kind.setdefault(record.says(f), []).append(f)
    said = []
    if CLIENT in by_kind:
        fs = by_kind[CLIENT]
        said.append(
            f"{_these(fs)} {'is' if len(fs) == 1 else 'are'} in {svc}'s history once, at "
            f"{'its revision' if len(fs) == 1 else 'their revisions'}, and {svc}'s watch "
            "delivers every change it holds after the revision a watch starts from: the "
            f"service had {'it' if len(fs) == 1 else 'them'} to deliver, so "
            f"{'it was' if len(fs) == 1 else 'they were'} {_fates(fs)} in our watcher "
            f"client (its resume or reconnection), not by {svc}"
        )
    if COMPACTED in by_kind:
        fs = by_kind[COMPACTED]
        said.append(
            f"{_these(fs)} came before {svc}'s compaction (its history starts at revision "
            f"{record.first}): its record cannot tell"
        )
    if TWICE in by_kind:
        said.append(f"{_these(by_kind[TWICE])}: {svc}'s own history holds the change twice")
    if ABSENT in by_kind:
        said.append(
            f"{_these(by_kind[ABSENT])}: not in {svc}'s history, which holds every change "
            f"from revision {record.first} on: the service itself does not have it"
        )
    if UNREAD in by_kind:
        said.append(f"{_these(by_kind[UNREAD])}: beyond what was read of its record")
    return f"{held}: " + "; ".join(said) + "."


def cause_of(record: ServiceRecord | str | None, f: Finding) -> str | None:
    """The kind of what the record says of one finding (None: no record was read)."""
    return record.says(f) if isinstance(record, ServiceRecord) else None


def _these(fs: Sequence[Finding]) -> str:
    first = fs[0].words()
    return first if len(fs) == 1 else f"{len(fs)} of the changes ({first}, ...)"


def _fates(fs: Sequence[Finding]) -> str:
    kinds = {f.kind for f in fs}
    words = {"missed": "lost", "duplicate": "repeated", "out-of-order": "reordered"}
    return " or ".join(words[k] for k in ("missed", "duplicate", "out-of-order") if k in kinds)
