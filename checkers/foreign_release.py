"""Does a lock's release free someone else's lock? Measured on every release a holder
called after its lock had gone to another.

The scenario: holder A is paused past the TTL, B is granted the lock, A resumes and
releases. A *foreign release* is A's release of a lock that had become B's
(``checkers.classify.released_after_losing``), called before B let go. What happened to
B's lock, from the records:

- ``yes``: another process, A itself again too, was granted the lock after A's release
  while B still believed it held (the checker's overlap; ``checkers.classify`` names the
  cause ``released-another's-lock`` when B's lease was valid);
- ``no``: B still held after A's release answered: its library, asked after that, said it
  still held (a library whose answer asks the service); or another process's acquire,
  waiting past it, was refused while B held; or B's own release succeeded, with a library
  whose release checks the lock is its own (it raises or answers False otherwise); what
  the library does is test.json's ``lock_library.promises``;
- ``not measured``: nothing after A's release says either way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from checkers.attribution import LibraryRecord
from checkers.classify import released_after_losing
from checkers.holdings import Holding
from checkers.leases import LeaseFacts
from checkers.words import secs

YES: Final = "yes"
NO: Final = "no"
UNMEASURED: Final = "not measured"
SHOWN: Final = 5
"""Cases listed in the summary (the counts cover all)."""


def foreign_releases(
    held: Sequence[Holding],
    leases: Mapping[Any, LeaseFacts],
    refused: Sequence[tuple[Any, int, int]],
    library: LibraryRecord | None = None,
) -> list[dict[str, Any]]:
    """Every foreign release of the run with its outcome (module docstring); ``refused``:
    the take operations refused (process, invoked, completed)."""
    out = []
    for a in held:
        if a.give is None:
            continue
        called = a.give.invoke.time
        answered = a.give.end if a.give.end is not None else called
        for b in held:
            b_end = b.end if b.end is not None else 1 << 62
            if b.process == a.process or b.name != a.name or called >= b_end:
                continue
            if not released_after_losing(a, b, leases.get(a.lease)):
                continue
            outcome, evidence = _outcome(a, b, answered, b_end, held, leases, refused, library)
            out.append(
                {
                    "releaser": a.process,
                    "release_called": called,
                    "release_answer": a.give.type,
                    "holder": b.process,
                    "holder_granted": b.taken,
                    "name": b.name,
                    "outcome": outcome,
                    "evidence": evidence,
                }
            )
    return out


def _outcome(
    a: Holding,
    b: Holding,
    answered: int,
    b_end: int,
    held: Sequence[Holding],
    leases: Mapping[Any, LeaseFacts],
    refused: Sequence[tuple[Any, int, int]],
    library: LibraryRecord | None,
) -> tuple[str, str]:
    released = f"after process {a.process}'s release at {secs(a.give.invoke.time if a.give else 0)}"
    c = next(
        (
            x
            for x in held
            if x.process != b.process
            and x is not a
            and x.name == b.name
            and a.give is not None
            and a.give.invoke.time < x.taken < b_end
        ),
        None,
    )
    if c is not None:
        return YES, (
            f"{released}, process {c.process} was granted it at {secs(c.taken)} while "
            f"process {b.process} (granted at {secs(b.taken)}) still held it"
        )
    facts = leases.get(b.lease)
    asks = library is not None and library.value("still_held") == "service"
    said = [s for s in (facts.said_held if facts and asks else ()) if answered < s <= b_end]
    if said:
        return (
            NO,
            f"{released}, process {b.process}'s library said it still held at {secs(said[0])}",
        )
    refusal = next(
        (r for r in refused if r[0] != b.process and r[2] > answered and r[2] <= b_end), None
    )
    if refusal is not None:
        return NO, (
            f"{released}, process {refusal[0]}'s acquire, waiting from {secs(refusal[1])}, "
            f"was refused at {secs(refusal[2])} while process {b.process} held it"
        )
    checks = library is not None and library.value("lost_release") in ("raise", "return")
    if b.ended_by == "released" and checks:
        assert library is not None
        return NO, (
            f"{released}, process {b.process}'s own release succeeded, and "
            f"{library.named()}'s release checks the lock is its own"
        )
    return UNMEASURED, f"{released}, nothing says whether process {b.process} still held it"


def summary(cases: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The counts and the first cases, for the mutex checker's details: ``releases``:
    ``yes`` when any release freed another's lock, ``no`` when some were measured and
    none did, else ``not measured``."""
    yes = sum(1 for c in cases if c["outcome"] == YES)
    no = sum(1 for c in cases if c["outcome"] == NO)
    return {
        "releases": YES if yes else NO if no else UNMEASURED,
        "foreign_releases": len(cases),
        "freed": yes,
        "kept": no,
        "cases": list(cases[:SHOWN]),
    }
