"""Owner-aware mutex linearizability of the clients' acquire/release history, lease-aware.

For runs whose target claims linearizable locks (test.json's ``linearizable_locks``, from
the target's ``TargetSpec``), the clients' ``acquire``/``release`` operations are checked
by ``checkers.linearizability`` against the ``mutex`` model: one holder at a time, only
the holder releases.

A lease is part of the lock's contract, and the plain model does not know it. A holder
frozen past its TTL loses the lock *by design*: the service frees it at the lease's expiry,
and the next acquire is legal, though the frozen holder never released. Checked as is,
every correct run with a client pause would be reported non-linearizable. So, honestly:
**a lost lease is a release at its expiry**. For each holding that did not end in a
release sent while its lease was surely alive, the history gets a ``release`` by the
holder whose interval is the window in which the lease ended
(``checkers.leases.LeaseFacts.end_bounds``: exact from the service's own log when it keeps
one; else from the last acknowledged keepalive: sent + TTL to received + TTL, or to the
latest end the service's documented rule allows, ``checkers.expiry``); the
holder's own late release, if any, is folded into that window (the lock was freed by
whichever came first). The search may place the release anywhere in the window, no
earlier: a service that granted the lock while the lease was still valid (the sim's
``lock-ignores-lease``) stays non-linearizable, and correct runs with fencing pass.

A holding that ended without a release and without any lease record cannot be placed: if
the history is then not linearizable, the verdict is unknown, not invalid.

A lease's end is no operation of its holder's process: a holder whose release failed (its
server was killed) goes on invoking acquires, under new leases, while the old lease has not
yet ended. So each holding whose end is placed gets an owner of its own, "P (lease L)", for
its acquire and that release: the model still allows one owner at a time, and the process's
later operations never overlap the placed end (which made the history malformed). Failed
acquires and releases are left out: they certainly did not happen, the model ignores them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from checkers import linearizability
from checkers.anomalies import KEY
from checkers.expiry import AT_DEADLINE, ExpiryRule, expiry_rule
from checkers.holdings import LOCK, Holding, Terms, declared, holdings
from checkers.leases import LeaseFacts, lease_facts
from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult, Validity
from checkers.shrink_holdings import shrink_result
from checkers.words import plural
from core.history import History, Pair
from core.ops import Op

NAME: Final = "mutex-linearizability"
MODEL: Final = "mutex"


@dataclass(frozen=True, slots=True)
class LeaseEnds:
    """The history to check and how many lease ends were placed, and from what."""

    history: History
    by_service: int
    by_keepalives: int
    unplaced: int


def with_lease_ends(
    history: History,
    events: Iterable[dict[str, Any]] = (),
    service_events: Iterable[dict[str, Any]] = (),
    terms: Terms = LOCK,
    rule: ExpiryRule = AT_DEADLINE,
) -> LeaseEnds:
    """The take/give operations of ``history`` with each lost lease as a release at its
    end (see the module docstring; by the latest the service's expiry ``rule`` allows),
    keyed by lock name when there are several locks."""
    leases = lease_facts(events, service_events, rule)
    everything = holdings(history, terms)
    ops: list[tuple[int, int, Op]] = []  # (time, tie-break, op)
    names = {
        _name(p) for p in history.client_ops().pairs() if p.invoke.f in (*terms.take, *terms.give)
    }
    keyed = len(names - {None}) > 1
    drop: set[int] = set()
    owners: dict[int, Any] = {}  # op index -> the owner of its holding, when renamed
    takes = {
        (pair.invoke.process, pair.invoke.time): pair
        for pair in history.client_ops().pairs()
        if pair.invoke.f in terms.take
    }
    counts = {"service": 0, "keepalives": 0, "unplaced": 0}
    end = history[-1].time + 1 if len(history) else 1
    for h in everything:
        if h.start is None:
            continue
        facts = leases.get(h.lease)
        window = _lease_end(h, facts, end)
        if window is None:
            if h.ended_by != "released":
                counts["unplaced"] += 1
            continue
        lo, hi = window
        if h.give is not None:
            drop.update(op.index for op in (h.give.invoke, h.give.completion) if op is not None)
        assert facts is not None
        counts["service" if facts.has_service_account else "keepalives"] += 1
        key = h.name if keyed else None
        owner = f"{h.process} (lease {h.lease})"
        take = takes[(h.process, h.invoked)]
        owners.update((op.index, owner) for op in (take.invoke, take.completion) if op is not None)
        value = {"lease_end": True, "lease": h.lease, "name": h.name}
        ops.append((lo, -1, Op(0, lo, owner, "invoke", terms.give[0], value, key)))
        ops.append((hi, 1 << 62, Op(0, hi, owner, "ok", terms.give[0], value, key)))
    for pair in history.client_ops().pairs():
        if pair.invoke.f not in (*terms.take, *terms.give) or pair.type == "fail":
            continue
        key = _name(pair) if keyed else None
        for op in (pair.invoke, pair.completion):
            if op is not None and op.index not in drop:
                owner = owners.get(op.index, op.process)
                ops.append((op.time, op.index, op.with_(key=key, process=owner)))
    ops.sort(key=lambda x: (x[0], x[1]))
    out = History(op.with_(index=i) for i, (_, _, op) in enumerate(ops))
    return LeaseEnds(out, counts["service"], counts["keepalives"], counts["unplaced"])


DEFAULT_TIME_LIMIT: Final = 60.0
"""Seconds the search may spend when the check is given no limit."""


def check_record(record: RunRecord) -> CheckResult:
    """Check a lock run's lease-aware acquire/release history against the mutex model,
    within the check's time limit; an invalid result carries its fewest holdings that
    still cannot be ordered (``shrunk``, ``checkers.shrink_holdings``)."""
    return shrink_result(judged(record), record, judged, LOCK)


def judged(record: RunRecord) -> CheckResult:
    """The owner-aware mutex result of ``record``, without its shrink."""
    ends = with_lease_ends(
        record.history,
        record.events,
        record.service_events,
        declared(record.test, LOCK),
        rule=expiry_rule(record.test),
    )
    r = linearizability.check(
        ends.history, MODEL, record.time_limit(DEFAULT_TIME_LIMIT), budget=record.limits.budget
    )
    placed = ends.by_service + ends.by_keepalives
    how = (
        f"with {plural(placed, 'lost or unreleased lease')} each counted as a release "
        f"when it ended ({ends.by_service} placed by the service's own log, "
        f"{ends.by_keepalives} by keepalive acknowledgements)"
    )
    details = {
        **r.details,
        "lease_ends": placed,
        "lease_ends_by_service": ends.by_service,
        "lease_ends_by_keepalives": ends.by_keepalives,
        "unplaced": ends.unplaced,
    }
    valid: Validity = r.valid
    if r.valid is True:
        summary = (
            f"Linearizable as an owner-aware mutex: {details.get('ops', 0)} acquire and "
            f"release operations, {how}."
        )
    elif r.valid is False and ends.unplaced:
        valid = UNKNOWN
        summary = (
            f"Cannot tell: not linearizable as an owner-aware mutex {how}, but "
            f"{plural(ends.unplaced, 'holding')} ended without a release and without "
            f"any lease record to say when its lease ended. {r.summary}"
        )
        details["reason"] = "lease ends that cannot be placed"
        details.pop(KEY, None)  # no violation to name
    elif r.valid is False:
        why = str(r.details.get("counterexample", {}).get("sentences", [r.summary])[0])
        why = why.removeprefix("Not linearizable: ")
        summary = (
            f"Not linearizable as an owner-aware mutex, even {how}: {why} The lock was "
            "granted while another process held it under a lease that had not ended "
            "(or a release came from a process that did not hold it)."
        )
    else:
        summary = r.summary
    if valid is False:
        details["violations"] = [summary]
    return CheckResult(NAME, valid, summary, details)


def _lease_end(h: Holding, facts: LeaseFacts | None, end: int) -> tuple[int, int] | None:
    """The window in which ``h``'s hold ended by its lease, or None when it ended by a
    release sent while the lease was surely alive (or nothing says when it ended)."""
    bounds = facts.end_bounds() if facts is not None else None
    if bounds is None:
        return None
    lo, latest = bounds
    hi = end if latest is None else latest
    give = h.give
    if give is not None and give.type == "ok" and give.invoke.time < lo:
        return None  # a clean release: the lease was alive when it was sent
    if give is not None and give.type == "ok":
        assert give.completion is not None
        hi = min(hi, give.completion.time)  # freed by the release or the expiry, first
    elif give is not None and not (
        give.type == "fail" and facts is not None and facts.ended_at is not None
    ):
        # an unknown release may have freed it; after a failed one the client revokes,
        # which only the service's log (exact when it has one) records
        lo = min(lo, give.invoke.time)
    assert h.start is not None
    lo = max(lo, h.start + 1)  # after the acquire's completion, in the holder's own order
    return lo, max(hi, lo)


def _name(pair: Pair) -> Any:
    for v in (pair.invoke.value, pair.completion.value if pair.completion else None):
        if isinstance(v, dict) and v.get("name") is not None:
            return v["name"]
    return None
