"""The lock-free workloads' check: the data let each effect in once, whoever was frozen.

A ``version-cas`` or ``unique-key`` client writes on a *basis* it read first (a row's
version, a job's idempotency key: ``workloads.guarded``). The data accepts a write only on
a basis nobody has written on yet, so two accepted writes on the same basis of the same
name are the violation: a lost update (two writers both moved version 7 on) or a repeated
effect (job 7 done twice). Each is reported with both writers and their times.

What the check also shows is the point of these workloads: a *late* write, one whose
client was frozen by a client pause between reading its basis and writing, that the data
refused (``rejected by the data``), with no fencing token and no lease. Such refusals are
counted and the first is told in a sentence. Writes whose outcome is unknown (``info``) may
or may not have been accepted: they are left out of the duplicates (they cannot prove one)
and counted. A run in which no write was accepted proves nothing: unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult
from checkers.shrink_ops import Violation, shrink_result
from checkers.windows import FREEZES_CLIENT, FaultWindow, record_windows, with_effect
from checkers.words import plural, secs
from core.history import Pair

NAME: Final = "guarded"
REJECTED: Final = "rejected by the data"
"""The error of a refused write (``workloads.guarded.REJECTED``: the same words)."""


@dataclass(frozen=True, slots=True)
class Write:
    """One completed write: who, on which basis of which name, when, how it ended."""

    process: Any
    name: str
    basis: Any
    invoked: int
    ended: int | None
    outcome: str
    error: str | None

    @property
    def refused(self) -> bool:
        return self.outcome == "fail" and (self.error or "").startswith(REJECTED)


def writes(pairs: Sequence[Pair]) -> list[Write]:
    """The client writes of ``pairs`` that carry a name and a basis."""
    out = []
    for p in pairs:
        value = p.value if isinstance(p.value, dict) else {}
        if p.invoke.f != "write" or "basis" not in value:
            continue
        error = p.completion.error if p.completion is not None else None
        out.append(
            Write(
                p.invoke.process,
                str(value.get("name")),
                value["basis"],
                p.invoke.time,
                p.end,
                p.type,
                error,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Freeze:
    """A client pause: its window and when the thaw began (its stop's invocation)."""

    window: FaultWindow
    thaw: int | None


def freezes(record: RunRecord) -> list[Freeze]:
    """The run's client-freezing windows, each with its thaw: the last nemesis invocation
    up to the window's end (the nemesis does one thing at a time, so it is the stop's)."""
    invoked = [op.time for op in record.history.nemesis_ops() if op.is_invoke]
    out = []
    for w in with_effect(record_windows(record), FREEZES_CLIENT):
        thaw = max((t for t in invoked if w.end is not None and t <= w.end), default=None)
        out.append(Freeze(w, thaw))
    return out


def frozen_during(w: Write, frozen: Sequence[Freeze]) -> FaultWindow | None:
    """The client pause that froze ``w``'s process while it was writing, if one did: the
    write was open when its process was thawed (a frozen process completes nothing, so a
    write that ended before the thaw was done before the freeze)."""
    for f in frozen:
        if not f.window.affects_process(w.process) or f.thaw is None:
            continue
        if w.invoked < f.thaw and (w.ended is None or w.ended >= f.thaw):
            return f.window
    return None


def duplicates(ws: Sequence[Write]) -> list[tuple[Write, Write]]:
    """Pairs of accepted writes on the same basis of the same name (first, second)."""
    first: dict[tuple[str, Any], Write] = {}
    out = []
    for w in sorted((w for w in ws if w.outcome == "ok"), key=lambda w: w.ended or w.invoked):
        key = (w.name, _hashable(w.basis))
        if key in first:
            out.append((first[key], w))
        else:
            first[key] = w
    return out


def _brief(w: Write) -> dict[str, Any]:
    return {"process": w.process, "name": w.name, "basis": w.basis, "time": w.ended}


def _hashable(x: Any) -> Any:
    return repr(x) if isinstance(x, dict | list) else x


def check_record(record: RunRecord) -> CheckResult:
    """Every basis written at most once; the late writes of frozen clients refused. An
    invalid result carries its first pair's two writes alone (``shrunk``,
    ``checkers.shrink_ops``)."""
    return shrink_result(judged(record), record, judged, violations)


def violations(result: CheckResult) -> list[Violation]:
    """The pairs of accepted writes on one basis ``result`` names, as violations."""
    out = []
    for d in result.details.get("duplicates") or ():
        (a, b), name, basis = d["processes"], d["name"], d["basis"]
        out.append(
            Violation(
                "basis-reused",
                (name, repr(basis)),
                frozenset(zip(d["processes"], d["times"], strict=True)),
                "two writes accepted on one basis",
                f"the data accepted two writes on {basis!r} of {name!r}, by processes {a} "
                f"and {b}: a lost update or a repeated effect",
            )
        )
    return out


def judged(record: RunRecord) -> CheckResult:
    """The guarded result of ``record``, without its shrink."""
    ws = writes(record.history.client_ops().pairs())
    pauses = freezes(record)
    accepted = [w for w in ws if w.outcome == "ok"]
    refused = [w for w in ws if w.refused]
    unknown = [w for w in ws if w.outcome == "info"]
    late = [(w, p) for w in refused if (p := frozen_during(w, pauses)) is not None]
    late_accepted = [w for w in accepted if frozen_during(w, pauses) is not None]
    doubles = duplicates(ws)
    details: dict[str, Any] = {
        "accepted": len(accepted),
        "refused": len(refused),
        "unknown": len(unknown),
        "late_refused": len(late),
        "late_accepted": len(late_accepted),
        # in the lock workload's words, for the comparison matrix: writes on a stale basis
        "stale_accepted": [_brief(b) for _, b in doubles],
        "stale_rejected": [_brief(w) for w, _ in late],
        "duplicates": [
            {
                "name": a.name,
                "basis": a.basis,
                "processes": [a.process, b.process],
                "times": [a.invoked, b.invoked],
            }
            for a, b in doubles
        ],
    }
    counts = f"{plural(len(accepted), 'write')} accepted, {len(refused)} refused by the data" + (
        f", {len(unknown)} of unknown outcome" if unknown else ""
    )
    if doubles:
        a, b = doubles[0]
        return CheckResult(
            NAME,
            False,
            f"the data accepted two writes on the same basis: processes {a.process} "
            f"(accepted at {secs(a.ended)}) and {b.process} (at {secs(b.ended)}) both "
            f"wrote on {a.basis!r} of {a.name!r}, a lost update or a repeated effect "
            f"({plural(len(doubles), 'such pair')}); {counts}.",
            details,
        )
    if not accepted:
        return CheckResult(
            NAME, UNKNOWN, f"no write was accepted: nothing proven; {counts}.", details
        )
    if late:
        w, pause = late[0]
        story = (
            f"process {w.process}, frozen {pause.describe()}, wrote on the stale basis "
            f"{w.basis!r} of {w.name!r} at {secs(w.ended)} and the data refused it, with no "
            "token and no lease"
        )
    elif pauses:
        story = "no frozen client wrote late on a stale basis" + (
            f" ({plural(len(late_accepted), 'write')} spanning a pause accepted: nobody had "
            "written on its basis meanwhile)"
            if late_accepted
            else ""
        )
    else:
        story = "no client was frozen"
    return CheckResult(NAME, True, f"every basis written at most once; {story}; {counts}.", details)
