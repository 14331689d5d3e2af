"""Builders of constructed run records for the coordination checkers' tests.

Times are given in seconds and stored in ns, as a run records them. The mutex, fencing,
election, classification, statistics and workload-check tests build their histories,
resource logs, client lease events, sim-server events and fault operations with these.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from checkers.record import RunRecord
from core.history import History

S = 1_000_000_000
TTL = 10.0

Event = tuple[float, Any, str, str, Any]  # (time s, process, type, f, value)


def run_record(
    resource_log: Iterable[dict[str, Any]],
    history: History,
    events: Iterable[dict[str, Any]] = (),
    service_events: Iterable[dict[str, Any]] = (),
    *,
    fencing: bool | None = None,
    accept_unavailable: bool = False,
) -> RunRecord:
    """The records a checker reads (``check_record``), with the options it reads:
    ``fencing`` (None: not recorded) and ``accept_unavailable``."""
    options: dict[str, Any] = {"accept_unavailable": True} if accept_unavailable else {}
    if fencing is not None:
        options["fencing"] = fencing
    return RunRecord(
        history, list(resource_log), list(events), {"options": options}, list(service_events)
    )


def ns(t: float) -> int:
    return round(t * S)


def history(*events: Event | Iterable[Event]) -> History:
    """(time s, process, type, f, value) tuples (or lists of them) -> a History in time
    order (stable: equal times keep the order given)."""
    flat: list[Event] = []
    for e in events:
        if isinstance(e, tuple):
            flat.append(e)
        else:
            flat.extend(e)
    flat.sort(key=lambda e: e[0])
    return History.from_events(
        {"time": ns(t), "process": p, "type": ty, "f": f, "value": v} for t, p, ty, f, v in flat
    )


def holding(
    process: Any,
    t0: float,
    t1: float,
    token: int | None,
    lease: Any,
    name: str = "lock",
    release: float | None = None,
    released: str = "ok",
    take: str = "acquire",
    give: str = "release",
) -> list[Event]:
    """An acquire invoked at ``t0`` and ok at ``t1`` with ``token`` and ``lease``, then,
    when ``release`` is given, a release invoked then and completed (``released``: ok,
    fail or info) 10 ms later."""
    number = "epoch" if take == "campaign" else "token"
    ok: dict[str, Any] = {"lease": lease, "name": name}
    if token is not None:
        ok[number] = token
    out: list[Event] = [
        (t0, process, "invoke", take, {"name": name}),
        (t1, process, "ok", take, ok),
    ]
    if release is not None:
        out += [
            (release, process, "invoke", give, {"name": name}),
            (release + 0.01, process, released, give, None),
        ]
    return out


def lease_events(
    process: Any,
    lease: Any,
    acks: list[float],
    lost: float | None = None,
    ttl: float = TTL,
    lock: str = "lock",
) -> list[dict[str, Any]]:
    """Client events: lease-granted at acks[0], keepalives at the rest (each sent 1 ms
    before its acknowledgement), maybe a loss."""
    out = [
        {
            "time": ns(acks[0]),
            "sent": ns(acks[0]) - 1_000_000,
            "process": process,
            "event": "lease-granted",
            "lease": lease,
            "ttl": ttl,
            "lock": lock,
        }
    ]
    out += [
        {
            "time": ns(t),
            "sent": ns(t) - 1_000_000,
            "process": process,
            "event": "keepalive",
            "lease": lease,
            "ttl": ttl,
            "lock": lock,
        }
        for t in acks[1:]
    ]
    if lost is not None:
        out.append(
            {
                "time": ns(lost),
                "process": process,
                "event": "lease-lost",
                "lease": lease,
                "ttl": ttl,
                "lock": lock,
                "reason": "gone",
            }
        )
    return out


def write(
    t: float,
    writer: Any,
    token: int | None,
    highest: int | None,
    accepted: bool,
    resource: str = "lock",
) -> dict[str, Any]:
    """One resource log record."""
    return {
        "time": ns(t),
        "writer": writer,
        "resource": resource,
        "token": token,
        "value": f"v{writer}",
        "accepted": accepted,
        "highest_before": highest,
        "unfenced": token is None,
    }


def fault(kind: str, start: float, stop: float | None, value: Any = None) -> list[Event]:
    """A nemesis ``start-<kind>`` at ``start`` (ok 1 ms later with ``value``) and, when
    ``stop`` is given, its ``stop-<kind>``."""
    out: list[Event] = [
        (start, "nemesis", "invoke", f"start-{kind}", None),
        (start + 0.001, "nemesis", "ok", f"start-{kind}", value),
    ]
    if stop is not None:
        out += [
            (stop, "nemesis", "invoke", f"stop-{kind}", None),
            (stop + 0.001, "nemesis", "ok", f"stop-{kind}", None),
        ]
    return out


def service_lease(
    lease: Any,
    granted: float,
    renewals: Iterable[float] = (),
    expired: float | None = None,
    revoked: float | None = None,
    ttl: float = TTL,
) -> list[dict[str, Any]]:
    """The sim server's own log of one lease: granted, renewed, then expired (at its
    deadline, logged 1 ms later) or revoked."""
    out = [{"time": ns(granted), "event": "lease-granted", "lease": lease, "ttl": ttl}]
    out += [{"time": ns(t), "event": "lease-renewed", "lease": lease, "ttl": ttl} for t in renewals]
    if expired is not None:
        out.append(
            {
                "time": ns(expired) + 1_000_000,
                "event": "lease-expired",
                "lease": lease,
                "deadline": ns(expired),
            }
        )
    if revoked is not None:
        out.append({"time": ns(revoked), "event": "lease-revoked", "lease": lease})
    return out


def service_grant(
    t: float,
    lease: Any,
    number: int,
    name: str = "lock",
    election: bool = False,
    forced: bool = False,
) -> dict[str, Any]:
    """The sim server's log line of one lock grant (or, ``election``, leader election)."""
    if election:
        return {
            "time": ns(t),
            "event": "leader-elected",
            "election": name,
            "lease": lease,
            "epoch": number,
        }
    e = {"time": ns(t), "event": "lock-granted", "lock": name, "lease": lease, "token": number}
    if forced:
        e["forced"] = True
    return e


def by_time(*logs: dict[str, Any] | Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Events and event lists merged in time order."""
    flat = [e for log in logs for e in ([log] if isinstance(log, dict) else log)]
    return sorted(flat, key=lambda e: e["time"])


def test_builders_make_a_well_formed_history() -> None:
    h = history(holding(1, 0.0, 0.1, 1, 11, release=1.0), fault("client-pause", 0.5, 0.8))
    assert [op.time for op in h] == sorted(op.time for op in h)
    assert len(h.pairs()) == 4 and h.pairs()[0].value == {"lease": 11, "name": "lock", "token": 1}
