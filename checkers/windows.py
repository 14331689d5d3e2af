"""Fault windows: when each fault of a run was on, read from the nemesis operations.

Faults are recorded as nemesis operations (``core.ops``): ``start-X`` and ``stop-X`` for a
fault X, whatever it is; an operation named ``heal…`` ends every open fault. The run
records in test.json what it knows of each fault it was asked for (``faults: {X: {"start",
"stop", "describe"}}``, from the fault's own module): its operations and the words a
window of it is described with, so a checker needs no edit for a new fault. Runs recorded
before that (and bare histories) get the words of ``WORDS``, the faults of that time:
``client-pause`` (value ``{"processes": [...]}``: a SIGSTOP of client workers, the GC
pause), ``pause`` (``{"nodes": [...]}``: server nodes frozen), ``partition``
(``{"grudge": {node: [nodes it drops]}}``), ``kill`` (``{"nodes": [...]}``; the stop
restarts them) and ``clock`` (``{"offsets": {node: seconds}}``).

What a fault does, as far as the checkers explain violations by it, is its ``effects``
(``EFFECTS``: it freezes a client, cuts servers off, crashes a server, moves a clock),
recorded with its words; older runs get those of ``KIND_EFFECTS``. A new fault with one
of these effects is explained with no edit here; a new kind of effect is an edit of the
checkers that interpret it (``checkers.classify``, ``checkers.stats``).

A window is the fault as applied: from the completion of its ``start-X`` (the nemesis
answers once the fault has taken effect, with its proof) to the completion of the next
``stop-X`` (by then it was gone). A start that failed or never answered keeps its
invocation time. Its ``invoked`` time (the start's invocation) is kept too: whether a
violation *may* be the fault's doing (``overlaps``) is judged from then, since the fault
may have taken effect anywhere inside its start operation, and a violation is blamed on
the service only where the harness's fault cannot have caused it. A fault never stopped
lasts to the end of the run (``end`` None). Details (processes, nodes, offsets) come from
the start's completion value, else its invocation value. ``ok`` is False when the start
could not be shown to take effect (``checkers.faults`` makes such a run unknown).
``asked_s`` is how long the run asked the fault to last (test.json's ``faults``, from the
fault's schedule); a window applied for less than half of it was cut short
(``cut_short``): by the end of the run, an interruption, or a heal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from checkers.record import RunRecord
from checkers.words import listing, secs
from core.faults import CLIENT_PAUSE, CLOCK, KILL, NODE_PAUSE, PARTITION, POWER_LOSS
from core.history import History, Pair
from core.ops import Process

WORDS: Final[dict[str, str]] = {
    CLIENT_PAUSE.name: "client process {processes} paused (SIGSTOP, like a GC pause) {when}",
    NODE_PAUSE.name: "node {nodes} paused {when}",
    PARTITION.name: "a network partition involving {nodes} {when}",
    KILL.name: "node {nodes} killed {when} (restarted at the stop)",
    POWER_LOSS.name: "node {nodes} lost power {when}: killed, what it had not fsynced discarded "
    "(restarted at the stop)",
    CLOCK.name: "clock of {jumps} {when}",
}
"""The words of the faults' windows for runs that did not record them (see above)."""
OTHER_WORDS: Final = "fault {fault} {when}"

FREEZES_CLIENT: Final = "freezes-client"
"""A client process is frozen: its lease may run out while it cannot renew it."""
CUTS_OFF: Final = "cuts-off"
"""Servers stop answering (paused, partitioned): a holder may be cut off from the service."""
CRASHES: Final = "crashes"
"""A server is killed and restarted: what it had not made durable is lost."""
MOVES_CLOCK: Final = "moves-clock"
"""A server's clock jumps: what is measured on it (a lease) may end early."""
KILLS_CLIENT: Final = "kills-client"
"""A client process is killed (SIGKILL): what it held lapses; the runner starts another."""
LOSES_UNSYNCED: Final = "loses-unsynced"
"""A node loses power: what its server had not fsynced is discarded (its start's answer
says how many bytes, per node and file: ``discarded``)."""
EFFECTS: Final = frozenset(
    {FREEZES_CLIENT, CUTS_OFF, CRASHES, MOVES_CLOCK, KILLS_CLIENT, LOSES_UNSYNCED}
)
KIND_EFFECTS: Final[dict[str, frozenset[str]]] = {
    CLIENT_PAUSE.name: frozenset({FREEZES_CLIENT}),
    NODE_PAUSE.name: frozenset({CUTS_OFF}),
    PARTITION.name: frozenset({CUTS_OFF}),
    KILL.name: frozenset({CRASHES}),
    POWER_LOSS.name: frozenset({CRASHES, LOSES_UNSYNCED}),
    CLOCK.name: frozenset({MOVES_CLOCK}),
}
"""The effects of the faults' windows for runs that did not record them."""
CUT_SHORT: Final = 0.5
"""A window applied for less than this share of its asked duration was cut short."""
WORDS_MAX: Final = 300
"""Recorded words longer than this are not used (a run directory is input)."""
_PLACEHOLDER: Final = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True, slots=True)
class FaultWindow:
    """One fault, on from ``start`` to ``end`` ns (None: to the end of the run)."""

    kind: str
    start: int
    end: int | None
    ok: bool = True
    processes: tuple[Process, ...] = ()
    nodes: tuple[str, ...] = ()
    offsets: tuple[tuple[str, float], ...] = ()
    words: str = ""
    """How the run said to describe a window of this fault (empty: ``WORDS``)."""
    effects: frozenset[str] = frozenset()
    """What the fault does, as the checkers interpret it (``EFFECTS``)."""
    invoked: int | None = None
    """When its start was invoked (None: at ``start``); it took effect by ``start``."""
    asked_s: float | None = None
    """How long the run asked it to last, in seconds (None: not recorded)."""
    stopping: int | None = None
    """When its stop was invoked (None: never stopped); it was undone by ``end``."""
    discarded: tuple[tuple[str, int], ...] = ()
    """Bytes a power cut discarded, per node (its start's answer, summed over files)."""

    @property
    def since(self) -> int:
        """The earliest time the fault may have been on: its start's invocation."""
        return self.start if self.invoked is None else min(self.invoked, self.start)

    def overlaps(self, lo: int, hi: int) -> bool:
        """Whether the fault was (possibly) on at some time in ``[lo, hi]``."""
        return self.since <= hi and (self.end is None or self.end >= lo)

    def changes_within(self, lo: int, hi: int) -> bool:
        """Whether the fault began or ended inside ``[lo, hi]`` (a clock jump happens at
        both: the offset is applied, then taken back)."""
        began = self.since <= hi and self.start >= lo
        return began or (self.end is not None and lo <= self.end <= hi)

    def began_within(self, lo: int, hi: int) -> bool:
        """Whether it may have taken effect in ``(lo, hi]`` (its start op spans
        ``[since, start]``)."""
        return self.since <= hi and self.start > lo

    def ended_within(self, lo: int, hi: int) -> bool:
        """Whether it may have been undone in ``(lo, hi]`` (its stop op spans
        ``[stopping, end]``)."""
        if self.end is None:
            return False
        return (self.end if self.stopping is None else self.stopping) <= hi and self.end > lo

    def lasted_s(self, run_end: int) -> float:
        """How long it was applied, in seconds (to ``run_end`` when never stopped)."""
        return ((self.end if self.end is not None else run_end) - self.start) / 1e9

    def cut_short(self, run_end: int) -> bool:
        """Whether it was applied for less than ``CUT_SHORT`` of what it was asked to last:
        too short to stand for the fault asked for (a pause shorter than the lease it was
        meant to outlast). A window a little short (a start that took seconds, then the
        end of the run) still counts, its length said beside it."""
        return (
            self.ok
            and self.asked_s is not None
            and self.lasted_s(run_end) < CUT_SHORT * self.asked_s
        )

    def affects_process(self, process: Process) -> bool:
        return process in self.processes

    def describe(self) -> str:
        """Plain words: ``client process 2 paused (SIGSTOP, like a GC pause) from 12.531 s
        to 26.546 s``, from the recorded words of the fault (``words``), else ``WORDS``."""
        until = "the end of the run" if self.end is None else secs(self.end)
        nodes = listing(self.nodes) or "some node"
        fields = {
            "fault": self.kind,
            "when": f"from {secs(self.start)} to {until}",
            "processes": listing(self.processes) or "a client",
            "nodes": nodes,
            "jumps": listing(f"{n} by {o:+g} s" for n, o in self.offsets) or nodes,
        }
        words = self.words or WORDS.get(self.kind, OTHER_WORDS)
        return _PLACEHOLDER.sub(lambda m: fields.get(m[1], m[0]), words)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "took_effect": self.ok,
        }
        if self.invoked is not None:
            d["invoked"] = self.invoked
        if self.asked_s is not None:
            d["asked_s"] = self.asked_s
        if self.processes:
            d["processes"] = list(self.processes)
        if self.nodes:
            d["nodes"] = list(self.nodes)
        if self.offsets:
            d["offsets"] = dict(self.offsets)
        if self.discarded:
            d["discarded"] = dict(self.discarded)
        return d


def fault_windows(history: History, faults: Mapping[str, Any] | None = None) -> list[FaultWindow]:
    """Every fault window of a history, ordered by start; ``faults``: what the run
    recorded of its faults (test.json's ``faults``), if anything."""
    facts = FaultFacts(faults)
    open_: dict[str, Pair] = {}
    out: list[FaultWindow] = []

    def window(kind: str, pair: Pair, end: int | None, stopping: int | None) -> FaultWindow:
        w = _window(kind, pair, end, facts.words.get(kind, ""), facts.effects_of(kind))
        return replace(w, asked_s=facts.asked.get(kind), stopping=stopping)

    for pair in history.nemesis_ops().pairs():
        f = pair.invoke.f
        done = pair.end if pair.end is not None else pair.invoke.time
        at = pair.invoke.time
        if (kind := facts.started_by(f)) is not None:
            if kind in open_:  # started again without a stop: the first lasted until now
                out.append(window(kind, open_.pop(kind), at, at))
            open_[kind] = pair
        elif (kind := facts.stopped_by(f)) is not None and kind in open_:
            out.append(window(kind, open_.pop(kind), done, at))
        elif f.startswith("heal"):
            out += [window(kind, p, done, at) for kind, p in open_.items()]
            open_.clear()
    out += [window(kind, p, None, None) for kind, p in open_.items()]
    return sorted(out, key=lambda w: w.start)


def record_windows(record: RunRecord) -> list[FaultWindow]:
    """The fault windows of a run, described in the words it recorded."""
    return fault_windows(record.history, record.test.get("faults"))


class FaultFacts:
    """What test.json says of the run's faults (``faults``), as far as it is well formed:
    which operation starts and stops which fault, and the words of its windows."""

    def __init__(self, faults: Mapping[str, Any] | None) -> None:
        self.starts: dict[str, str] = {}
        self.stops: dict[str, str] = {}
        self.words: dict[str, str] = {}
        self.effects: dict[str, frozenset[str]] = {}
        self.asked: dict[str, float] = {}
        for name, fact in (faults or {}).items() if isinstance(faults, Mapping) else ():
            if not isinstance(fact, Mapping):
                continue
            for key, into in (("start", self.starts), ("stop", self.stops)):
                if isinstance(fact.get(key), str):
                    into[fact[key]] = str(name)
            words = fact.get("describe")
            if isinstance(words, str) and 0 < len(words) <= WORDS_MAX:
                self.words[str(name)] = words
            asked = fact.get("asked_s")
            if isinstance(asked, int | float) and not isinstance(asked, bool) and asked > 0:
                self.asked[str(name)] = float(asked)
            effects = fact.get("effects")
            if isinstance(effects, list):
                self.effects[str(name)] = EFFECTS.intersection(
                    e for e in effects if isinstance(e, str)
                )

    def started_by(self, f: str) -> str | None:
        """The fault the operation ``f`` starts (``start-X`` starts X), if any."""
        return self.starts.get(f) or (f.removeprefix("start-") if f.startswith("start-") else None)

    def stopped_by(self, f: str) -> str | None:
        """The fault the operation ``f`` stops (``stop-X`` stops X), if any."""
        return self.stops.get(f) or (f.removeprefix("stop-") if f.startswith("stop-") else None)

    def effects_of(self, kind: str) -> frozenset[str]:
        """What the fault ``kind`` does: as recorded, else as the checkers know it."""
        return self.effects.get(kind, KIND_EFFECTS.get(kind, frozenset()))


def with_effect(windows: Iterable[FaultWindow], effect: str) -> list[FaultWindow]:
    """The windows of faults with ``effect`` that took effect."""
    return [w for w in windows if effect in w.effects and w.ok]


def first_overlapping(
    windows: Sequence[FaultWindow],
    lo: int,
    hi: int,
    effect: str,
    process: Process | None = None,
) -> FaultWindow | None:
    """The first window with ``effect`` on during ``[lo, hi]`` (affecting ``process``, for
    frozen clients, when given)."""
    for w in with_effect(windows, effect):
        if effect == FREEZES_CLIENT and process is not None and not w.affects_process(process):
            continue
        if w.overlaps(lo, hi):
            return w
    return None


def _window(
    kind: str, pair: Pair, end: int | None, words: str, effects: frozenset[str]
) -> FaultWindow:
    value = _details(pair)
    processes = tuple(value.get("processes") or ()) if isinstance(value, dict) else ()
    applied = pair.completion is not None and pair.type == "ok"
    start = pair.completion.time if applied and pair.completion is not None else pair.invoke.time
    return FaultWindow(
        kind,
        start,
        end,
        applied,
        processes,
        _nodes(value),
        _offsets(value),
        words,
        effects,
        invoked=pair.invoke.time,
        discarded=_discarded(value),
    )


def _details(pair: Pair) -> Any:
    c = pair.completion
    if c is not None and isinstance(c.value, dict) and c.value:
        return c.value
    return pair.invoke.value if isinstance(pair.invoke.value, dict) else {}


def _nodes(value: Any) -> tuple[str, ...]:
    if not isinstance(value, dict):
        return ()
    names: dict[str, None] = {}
    for n in value.get("nodes") or ():
        names[str(n)] = None
    grudge = value.get("grudge")
    if isinstance(grudge, dict):
        for node, dropped in grudge.items():
            names[str(node)] = None
            for n in dropped if isinstance(dropped, (list, tuple)) else ():
                names[str(n)] = None
    offsets = value.get("offsets")
    if isinstance(offsets, dict):
        for n in offsets:
            names[str(n)] = None
    return tuple(names)


def _offsets(value: Any) -> tuple[tuple[str, float], ...]:
    offsets = value.get("offsets") if isinstance(value, dict) else None
    if not isinstance(offsets, dict):
        return ()
    return tuple(
        (str(n), float(o))
        for n, o in offsets.items()
        if isinstance(o, (int, float)) and not isinstance(o, bool)
    )


def _discarded(value: Any) -> tuple[tuple[str, int], ...]:
    """``{"discarded": {node: {file: bytes}}}`` as bytes per node; malformed parts skipped."""
    found = value.get("discarded") if isinstance(value, dict) else None
    if not isinstance(found, dict):
        return ()
    out = []
    for node, files in found.items():
        sizes = files.values() if isinstance(files, dict) else ()
        out.append((str(node), sum(b for b in sizes if type(b) is int and b >= 0)))
    return tuple(out)
