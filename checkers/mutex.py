"""Mutual exclusion of a lock (or a leadership), judged from three records of one run.

Inputs, all plain data:

- the protected resource's write log (``workloads.resource``): what arrived, when, with
  which token, and what the resource did with it;
- the client history: ``acquire``/``release`` (or ``campaign``/``resign``) operations,
  whose ``ok`` completions carry ``{"token"|"epoch": n, "lease": id}``;
- the client events: ``lease-granted`` / ``keepalive`` / ``lease-lost`` per lease, with
  the time each acknowledgement was received (``time``) and its request sent (``sent``).

What it reports:

- **overlaps**: two processes that each believed they held the lock at once (from their
  ``acquire`` ok to their ``release`` invocation or the moment they noticed the lease
  lost). If the earlier holder's lease was *certainly still valid* when the later one was
  granted (a renewal sent less than a TTL before), the service broke mutual exclusion:
  invalid. If it may have expired, that is the normal aftermath of a paused holder: shown,
  and judged by what reached the resource;
- **stale writes**: a write whose token is lower than the highest the resource had seen.
  Accepted means the stale holder's write overwrote a newer holder's: invalid. Rejected
  means fencing did its job: valid. Writes without a token (``unfenced``) are judged from
  the history: a write arriving after another process acquired the lock later than the
  writer did is stale;
- **handovers** after a lost lease: the lease expiry (last keepalive acknowledgement +
  TTL, an upper bound on the real expiry), the *danger window* (the stale holder's last
  write arrival minus the expiry, or 0) and the *handover delay* (the next acquisition
  minus the expiry).

Several locks in one run are told apart by the ``"name"`` in the acquire's value (ok or
invocation) and the resource name of each write.

A run in which nothing was ever held and nothing written proves nothing: ``unknown``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checkers.result import UNKNOWN, CheckResult, Validity
from harness.history import History
from harness.ops import Process

NAME = "mutex"
_NS = 1_000_000_000


@dataclass(slots=True)
class Tenure:
    """One process's holding, as the client saw it."""

    process: Process
    invoked: int  # acquire invocation time
    start: int | None  # acquire ok time; None when the acquire's outcome is unknown
    token: int | None
    lease: Any
    name: str | None = None  # the lock or election, when the history says
    end: int | None = None  # release invocation or noticed loss; None: held to the end
    ended_by: str = "open"  # released | release-failed | release-unknown | lease-lost | open

    @property
    def definite(self) -> bool:
        return self.start is not None


@dataclass(slots=True)
class LeaseFacts:
    """What the client events say about one lease."""

    ttl: float | None = None
    acks: list[tuple[int, int]] = field(default_factory=list)  # (sent, received)
    lost_at: int | None = None

    def certainly_alive(self, t: int) -> bool:
        """True when a renewal sent less than a TTL before ``t`` was acknowledged: the
        service renewed it no earlier than it was sent, so it was alive at ``t``."""
        if self.ttl is None:
            return False
        return any(sent <= t < sent + int(self.ttl * _NS) for sent, _ in self.acks)

    def expiry(self, before: int | None = None) -> int | None:
        """Last acknowledgement received (before ``before``) plus the TTL."""
        acks = [r for _, r in self.acks if before is None or r <= before]
        if self.ttl is None or not acks:
            return None
        return max(acks) + int(self.ttl * _NS)


def check_mutex(
    resource_log: Iterable[dict[str, Any]],
    history: History,
    events: Iterable[dict[str, Any]] = (),
    take: Sequence[str] = ("acquire", "campaign"),
    give: Sequence[str] = ("release", "resign"),
) -> CheckResult:
    """Judge mutual exclusion; see the module docstring for what is reported."""
    writes = list(resource_log)
    tenures = _tenures(history, take, give)
    leases = _leases(events)
    for t in tenures:
        lost = leases.get(t.lease, LeaseFacts()).lost_at
        if t.definite and lost is not None and (t.end is None or lost < t.end):
            t.end, t.ended_by = lost, "lease-lost"
    held = [t for t in tenures if t.definite]

    overlaps = _overlaps(held, leases)
    stale = [_stale_write(w, held) for w in writes]
    stale_writes = [(w, kind) for w, kind in zip(writes, stale, strict=True) if kind is not None]
    handovers = [h for t in held if (h := _handover(t, held, leases, writes)) is not None]

    violations: list[str] = []
    for o in overlaps:
        if o["kind"] == "lease-valid":
            violations.append(o["explanation"])
    stale_accepted = [_describe_write(w, kind, held, leases) for w, kind in stale_writes
                      if w.get("accepted")]  # fmt: skip
    stale_rejected = [_describe_write(w, kind, held, leases) for w, kind in stale_writes
                      if not w.get("accepted")]  # fmt: skip
    violations += [s["explanation"] for s in stale_accepted]

    valid: Validity
    if violations:
        valid = False
    elif (not held and not writes) or any(o["kind"] == "lease-unknown" for o in overlaps):
        valid = UNKNOWN
    else:
        valid = True

    head = (
        f"{len(held)} holdings, {len(writes)} writes at the resource; "
        f"{len(overlaps)} overlapping holder pairs "
        f"({sum(o['kind'] == 'lease-valid' for o in overlaps)} while the earlier lease was "
        f"valid), {len(stale_accepted)} stale writes accepted, "
        f"{len(stale_rejected)} stale writes rejected by fencing."
    )
    if valid is True and stale_rejected:
        head += " Fencing stopped every stale write."
    if valid == UNKNOWN and not held:
        head += " Nothing was held: this run proves nothing about mutual exclusion."
    return CheckResult(
        NAME,
        valid,
        "\n\n".join([head, *violations]),
        {
            "holdings": len(held),
            "writes": len(writes),
            "overlaps": overlaps,
            "stale_accepted": stale_accepted,
            "stale_rejected": stale_rejected,
            "handovers": handovers,
            "violations": violations,
        },
    )


# --- building blocks -------------------------------------------------------------------


def _tenures(history: History, take: Sequence[str], give: Sequence[str]) -> list[Tenure]:
    out: list[Tenure] = []
    current: dict[Process, Tenure] = {}
    for pair in history.client_ops().pairs():
        inv, comp = pair.invoke, pair.completion
        if inv.f in take:
            if pair.type == "fail":
                continue
            val = comp.value if comp is not None and isinstance(comp.value, dict) else {}
            asked = inv.value if isinstance(inv.value, dict) else {}
            token = val.get("token", val.get("epoch"))
            start = comp.time if pair.type == "ok" and comp is not None else None
            name = val.get("name", asked.get("name"))
            t = Tenure(inv.process, inv.time, start, token, val.get("lease"), name)
            out.append(t)
            current[inv.process] = t
        elif inv.f in give and inv.process in current:
            t = current.pop(inv.process)
            t.end = inv.time
            t.ended_by = {"ok": "released", "fail": "release-failed"}.get(
                pair.type, "release-unknown"
            )
    return out


def _leases(events: Iterable[dict[str, Any]]) -> dict[Any, LeaseFacts]:
    out: dict[Any, LeaseFacts] = {}
    for e in events:
        lease = e.get("lease")
        if lease is None:
            continue
        facts = out.setdefault(lease, LeaseFacts())
        if e.get("ttl") is not None:
            facts.ttl = float(e["ttl"])
        kind = e.get("event")
        if kind in ("lease-granted", "keepalive"):
            facts.acks.append((int(e.get("sent", e["time"])), int(e["time"])))
        elif kind == "lease-lost" and facts.lost_at is None:
            facts.lost_at = int(e["time"])
    return out


def _overlaps(held: list[Tenure], leases: dict[Any, LeaseFacts]) -> list[dict[str, Any]]:
    out = []
    for i, a in enumerate(held):
        for b in held[i + 1 :]:
            if a.process == b.process or a.name != b.name:
                continue
            first, later = (a, b) if (a.start or 0) <= (b.start or 0) else (b, a)
            assert first.start is not None and later.start is not None
            first_end = first.end if first.end is not None else float("inf")
            if not later.start < first_end:
                continue
            facts = leases.get(first.lease)
            if facts is None or not facts.acks:
                kind = "lease-unknown"
            elif facts.certainly_alive(later.start):
                kind = "lease-valid"
            else:
                kind = "lease-expired"
            out.append({
                "kind": kind,
                "first": _tenure_dict(first),
                "later": _tenure_dict(later),
                "explanation": _explain_overlap(kind, first, later, facts),
            })  # fmt: skip
    return out


def _stale_write(w: dict[str, Any], held: list[Tenure]) -> str | None:
    """``"token"`` when the token is below the highest seen, ``"unfenced"`` when a
    tokenless write arrived after someone acquired later than its writer, else None."""
    token, highest = w.get("token"), w.get("highest_before")
    if token is not None:
        return "token" if highest is not None and token < highest else None
    mine = _tenure_at(w["writer"], int(w["time"]), held, w.get("resource"))
    if mine is None or mine.start is None:
        return None
    later = [
        t for t in held
        if t.process != mine.process and t.name == mine.name and mine.start < (t.start or 0)
    ]  # fmt: skip
    return "unfenced" if any((t.start or 0) < int(w["time"]) for t in later) else None


def _tenure_at(
    process: Process, t: int, held: list[Tenure], resource: str | None = None
) -> Tenure | None:
    """``process``'s latest holding (of ``resource``, when named) begun before ``t``."""
    mine = [
        x for x in held
        if x.process == process and x.invoked <= t and x.name in (None, resource)
    ]  # fmt: skip
    return max(mine, key=lambda x: x.invoked) if mine else None


def _handover(
    t: Tenure, held: list[Tenure], leases: dict[Any, LeaseFacts], writes: list[dict[str, Any]]
) -> dict[str, Any] | None:
    """Expiry, danger window and handover delay after ``t`` ended without a release."""
    if t.ended_by == "released" or t.start is None:
        return None
    nexts = [
        x for x in held
        if x.process != t.process and x.name == t.name and (x.start or 0) > t.start
    ]  # fmt: skip
    if not nexts:
        return None
    nxt = min(nexts, key=lambda x: x.start or 0)
    facts = leases.get(t.lease, LeaseFacts())
    expiry = facts.expiry(before=facts.lost_at)
    own_next = [x.invoked for x in held if x.process == t.process and x.invoked > t.invoked]
    until = min(own_next, default=None)
    mine = [
        int(w["time"]) for w in writes
        if w.get("writer") == t.process and int(w["time"]) >= t.invoked
        and (until is None or int(w["time"]) < until) and t.name in (None, w.get("resource"))
    ]  # fmt: skip
    late = [m for m in mine if expiry is not None and m > expiry]
    return {
        "process": t.process,
        "name": t.name,
        "token": t.token,
        "lease": t.lease,
        "ended_by": t.ended_by,
        "lease_expiry": expiry,
        "last_write_arrival": max(mine) if mine else None,
        "danger_window_s": None if expiry is None else (max(late) - expiry) / _NS if late else 0.0,
        "next_process": nxt.process,
        "next_token": nxt.token,
        "next_acquired": nxt.start,
        "handover_delay_s": None if expiry is None else ((nxt.start or 0) - expiry) / _NS,
    }


# --- plain language --------------------------------------------------------------------


def _s(ns: int | float | None) -> str:
    return "?" if ns is None else f"{ns / _NS:.3f} s"


def _tenure_dict(t: Tenure) -> dict[str, Any]:
    return {"process": t.process, "name": t.name, "token": t.token, "lease": t.lease,
            "acquired": t.start, "until": t.end, "ended_by": t.ended_by}  # fmt: skip


def _explain_overlap(kind: str, a: Tenure, b: Tenure, facts: LeaseFacts | None) -> str:
    held = f"process {a.process} (token {a.token}, acquired at {_s(a.start)})"
    until = "to the end of the run" if a.end is None else f"until {_s(a.end)} ({a.ended_by})"
    got = f"process {b.process} acquired it (token {b.token}) at {_s(b.start)}"
    if kind == "lease-valid":
        assert facts is not None and facts.ttl is not None
        renewed = max(s for s, _ in facts.acks if s <= (b.start or 0))
        return (
            f"Two holders at once: {got} while {held} still held it, {until}. The earlier "
            f"holder's lease was renewed by a request sent at {_s(renewed)} with a TTL of "
            f"{facts.ttl:g} s, so it was still valid: the lock service granted a lock whose "
            "lease had not expired. This is a mutual-exclusion violation by the service "
            "itself; fencing can at best limit the damage."
        )
    if kind == "lease-expired":
        return (
            f"{held} still believed it held the lock {until}, but its lease may already have "
            f"expired when {got}. This is what a paused holder looks like; whether it did "
            "harm is decided by the resource (see stale writes)."
        )
    return (
        f"{got} while {held} believed it held it, {until}; there are no lease events for "
        "the earlier holder, so whether its lease was still valid cannot be told."
    )


def _describe_write(
    w: dict[str, Any], kind: str, held: list[Tenure], leases: dict[Any, LeaseFacts]
) -> dict[str, Any]:
    mine = _tenure_at(w["writer"], int(w["time"]), held, w.get("resource"))
    expiry = leases.get(mine.lease, LeaseFacts()).expiry() if mine is not None else None
    arrival = int(w["time"])
    if expiry is None:
        window = ""
    elif arrival > expiry:
        window = (
            f" Its lease had expired by {_s(expiry)}; the write arrived "
            f"{_s(arrival - expiry)} later (the danger window)."
        )
    else:
        window = f" Its lease was renewed until about {_s(expiry)}."
    what = (
        f"Process {w['writer']} wrote {w.get('value')!r} to {w.get('resource')!r} with "
        f"token {w.get('token')} at {_s(w['time'])}, after the resource had seen token "
        f"{w.get('highest_before')}."
        if kind == "token"
        else f"Process {w['writer']} wrote {w.get('value')!r} to {w.get('resource')!r} "
        f"without a token at {_s(w['time'])}, after another process had acquired the "
        "lock after it."
    )
    if w.get("accepted"):
        verdict = (
            " The resource accepted it: a holder that had lost the lock overwrote a newer "
            "holder's data (fencing off, or no token to check). This is the corruption a "
            "fencing token exists to prevent."
        )
    else:
        verdict = " The resource rejected it: fencing stopped the stale holder, as designed."
    return {
        "kind": kind,
        "write": w,
        "lease_expiry": expiry,
        "explanation": what + window + verdict,
    }
