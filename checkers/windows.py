"""Fault windows: when each fault of a run was on, read from the nemesis operations.

Faults are recorded as nemesis operations (``core.ops``): ``start-X`` and ``stop-X``
with X one of ``client-pause`` (value ``{"processes": [...]}``: a SIGSTOP of client
workers, the GC pause), ``pause`` (``{"nodes": [...]}``: server nodes frozen),
``partition`` (``{"grudge": {node: [nodes it drops]}}``), ``kill`` (``{"nodes": [...]}``;
the stop restarts them) and ``clock`` (``{"offsets": {node: seconds}}``). An operation
named ``heal…`` ends every open fault.

A window runs from the invocation of its ``start-X`` to the completion of the next
``stop-X``: outer bounds, since the fault took effect somewhere in the start operation and
was gone by the end of the stop. A fault never stopped lasts to the end of the run
(``end`` None). Details (processes, nodes, offsets) come from the start's completion
value, else its invocation value. ``ok`` is False when the start could not be shown to
take effect (``checkers.faults`` makes such a run unknown).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from checkers.words import listing, secs
from core.history import History, Pair
from core.ops import Process

CLIENT_PAUSE: Final = "client-pause"
NODE_PAUSE: Final = "pause"
PARTITION: Final = "partition"
KILL: Final = "kill"
CLOCK: Final = "clock"


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

    def overlaps(self, lo: int, hi: int) -> bool:
        """Whether the fault was (possibly) on at some time in ``[lo, hi]``."""
        return self.start <= hi and (self.end is None or self.end >= lo)

    def changes_within(self, lo: int, hi: int) -> bool:
        """Whether the fault began or ended inside ``[lo, hi]`` (a clock jump happens at
        both: the offset is applied, then taken back)."""
        return lo <= self.start <= hi or (self.end is not None and lo <= self.end <= hi)

    def affects_process(self, process: Process) -> bool:
        return process in self.processes

    def describe(self) -> str:
        """Plain words: ``process 2 paused (SIGSTOP) from 12.531 s to 26.546 s``."""
        until = "the end of the run" if self.end is None else secs(self.end)
        when = f"from {secs(self.start)} to {until}"
        if self.kind == CLIENT_PAUSE:
            who = listing(self.processes) or "a client"
            return f"client process {who} paused (SIGSTOP, like a GC pause) {when}"
        nodes = listing(self.nodes) or "some node"
        if self.kind == NODE_PAUSE:
            return f"node {nodes} paused {when}"
        if self.kind == PARTITION:
            return f"a network partition involving {nodes} {when}"
        if self.kind == KILL:
            return f"node {nodes} killed {when} (restarted at the stop)"
        if self.kind == CLOCK:
            jumps = listing(f"{n} by {o:+g} s" for n, o in self.offsets) or nodes
            return f"clock of {jumps} {when}"
        return f"fault {self.kind} {when}"

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.kind,
            "start": self.start,
            "end": self.end,
            "took_effect": self.ok,
        }
        if self.processes:
            d["processes"] = list(self.processes)
        if self.nodes:
            d["nodes"] = list(self.nodes)
        if self.offsets:
            d["offsets"] = dict(self.offsets)
        return d


def fault_windows(history: History) -> list[FaultWindow]:
    """Every fault window of a history, ordered by start."""
    open_: dict[str, Pair] = {}
    out: list[FaultWindow] = []
    for pair in history.nemesis_ops().pairs():
        f = pair.invoke.f
        done = pair.end if pair.end is not None else pair.invoke.time
        if f.startswith("start-"):
            kind = f.removeprefix("start-")
            if kind in open_:  # started again without a stop: the first lasted until now
                out.append(_window(kind, open_.pop(kind), pair.invoke.time))
            open_[kind] = pair
        elif f.startswith("stop-") and f.removeprefix("stop-") in open_:
            kind = f.removeprefix("stop-")
            out.append(_window(kind, open_.pop(kind), done))
        elif f.startswith("heal"):
            out += [_window(kind, p, done) for kind, p in open_.items()]
            open_.clear()
    out += [_window(kind, p, None) for kind, p in open_.items()]
    return sorted(out, key=lambda w: w.start)


def of_kind(windows: Iterable[FaultWindow], *kinds: str) -> list[FaultWindow]:
    """The windows of the given kinds that took effect."""
    return [w for w in windows if w.kind in kinds and w.ok]


def first_overlapping(
    windows: Sequence[FaultWindow],
    lo: int,
    hi: int,
    kinds: Sequence[str],
    process: Process | None = None,
) -> FaultWindow | None:
    """The first window of ``kinds`` on during ``[lo, hi]`` (affecting ``process``, for
    client pauses, when given)."""
    for w in of_kind(windows, *kinds):
        if w.kind == CLIENT_PAUSE and process is not None and not w.affects_process(process):
            continue
        if w.overlaps(lo, hi):
            return w
    return None


def _window(kind: str, pair: Pair, end: int | None) -> FaultWindow:
    value = _details(pair)
    processes = tuple(value.get("processes") or ()) if isinstance(value, dict) else ()
    return FaultWindow(
        kind, pair.invoke.time, end, pair.type == "ok", processes, _nodes(value), _offsets(value)
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
