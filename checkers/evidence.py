"""Which records each checker needs, and whether those records hold up against each other.

A checker's verdict is only as good as the records it reads. A run directory holds
several, each written by another party: the history (the harness's runner), the
protected resource's write log (the resource's own process), the clients' events and,
for a service that keeps one, the service's own log (the sim server). They must agree:
a write the history acknowledges was written to the resource before it was answered, so
it is in the resource's log; a grant a client saw was logged by the service that made
it. A record that is missing, cut short or that holds less than another implies was
lost or changed after the run, and a verdict drawn from it would be drawn from what is
no longer the run's evidence: neither valid (the violation may be in the part that is
gone) nor invalid (the part that is left may not be the run's).

This module is the one place that says so. ``KINDS`` has one entry per kind of record:
its file and the relation it must keep with the others, a function that returns the one
sentence saying what is wrong (None: nothing). ``NEEDS`` says which kinds each checker
reads (by the checker's name); a checker not listed reads the history alone.
``harness.analysis`` reads the files (``RunRecord.readings``), asks ``problems`` about
the kinds its checkers need and turns each checker whose record is broken into an
unknown with the reason (``guard``); the run's verdict then follows the usual rules
(``checkers.result.overall``).

A record made in memory (a test's ``RunRecord``, no readings) is not judged here: only
what was read from files can be missing or cut short.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from checkers import election, fencing, herd, mutex, mutex_lin, watch_delivery, watch_latency
from checkers.holdings import ELECTION, LOCK, service_grants
from checkers.record import Reading, RunRecord
from checkers.result import UNKNOWN, CheckResult
from checkers.words import plural, secs
from core.ops import Op

HISTORY: Final = "history"
RESOURCE: Final = "resource"
EVENTS: Final = "events"
SERVICE: Final = "service"

WRITE: Final = "write"
"""The operation of a holder's write to the protected resource (``workloads.common.critical``)."""
GRANTS: Final = (LOCK, ELECTION)
"""The kinds of grant a client sees and a service logs (``checkers.holdings``): a lock's
take and its service's grant event, an election's."""

Relation = Callable[[RunRecord, Reading], str | None]
"""A record kind's relation: the one sentence saying what is wrong with its reading in
this run (missing, cut short, less than the others imply), None when it holds up."""


@dataclass(frozen=True, slots=True)
class RecordKind:
    """One kind of record: what it holds and the relation it must keep."""

    name: str
    holds: str
    relation: Relation


NEEDS: Final[dict[str, tuple[str, ...]]] = {
    mutex.NAME: (HISTORY, RESOURCE, EVENTS, SERVICE),
    fencing.NAME: (HISTORY, RESOURCE, EVENTS, SERVICE),
    mutex_lin.NAME: (HISTORY, EVENTS, SERVICE),
    election.NAME: (HISTORY, RESOURCE, EVENTS, SERVICE),
    herd.NAME: (HISTORY, EVENTS),
    watch_delivery.NAME: (HISTORY, EVENTS),
    watch_latency.NAME: (HISTORY, EVENTS),
}
"""The records each checker's verdict rests on, by its name (``CheckResult.checker``);
not listed: the history alone (``stats``, ``faults``, ``ids``, ``guarded``,
``discovery``: the fault windows they judge come from the history's nemesis operations;
``linearizability`` reads the clients' ``served`` events only to name the cause of a
stale read it found, not to find it)."""


def needs(checker: str) -> tuple[str, ...]:
    """The kinds of record ``checker`` reads."""
    return NEEDS.get(checker, (HISTORY,))


# --- the relations -------------------------------------------------------------------


def _finished(record: RunRecord) -> bool:
    """Whether test.json says the run finished: its writers closed every record whole."""
    return record.test.get("status") == "finished"


def _cut(r: Reading, record: RunRecord) -> str | None:
    """A last line cut mid-JSON in a run that finished (a killed run leaves one, but a
    finished run closed its records whole: the file was cut after the run)."""
    if r.cut_line is None or not _finished(record):
        return None
    return (
        f"{r.file} ends in a line cut short mid-JSON (line {r.cut_line}) though the run "
        "finished: it was cut after the run"
    )


def _acknowledged_writes(record: RunRecord) -> list[Op]:
    """The client writes to the resource that the history says were accepted (ok)."""
    return [op for op in record.history.client_ops() if op.type == "ok" and op.f == WRITE]


def _int(x: Any) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def _number_of(value: Any) -> int | None:
    """The fencing number an ok write or take carries (its ``token`` or ``epoch``)."""
    if not isinstance(value, dict):
        return None
    return _int(value.get("token", value.get("epoch")))


def _told(op: Op, what: str) -> str:
    """An acknowledged op in a few words: ``process 1's write with token 41, acknowledged
    at 27.105 s``."""
    value = op.value if isinstance(op.value, dict) else {}
    number = next(
        (f" with {k} {value[k]}" for k in ("token", "epoch") if _int(value.get(k)) is not None), ""
    )
    return f"process {op.process}'s {what}{number}, acknowledged at {secs(op.time)}"


def _key(x: Any) -> Any:
    """``x`` as a key to count by: itself when hashable, else its repr (a record edited
    to hold a list where a number was is matched by its text, never a crash)."""
    try:
        hash(x)
    except TypeError:
        return repr(x)
    return x


def _unmatched(wanted: Sequence[tuple[Any, Any, Op]], have: Iterable[tuple[Any, Any]]) -> list[Op]:
    """The ops of ``wanted`` (who, number, op) with no entry of ``have`` (who, number) to
    match, each entry matching once; a number None matches any entry of the same who."""
    left = Counter((_key(who), _key(number)) for who, number in have)
    by_who = Counter(who for who, _ in left.elements())
    missing: list[Op] = []
    for who_, number_, op in sorted(wanted, key=lambda w: w[1] is None):
        who, number = _key(who_), _key(number_)
        if number is not None and left[(who, number)] > 0:
            left[(who, number)] -= 1
            by_who[who] -= 1
        elif number is None and by_who[who] > 0:
            by_who[who] -= 1
        else:
            missing.append(op)
    return missing


def _resource(record: RunRecord, r: Reading) -> str | None:
    """Every write the history acknowledges is in the resource's log, accepted (the
    resource logs a write before it answers); the log may hold more (writes whose
    answer was lost: ``info``), never fewer."""
    acked = _acknowledged_writes(record)
    if not r.present:
        return (
            f"{r.file} is missing but the history acknowledges {plural(len(acked), 'write')}"
            if acked
            else None
        )
    cut = _cut(r, record)
    if cut is not None:
        return cut
    accepted = [w for w in record.resource_log if w.get("accepted")]
    if not acked:
        return None
    if not r.entries:
        return f"{r.file} is empty but the history acknowledges {plural(len(acked), 'write')}"
    missing = _unmatched(
        [(op.process, _number_of(op.value), op) for op in acked],
        ((w.get("writer"), w.get("token")) for w in accepted),
    )
    if not missing:
        return None
    return (
        f"{r.file} has {plural(len(accepted), 'accepted write')} but the history "
        f"acknowledges {len(acked)}; {len(missing)} of them are not in it (the first: "
        f"{_told(missing[0], 'write')})"
    )


def _faults_asked(record: RunRecord) -> bool:
    """Whether test.json says faults were asked for (its ``faults`` or ``nemesis``)."""
    if record.test.get("faults"):
        return True
    asked = record.options.get("nemesis")
    return isinstance(asked, list) and any(n != "none" for n in asked)


def _events(record: RunRecord, r: Reading) -> str | None:
    """The clients' events: the runner opens the file as a run starts, so a run that
    finished, or that asked for faults, has one. Missing, the leases granted, kept alive
    and lost (around the faults, above all) and what watchers were told are gone."""
    if r.present:
        return _cut(r, record)
    if _faults_asked(record):
        return (
            f"{r.file} is missing though the run asked for faults: the leases granted, "
            "kept alive and lost around them are not known"
        )
    if _finished(record):
        return f"{r.file} is missing though the run finished (its runner writes it from the start)"
    return None


def _client_grants(record: RunRecord) -> list[tuple[Any, Any, Op]]:
    """The grants the clients saw (an ok take with a lease and a number): (lease,
    number, op)."""
    takes = {f for terms in GRANTS for f in terms.take}
    out = []
    for op in record.history.client_ops():
        if op.type == "ok" and op.f in takes and isinstance(op.value, dict):
            number, lease = _number_of(op.value), op.value.get("lease")
            if number is not None and lease is not None:
                out.append((lease, number, op))
    return out


def _service(record: RunRecord, r: Reading) -> str | None:
    """Every grant a client saw is in the service's own log, with its lease and number
    (the service logs a grant as it makes it); the log may hold more (grants whose
    answer was lost)."""
    seen = _client_grants(record)
    if not r.present:
        if not seen:
            return None
        grants = plural(len(seen), "grant")
        return f"{r.file}, the service's own log, is missing but the clients saw {grants}"
    cut = _cut(r, record)
    if cut is not None or not seen:
        return cut
    logged = [
        (g.lease, g.number)
        for terms in GRANTS
        for g in service_grants(record.service_events, terms)
    ]
    missing = _unmatched(seen, logged)
    if not missing:
        return None
    return (
        f"{r.file}, the service's own log, has {plural(len(logged), 'grant')} but the "
        f"clients saw {len(seen)}; {len(missing)} of them are not in it (the first: "
        f"{_told(missing[0], 'grant')})"
    )


def _history(record: RunRecord, r: Reading) -> str | None:
    """The history: present by now (a run directory without one is refused); a last
    line cut in a run that finished was cut after it."""
    return _cut(r, record)


KINDS: Final[dict[str, RecordKind]] = {
    HISTORY: RecordKind(HISTORY, "the clients' and the nemesis's operations", _history),
    RESOURCE: RecordKind(RESOURCE, "the protected resource's write log", _resource),
    EVENTS: RecordKind(EVENTS, "the clients' events (leases, keepalives, watches)", _events),
    SERVICE: RecordKind(SERVICE, "the service's own log (test.json's service_log)", _service),
}


def problems(record: RunRecord, kinds: Iterable[str]) -> dict[str, str]:
    """The broken records among ``kinds``, each with the sentence saying why; a kind
    not read from a file (no reading) is not judged. A relation that cannot even read
    the entries (a grant without its time) makes its record broken, never a crash."""
    out = {}
    for kind in dict.fromkeys(kinds):
        reading = record.readings.get(kind)
        if reading is None:
            continue
        try:
            said = KINDS[kind].relation(record, reading)
        except Exception as e:  # an entry without the fields its kind has: edited
            why = f"{type(e).__name__}: {e}"
            said = f"{reading.file} holds an entry that is not one of its kind ({why})"
        if said is not None:
            out[kind] = said
    return out


def unchecked(record: RunRecord, kinds: Iterable[str]) -> list[str]:
    """What could not be cross-checked, and why, though nothing is wrong with it: the
    clients' grants of a service that keeps no log of its own (etcd, ZooKeeper...), or
    whose log an older run did not collect."""
    if SERVICE not in kinds or SERVICE in record.readings or not record.readings:
        return []
    seen = _client_grants(record)
    if not seen:
        return []
    grants = plural(len(seen), "grant")
    if record.keeps_service_log:
        return [
            f"{record.test['service_log']}, the service's own log, was not collected by "
            f"this run (older than its record): the clients' {grants} are not cross-checked"
        ]
    target = record.options.get("target")
    who = f"the service ({target})" if isinstance(target, str) else "the service"
    return [
        f"{who} keeps no log of its grants: the clients' {grants} are not cross-checked "
        "against one (not an inconsistency)"
    ]


def guard(result: CheckResult, broken: dict[str, str]) -> CheckResult:
    """``result``, or unknown with the reason when a record it needs is broken: never
    valid, never invalid on the strength of a broken record. What the checker made of
    the records as they are is kept beside (``on_the_records``), not as its verdict."""
    reasons = [broken[k] for k in needs(result.checker) if k in broken]
    return unknown_for(result, reasons) if reasons else result


def unknown_for(result: CheckResult, reasons: Sequence[str], ran: bool = True) -> CheckResult:
    """``result`` made unknown for ``reasons`` (each a sentence naming a broken record),
    what the checker made of the records as they are kept beside (``ran``: it was run on
    them; else ``result`` is a placeholder naming the checker)."""
    summary = f"{'; '.join(reasons)}: no verdict is drawn from a broken record."
    return CheckResult(
        result.checker,
        UNKNOWN,
        summary,
        {
            "reason": summary,
            "evidence": reasons,
            **(
                {"on_the_records": {"valid": result.valid, "summary": result.summary}}
                if ran
                else {}
            ),
            **{k: result.details[k] for k in ("check_ms",) if k in result.details},
        },
    )
