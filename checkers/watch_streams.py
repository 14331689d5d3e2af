"""A watch run's records as what the watch checkers judge: the committed writes per key
and each watcher process's stream of notifications.

A write is *committed* when it completed ok, or when it ended info (outcome unknown) and
some watcher reported its value (values are unique per write, so a notification names its
write); an info write no watcher reported may or may not have happened and is left out.
A write's revision is the one its completion gave, else the one a watcher reported with
it. A watcher's stream is the notifications of its ``collect`` ops in order, with those an
abandoned watcher returned late (the runner's ``late-completion`` events): a watcher
frozen past its op's timeout still reports what it got (``workloads.watch``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from checkers.record import RunRecord

EVERY_CHANGE: Final = "every-change"
"""A mechanism that delivers each committed change once, in revision order."""
LATEST: Final = "latest"
"""A mechanism that delivers the value after one or more changes (they may coalesce)."""
SETTLE_NS: Final = 1_000_000_000
"""A change completed this long before a watcher's last report should have reached it."""


@dataclass(frozen=True, slots=True)
class Write:
    """One committed write of ``key``: its value, revision (None where unknown), and the
    run-clock times of its invocation and of its ok (None for an info write)."""

    key: str
    value: Any
    revision: int | None
    invoked: int
    ok: int | None


@dataclass
class Stream:
    """One watcher process: its notifications in the order received, and the time of its
    last report (the completion of its last ``collect`` op)."""

    process: Any
    notes: list[dict[str, Any]] = field(default_factory=list)
    last_report: int = 0

    @property
    def delivery(self) -> str:
        """What its mechanism promises (``workloads.watch``: every-change or latest)."""
        return str(self._subscribed().get("delivery", ""))

    @property
    def rereads(self) -> bool:
        """Whether it reads the value after each notification."""
        return bool(self._subscribed().get("rereads", True))

    @property
    def mechanism(self) -> str:
        return str(self._subscribed().get("mechanism", ""))

    def _subscribed(self) -> dict[str, Any]:
        return next((n for n in self.notes if n.get("kind") == "subscribed"), {})


@dataclass(frozen=True)
class WatchRun:
    """The committed writes per key (in revision order where known, else completion
    order), every watcher's stream, the compactions asked for (their revisions), and the
    time of the last write's completion (None: no write completed)."""

    writes: dict[str, list[Write]]
    streams: list[Stream]
    compactions: list[int]
    writes_end: int | None


def _notes(value: Any) -> list[dict[str, Any]]:
    return [n for n in value if isinstance(n, dict)] if isinstance(value, list) else []


def read_watch_run(record: RunRecord) -> WatchRun:
    """See the module docstring."""
    streams: dict[Any, Stream] = {}
    writes: list[tuple[Any, Any, Any, int, int | None]] = []
    compactions: list[int] = []
    for pair in record.history.client_ops().pairs():
        inv, done = pair.invoke, pair.completion
        if inv.f == "collect":
            s = streams.setdefault(inv.process, Stream(inv.process))
            if done is not None and done.type == "ok":
                s.notes.extend(_notes(done.value))
                s.last_report = max(s.last_report, done.time)
        elif inv.f == "write" and pair.type in ("ok", "info"):
            ok = done.time if done is not None and done.type == "ok" else None
            got = done.value if ok is not None and done is not None else None
            revision = got.get("revision") if isinstance(got, dict) else None
            writes.append((str(inv.key), inv.value, revision, inv.time, ok))
        elif inv.f == "compact" and pair.type == "ok" and isinstance(pair.value, dict):
            compactions.append(int(pair.value.get("revision") or 0))
    for e in record.events:
        if (
            e.get("event") == "late-completion"
            and e.get("f") == "collect"
            and e.get("type") == "ok"
        ):
            s = streams.setdefault(e.get("process"), Stream(e.get("process")))
            s.notes.extend(_notes(e.get("value")))
            s.last_report = max(s.last_report, max((n.get("time", 0) for n in s.notes), default=0))
    seen: dict[tuple[str, Any], int | None] = {}
    for s in streams.values():
        for n in s.notes:
            if n.get("kind") in ("change", "snapshot") and "key" in n:
                seen.setdefault((str(n["key"]), _hashable(n.get("value"))), n.get("revision"))
    by_key: dict[str, list[Write]] = {}
    for key, value, revision, invoked, ok in writes:
        known = (key, _hashable(value)) in seen
        if ok is None and not known:
            continue  # an info write nobody reported: it may or may not have happened
        if revision is None and known:
            revision = seen[(key, _hashable(value))]
        by_key.setdefault(key, []).append(Write(key, value, revision, invoked, ok))
    for ws in by_key.values():
        ws.sort(key=_order)
    ends = [w.ok for ws in by_key.values() for w in ws if w.ok is not None]
    return WatchRun(by_key, list(streams.values()), compactions, max(ends, default=None))


def _order(w: Write) -> tuple[int, int]:
    return (w.revision if w.revision is not None else 2**62, w.ok or w.invoked)


def _hashable(value: Any) -> Any:
    return repr(value) if isinstance(value, (list, dict)) else value


def possible_last(writes: list[Write]) -> list[Any]:
    """The values a key may hold once its writes are over: the highest revision's when
    every write's revision is known, else each write no other write certainly followed
    (one invoked after it completed)."""
    if not writes:
        return [None]
    if all(w.revision is not None for w in writes):
        return [max(writes, key=lambda w: w.revision or 0).value]
    latest_invoke = max(w.invoked for w in writes)
    return [w.value for w in writes if w.ok is None or w.ok >= latest_invoke]
