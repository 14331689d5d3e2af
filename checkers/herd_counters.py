"""The herd's request counts held against the servers' own counters.

Our waiters count every request they send while acquiring, by the method the service
counts it under (``herd-acquire``'s ``requests_by_method``). Our count is what the herd
measures, but it is our client's word: a retry loop that sends more than it counts, or a
library that resends, would make it too low. So the servers' own counters are read when
the run opens and when it closes (``workloads.herd.CountsRequests``) and recorded as two
client events::

    {"event": "server-counters", "phase": "start" | "end", "service": "etcd",
     "source": TEXT, "nodes": {NODE: {COUNTER: N}}, "covers": {COUNTER: [METHOD, ...]},
     "errors": {NODE: TEXT}}

or ``{"event": "server-counters", "phase": ..., "error": TEXT}`` when none could be read.
``covers`` says which of our methods each server counter counts (``"*"``: all of them;
``NOTIFICATIONS``: the notifications our waiters got, which ZooKeeper counts as the
watches it fired). What a server counted in the run is its end count less its
start count; a server whose count went back was restarted, and its end count (since its
restart) is taken. Every server figure is so a lower bound of what the servers served.

The servers also serve what the herd does not count (releases, leases, keepalives, pings),
so theirs is expected to be somewhat above ours; it is *far* above (``far_above``) when it
is more than ``FACTOR`` times ours plus ``SLACK``: then our count is not the truth, and
the herd's numbers are not a measurement.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

COUNTERS: Final = "server-counters"
"""The client event of the servers' own request counters at one phase of the run."""
START: Final = "start"
END: Final = "end"
ALL: Final = "*"
"""A counter that counts every method of ours."""
NOTIFICATIONS: Final = "notifications"
"""Our count of the notifications our waiters got, held against a counter as a method."""
FACTOR: Final = 2
SLACK: Final = 20
"""The servers' count is far above ours beyond ``FACTOR`` x ours + ``SLACK``: what the
herd does not count (a release per handoff, lease grants, pings) stays within it."""


@dataclass(frozen=True, slots=True)
class Tally:
    """One server counter over the run: ours (the methods it covers) and the servers'."""

    counter: str
    ours: int
    servers: int
    covers: str = ""
    """Which of ours it covers, in words, when not the counter's own name."""

    @property
    def far_above(self) -> bool:
        return self.servers > FACTOR * self.ours + SLACK

    def to_dict(self) -> dict[str, Any]:
        return {"ours": self.ours, "servers": self.servers, "far_above": self.far_above}


@dataclass(frozen=True)
class CrossCheck:
    """Our request counts against the servers' (see the module docstring)."""

    service: str
    source: str
    tallies: tuple[Tally, ...]
    restarted: tuple[str, ...]
    """Servers whose count went back (restarted): counted from their restart."""
    unread: tuple[str, ...]
    """Servers whose counters could not be read at the end: not counted."""

    @property
    def far(self) -> tuple[Tally, ...]:
        return tuple(t for t in self.tallies if t.far_above)

    def to_dict(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "source": self.source,
            "counters": {t.counter: t.to_dict() for t in self.tallies},
            "restarted": list(self.restarted),
            "unread": list(self.unread),
        }

    def words(self) -> str:
        """What the servers' counters say of our count, in one sentence."""

        def pair(t: Tally) -> str:
            return f"{t.counter} {t.servers:,} against our {t.ours:,}" + (
                f" {t.covers}" if t.covers else ""
            )

        where = f"Cross-checked with {self.service}'s own counters ({self.source}), the servers"
        notes = ""
        if self.restarted:
            notes += f"; {', '.join(self.restarted)} restarted: counted from the restart"
        if self.unread:
            notes += f"; {', '.join(self.unread)} could not be read at the end: not counted"
        if self.far:
            return (
                f"{where} counted far more than our waiters did: "
                + ", ".join(pair(t) for t in self.far)
                + f" (more than {FACTOR} x ours + {SLACK}, beyond what releases, leases and "
                "pings add): our count is not the truth" + notes
            )
        if not self.tallies:
            return f"{where} counted none of the methods our waiters count" + notes
        return (
            f"{where} counted about as many as our waiters did: "
            + ", ".join(pair(t) for t in self.tallies)
            + notes
        )


def cross_check(
    events: Iterable[dict[str, Any]], ours: Mapping[str, int]
) -> CrossCheck | str | None:
    """Our per-method counts ``ours`` against the servers' counters the run recorded;
    why they could not be compared (a str); None when the run recorded none (its target
    reads none)."""
    starts: dict[str, dict[str, Any]] = {}
    end: dict[str, Any] | None = None
    for e in events:
        if e.get("event") != COUNTERS:
            continue
        if e.get("phase") == START and isinstance(e.get("nodes"), dict):
            for node, counts in e["nodes"].items():
                starts.setdefault(str(node), counts)  # the first reading of each server
        elif e.get("phase") == END:
            end = e
    if end is None:
        return None if not starts else "the servers' counters were not read at the end"
    if end.get("error") is not None or not isinstance(end.get("nodes"), dict):
        return str(end.get("error") or "no server's counters were read at the end")
    served, restarted = _served(starts, end["nodes"])
    covers = _mapping(end.get("covers"))
    tallies = []
    for counter, methods in sorted(covers.items()):
        names = set(methods) if isinstance(methods, list) else set()
        mine = sum(n for m, n in ours.items() if ALL in names or m in names)
        if mine:
            said = "" if names == {counter} or ALL in names else ", ".join(sorted(names))
            tallies.append(Tally(counter, mine, served.get(counter, 0), said))
    errors = _mapping(end.get("errors"))
    return CrossCheck(
        str(end.get("service") or "the service"),
        str(end.get("source") or "its counters"),
        tuple(tallies),
        tuple(restarted),
        tuple(sorted(str(n) for n in errors)),
    )


def _mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a field missing or mangled)."""
    return value if isinstance(value, dict) else {}


def _served(starts: Mapping[str, Any], ends: Mapping[str, Any]) -> tuple[dict[str, int], list[str]]:
    """Each counter summed over the servers, from their start to their end count; the
    servers whose count went back (restarted, counted from the restart)."""
    served: dict[str, int] = {}
    restarted: list[str] = []
    for node, counts in sorted(ends.items()):
        before = _mapping(starts.get(node))
        if not isinstance(counts, dict):
            continue
        went_back = any(int(counts.get(c, 0)) < int(n) for c, n in before.items())
        if went_back:
            restarted.append(str(node))
        for counter, n in counts.items():
            base = 0 if went_back else int(before.get(counter, 0))
            served[counter] = served.get(counter, 0) + max(0, int(n) - base)
    return served, restarted


def describe(check: CrossCheck | str | None) -> str | None:
    """The sentence a herd verdict adds; None when nothing was read (a target without
    counters)."""
    if check is None:
        return None
    if isinstance(check, str):
        return f"Our request count was not cross-checked with the servers' counters ({check})."
    return check.words() + "."
