"""What a run recorded about each lease: the client's acknowledgements and, when the
service keeps a log of its own, the service's account.

Two sources, read into one ``LeaseFacts`` per lease id:

- the client events (``workloads.common.lease``): ``lease-granted`` and ``keepalive`` with the
  time the request left (``sent``) and the time its answer arrived (``time``), and
  ``lease-lost`` when the holder noticed the loss, ``still-held`` when a lock library
  answered whether it still held (when it was asked and said yes: ``checkers.blame``),
  ``lease-ended`` when the client let it go (a release, or its worker closing: ``sent`` is
  the first instant the service may have freed what the lease held);
- the service's own events (the sim server's ``run_dir/sim/events.jsonl``):
  ``lease-granted`` / ``lease-renewed`` (the instant it set a new deadline),
  ``lease-expired`` (with the ``deadline`` that passed) and ``lease-revoked``; and the
  instants it freed what the lease held because a release asked it to (``lock-released``
  with reason ``released``, ``leader-resigned`` with ``resigned``): whose lock a release
  freed, which the clients' times alone cannot tell of a release in flight at a grant.

What each source can prove. A renewal sent at ``s`` and acknowledged was processed no
earlier than ``s``, so the service's deadline was at least ``s + ttl``: the lease was
*certainly* valid before then, whatever happened next (``certainly_alive``). Its deadline
was at most ``received + ttl`` if nothing renewed it later. The service's log is exact:
the lease was alive by its own account from its grant until it logged the lease's end
(``service_alive``).

A service may keep a lease past its deadline by a documented rule (``checkers.expiry``:
Consul's sessions end up to twice their TTL after the last renewal): each lease's facts
carry the run's rule, and the latest end is the rule's (``expiry_window``, ``end_bounds``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from checkers.expiry import AT_DEADLINE, ExpiryRule
from core.ops import Process

_NS = 1_000_000_000


@dataclass(slots=True)
class LeaseFacts:
    """Everything recorded about one lease."""

    ttl: float | None = None
    process: Process | None = None
    acks: list[tuple[int, int]] = field(default_factory=list)  # (sent, received), client
    local: set[tuple[int, int]] = field(default_factory=set)  # acks that prove nothing
    lost_at: int | None = None
    lost_reason: str | None = None
    trouble: list[tuple[int, str]] = field(default_factory=list)  # client: (time, what it saw)
    said_ttl: float | None = None  # client: the shortest TTL the service answered a renewal with
    let_go_at: int | None = None  # client: when it started letting the lease go
    let_go_reason: str | None = None  # client: released | closed | not granted
    said_held: list[int] = field(default_factory=list)  # client: asked, a library said "held"
    renewed: list[int] = field(default_factory=list)  # service: grant and renewal instants
    ended_at: int | None = None  # service: when it logged the lease's end
    ended_by: str | None = None  # service: "expired" or "revoked"
    deadline: int | None = None  # service: the deadline that passed, for "expired"
    freed: list[int] = field(default_factory=list)  # service: what it held freed, asked to
    rule: ExpiryRule = AT_DEADLINE  # the run's: how late past its deadline a lease may end

    @property
    def has_service_account(self) -> bool:
        """Whether the service's own log mentions this lease."""
        return bool(self.renewed) or self.ended_at is not None

    @property
    def bound_ttl(self) -> float | None:
        """The TTL that bounds the lease: the one asked for, or the service's answer when
        it granted less (a ZooKeeper session timeout is negotiated)."""
        if self.said_ttl is None:
            return self.ttl
        return self.said_ttl if self.ttl is None else min(self.said_ttl, self.ttl)

    def _ttl_ns(self) -> int | None:
        ttl = self.bound_ttl
        return None if ttl is None else int(ttl * _NS)

    @property
    def proofs(self) -> list[tuple[int, int]]:
        """The acknowledgements that prove the service renewed the lease: all but those a
        single server answered from its own state (``local`` in the keepalive event: a
        ZooKeeper follower answers a read even when cut off from its leader, which alone
        expires sessions)."""
        return [a for a in self.acks if a not in self.local]

    def certainly_alive(self, t: int) -> bool:
        """True when a renewal sent less than a TTL before ``t`` was acknowledged by the
        service (not by a server on its own): the service renewed it no earlier than it
        was sent, so it was alive at ``t``."""
        ttl = self._ttl_ns()
        return ttl is not None and any(sent <= t < sent + ttl for sent, _ in self.proofs)

    def first_trouble(self, lo: int, hi: int) -> tuple[int, str] | None:
        """The first sign of trouble the client saw in ``[lo, hi]``: a failed renewal, a
        connection or session its driver reported lost."""
        seen = [x for x in self.trouble if lo <= x[0] <= hi]
        return min(seen) if seen else None

    def last_ack_before(self, t: int) -> tuple[int, int] | None:
        """The last acknowledged (sent, received) whose answer arrived by ``t``."""
        acks = [a for a in self.acks if a[1] <= t]
        return max(acks, key=lambda a: a[1]) if acks else None

    def service_alive(self, t: int) -> bool | None:
        """Alive at ``t`` by the service's own log (None: the service kept no account)."""
        if not self.has_service_account:
            return None
        began = min(self.renewed, default=self.ended_at)
        return began is not None and began <= t and (self.ended_at is None or t < self.ended_at)

    def service_deadline(self, t: int) -> int | None:
        """The deadline the service had set at ``t`` (last grant or renewal + TTL)."""
        ttl = self._ttl_ns()
        renewals = [r for r in self.renewed if r <= t]
        return None if ttl is None or not renewals else max(renewals) + ttl

    def expiry(self, before: int | None = None) -> int | None:
        """Client estimate of the expiry: last acknowledgement received (by ``before``)
        plus the TTL, an upper bound on the service's deadline."""
        ttl = self._ttl_ns()
        acks = [r for _, r in self.acks if before is None or r <= before]
        return None if ttl is None or not acks else max(acks) + ttl

    def best_expiry(self, before: int | None = None) -> tuple[int | None, str]:
        """The expiry (as it stood at ``before``) and where it comes from: the service's
        logged deadline, or the deadline its log implies (``"service"``), else the client
        estimate (``"client"``), else ``(None, "none")``."""
        if self.ended_by == "expired" and self.deadline is not None:
            return self.deadline, "service"
        implied = self.service_deadline(before if before is not None else 1 << 62)
        if implied is not None:
            return implied, "service"
        estimate = self.expiry(before)
        return (estimate, "client") if estimate is not None else (None, "none")

    def expiry_window(self, before: int | None = None) -> tuple[int | None, int | None, str]:
        """``(earliest, latest, source)``: ``best_expiry`` and the latest end the service's
        rule allows after it (the same instant by the plain rule, or when the service's
        own log says when it ended)."""
        expiry, source = self.best_expiry(before)
        if expiry is None or source == "service":
            return expiry, expiry, source
        return expiry, self.rule.latest(expiry, self.bound_ttl), source

    def end_bounds(self) -> tuple[int, int | None] | None:
        """When the lease ended, as ``(earliest, latest)`` ns (latest None: not before
        the end of the run); None when nothing was recorded about it.

        The service's log is exact (an expiry between its deadline and the log line, a
        revocation at its log line). Without it, an acknowledged lease ended between the
        last renewal's send time + TTL and its arrival + TTL (or the latest end the
        service's rule allows after that), or earlier when the client let it go (a revoke
        sent when it released or closed may free it from then on)."""
        if self.ended_at is not None:
            lo = self.deadline if self.ended_by == "expired" and self.deadline else self.ended_at
            return min(lo, self.ended_at), self.ended_at
        if self.has_service_account:
            return (max(self.renewed) + (self._ttl_ns() or 0), None)
        ttl = self._ttl_ns()
        if ttl is None or not self.acks:
            return None
        proofs = self.proofs or self.acks
        lo, hi = max(s for s, _ in proofs) + ttl, max(r for _, r in self.acks) + ttl
        hi = self.rule.latest(hi, self.bound_ttl)
        if self.let_go_at is not None and self.let_go_at < lo:
            lo = self.let_go_at
        return lo, hi


def lease_facts(
    client_events: Iterable[dict[str, Any]],
    service_events: Iterable[dict[str, Any]] = (),
    rule: ExpiryRule = AT_DEADLINE,
) -> dict[Any, LeaseFacts]:
    """The facts of every lease mentioned by either source, by lease id, under the
    service's expiry ``rule``."""
    out: dict[Any, LeaseFacts] = {}
    for e in client_events:
        lease = e.get("lease")
        if lease is None:
            continue
        facts = out.setdefault(lease, LeaseFacts(rule=rule))
        if e.get("ttl") is not None:
            facts.ttl = float(e["ttl"])
        facts.process = e.get("process", facts.process)
        kind = e.get("event")
        if kind in ("lease-granted", "keepalive"):
            ack = (int(e.get("sent", e["time"])), int(e["time"]))
            facts.acks.append(ack)
            if kind == "keepalive" and e.get("local"):
                facts.local.add(ack)
            if e.get("service_ttl") is not None:
                said = float(e["service_ttl"])
                facts.said_ttl = said if facts.said_ttl is None else min(facts.said_ttl, said)
        elif kind == "lease-lost" and facts.lost_at is None:
            facts.lost_at, facts.lost_reason = int(e["time"]), e.get("reason")
        elif kind == "keepalive-failed":
            facts.trouble.append(
                (int(e.get("sent", e["time"])), f"a renewal failed ({e.get('error', 'no answer')})")
            )
        elif kind == "session-state" and e.get("state") in ("SUSPENDED", "LOST"):
            what = "its connection" if e["state"] == "SUSPENDED" else "its session"
            facts.trouble.append(
                (int(e["time"]), f"its client reported {what} lost ({e['state']})")
            )
        elif kind == "still-held" and e.get("held") is True:
            facts.said_held.append(int(e.get("sent", e["time"])))
        elif kind == "lease-ended" and facts.let_go_at is None:
            facts.let_go_at = int(e.get("sent", e["time"]))
            facts.let_go_reason = e.get("reason")
    for e in service_events:
        lease, kind = e.get("lease"), e.get("event")
        if lease is not None and kind in _ASKED and e.get("reason") == _ASKED[kind]:
            out.setdefault(lease, LeaseFacts(rule=rule)).freed.append(int(e["time"]))
            continue
        if lease is None or kind not in _SERVICE_LEASE_EVENTS:
            continue
        facts = out.setdefault(lease, LeaseFacts(rule=rule))
        if e.get("ttl") is not None and facts.ttl is None:
            facts.ttl = float(e["ttl"])
        if kind in ("lease-granted", "lease-renewed"):
            facts.renewed.append(int(e["time"]))
        elif facts.ended_at is None:
            facts.ended_at = int(e["time"])
            facts.ended_by = "expired" if kind == "lease-expired" else "revoked"
            if e.get("deadline") is not None:
                facts.deadline = int(e["deadline"])
    return out


_SERVICE_LEASE_EVENTS = ("lease-granted", "lease-renewed", "lease-expired", "lease-revoked")
_ASKED = {"lock-released": "released", "leader-resigned": "resigned"}
"""The service's events of what a lease held freed, and the reason a release gives."""
