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

A service that keeps no history of values keeps each key's last change: ZooKeeper's
``stat`` of a node (its ``mzxid``, the zxid of its last change, and its ``version``, how
many times its data changed), Consul's ``ModifyIndex`` of an entry. Its record is
``"history": false`` with one change per key (``[key, revision, value]``; the revision
None where the service's writes give none to compare) and, where it keeps one, the number
of changes per key (``"versions": {key: N}``).

What it says of a finding (``Finding``):

- the change is in the service's history, once, at its revision: the service had it to
  deliver (a watch from a revision gets every change the service holds after it), so a
  change missed or delivered twice was lost or repeated in our watcher client
  (``CLIENT``);
- the change is before the service's compaction revision: its record cannot tell
  (``COMPACTED``);
- the change is not in the history the service holds: the service itself does not have
  it (``ABSENT``); a change it holds twice is its own (``TWICE``).

Held against a record of each key's last change only:

- the change is the key's last change in the service's record: the service had it to
  serve to a watcher that re-reads, so a watcher that settled elsewhere, or got it twice,
  lost or repeated it in our watcher client (``CLIENT``);
- the key changed after it: the record no longer holds it and cannot tell
  (``OVERWRITTEN``);
- the key's last change is another value, at or before the change's revision: the
  service itself does not have it (``ABSENT``); without revisions to order the two
  (Consul's writes carry none), another value cannot tell (``OVERWRITTEN``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from checkers.words import plural

RECORD: Final = "service-record"
"""The client event that carries the service's record of the watched keys."""
CLIENT, COMPACTED, ABSENT, TWICE, UNREAD = "client", "compacted", "absent", "twice", "unread"
OVERWRITTEN = "overwritten"


@dataclass(frozen=True, slots=True)
class Finding:
    """A watcher's broken promise about one change: ``missed`` (never delivered),
    ``duplicate`` (delivered again), ``out-of-order`` (after a later revision) or
    ``stale-final`` (a key's last change, never settled on by a watcher that re-reads)."""

    kind: str
    key: str
    value: Any
    revision: int | None

    def words(self) -> str:
        at = "" if self.revision is None else f" (revision {self.revision})"
        return f"key {self.key}: {self.value!r}{at}"


@dataclass(frozen=True)
class ServiceRecord:
    """What the service held of the keys at the end of the run (see the module docstring)."""

    service: str
    source: str
    first: int
    compacted: int | None
    revision: int
    complete: bool
    changes: dict[str, dict[int | None, list[Any]]]
    """Key -> revision -> the values the service holds at it (one, in a sound history;
    only each key's last change where ``history`` is False)."""
    history: bool = True
    """Whether the record holds every change since ``first`` (else each key's last)."""
    versions: dict[str, int] | None = None
    """Key -> how many times the service says it changed, where it keeps that count."""

    @property
    def count(self) -> int:
        return sum(len(vs) for by_rev in self.changes.values() for vs in by_rev.values())

    def says(self, f: Finding) -> str:
        """The kind of what the record says of ``f`` (``CLIENT``, ``COMPACTED``,
        ``ABSENT``, ``TWICE``, ``OVERWRITTEN``)."""
        if not self.history:
            return self._last_says(f)
        if f.revision is None or f.revision < self.first:
            return COMPACTED
        held = self.changes.get(f.key, {}).get(f.revision, [])
        matching = [v for v in held if repr(v) == repr(f.value)]
        if not matching:
            return ABSENT if self.complete else UNREAD
        return TWICE if len(matching) > 1 else CLIENT

    def _last_says(self, f: Finding) -> str:
        """What a record of each key's last change says of ``f`` (the module docstring)."""
        held = self.changes.get(f.key)
        if not held:
            return ABSENT if self.complete else UNREAD
        revision, values = next(iter(held.items()))
        if any(repr(v) == repr(f.value) for v in values) and (
            f.revision is None or revision is None or revision == f.revision
        ):
            return CLIENT
        if f.revision is None or revision is None or revision > f.revision:
            # another value, with no revisions to order it against the change (Consul's
            # writes carry none): a later write may have replaced it, so the record
            # cannot tell, and the service is not blamed on a value alone
            return OVERWRITTEN
        return ABSENT if self.complete else UNREAD

    def to_dict(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "source": self.source,
            "history": self.history,
            "first_revision": self.first,
            "compact_revision": self.compacted,
            "revision": self.revision,
            "complete": self.complete,
            "changes": self.count,
            "versions": self.versions,
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
    if last.get("error") is not None:
        return str(last.get("error"))
    changes: dict[str, dict[int | None, list[Any]]] = {}
    for c in last.get("changes") or ():
        if isinstance(c, list) and len(c) == 3 and (c[1] is None or isinstance(c[1], int)):
            changes.setdefault(str(c[0]), {}).setdefault(c[1], []).append(c[2])
    compacted = last.get("compact_revision")
    versions = last.get("versions")
    return ServiceRecord(
        str(last.get("service") or "the service"),
        str(last.get("source") or "its own record"),
        int(last.get("first_revision") or 1),
        compacted if isinstance(compacted, int) else None,
        int(last.get("revision") or 0),
        bool(last.get("complete")),
        changes,
        bool(last.get("history")),
        {str(k): int(v) for k, v in versions.items()} if isinstance(versions, dict) else None,
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
    by_kind: dict[str, list[Finding]] = {}
    for f in findings:
        by_kind.setdefault(record.says(f), []).append(f)
    if not record.history:
        return _last_blame(record, by_kind)
    svc = record.service
    held = (
        f"Checked against {svc}'s own record of the keys, read back at the end of the run "
        f"({record.source}: {plural(record.count, 'change')}, revisions {record.first} to "
        f"{record.revision}" + ("" if record.complete else ", not read to the end") + ")"
    )
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


def _last_blame(record: ServiceRecord, by_kind: dict[str, list[Finding]]) -> str:
    """``blame``'s sentences against a record of each key's last change."""
    svc = record.service
    held = (
        f"Checked against {svc}'s own record of the keys, read back at the end of the run "
        f"({record.source}: each key's last change, {plural(len(record.changes), 'key')}; "
        "it keeps no history of values)"
    )
    said = []
    if CLIENT in by_kind:
        fs = by_kind[CLIENT]
        one = len(fs) == 1
        said.append(
            f"{_these(fs)} {'is' if one else 'are'} the key's last change in {svc}'s record: "
            f"the service had {'it' if one else 'them'} to serve to a watcher that re-reads, "
            f"so {'it was' if one else 'they were'} {_fates(fs)} in our watcher client, "
            f"not by {svc}"
        )
    if OVERWRITTEN in by_kind:
        said.append(
            f"{_these(by_kind[OVERWRITTEN])}: the key changed again after it, and {svc} "
            "keeps only its last change: its record cannot tell"
        )
    if ABSENT in by_kind:
        said.append(
            f"{_these(by_kind[ABSENT])}: {svc}'s record holds another value as the key's "
            "last change: the service itself does not have it"
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
    words = {"missed": "lost", "stale-final": "lost", "duplicate": "repeated"}
    words["out-of-order"] = "reordered"
    return " or ".join(dict.fromkeys(words[k] for k in words if k in kinds))
