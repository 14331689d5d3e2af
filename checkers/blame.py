"""Whose doing a takeover was, when the run's lock was a library (``checkers.attribution``).

``checkers.classify`` says why the lock went to someone else; this says whose doing that
was, holding the library to what its documentation promises (test.json's
``lock_library.promises``), in this order:

1. **library**: its release freed another holder's lock (``released-another's-lock``), or
   it answered that it still held when asked after the service had granted the lock to
   another (the question asked after the grant: an answer read before it could be true),
   its "still held" documented as read from the service; one documented as its own
   belief (kazoo's ``is_acquired``) answering so is **design**;
2. **harness**: the harness's own fault took what no promise covers (a kill, a power cut,
   a clock jump), or the harness abandoned the holder;
3. **design**: a lease that expired while its holder was paused or cut off, of a library
   that documents no fencing token: it behaves as documented, and the overlap is what
   such a lock allows;
4. **service**: a grant while the lease was valid by the service's own log. A library run
   whose only record of the lease is the library's own grant has nothing of the
   service's to rule the library out: that is ``unexplained``, never "a bug in the
   service";
5. otherwise unattributed.
"""

from __future__ import annotations

from dataclasses import replace

from checkers.attribution import (
    DESIGN,
    HARNESS,
    LIBRARY,
    NOBODY,
    SERVICE,
    Attribution,
    LibraryRecord,
)
from checkers.classify import (
    ABANDONED,
    CLOCK_JUMP,
    CRASH,
    CUT_OFF,
    PAUSED,
    RELEASED_OTHER,
    SERVICE_BUG,
    UNEXPLAINED,
    UNSYNCED,
    Classification,
    Takeover,
)
from checkers.holdings import Holding
from checkers.leases import LeaseFacts
from checkers.words import NS, secs

HARNESS_FAULTS = (CRASH, UNSYNCED, CLOCK_JUMP, ABANDONED)
"""Causes that are the harness's own doing: its fault, or its giving up on a holder."""


def attributed(
    t: Takeover,
    earlier: Holding,
    at: int,
    facts: LeaseFacts | None,
    library: LibraryRecord | None,
) -> Takeover:
    """``t`` with its classification attributed (unchanged when the run's lock was no
    library: the harness's own recipes are judged as before)."""
    if library is None:
        return t
    c = t.classification
    if c.cause == SERVICE_BUG and (facts is None or not facts.has_service_account):
        c = Classification.of(
            UNEXPLAINED,
            f"{c.evidence}; but the only record of that lease is {library.named()}'s own "
            "grant, so nothing the service recorded rules the library out",
        )
    return Takeover(t.kind, replace(c, attribution=attribution(c, earlier, at, facts, library)))


def attribution(
    c: Classification,
    earlier: Holding,
    at: int,
    facts: LeaseFacts | None,
    library: LibraryRecord,
) -> Attribution:
    """Whose doing ``c`` was (module docstring)."""
    lib = library.named()
    if c.cause == RELEASED_OTHER:
        return library.attribute(LIBRARY, "lost_release", f"{lib}'s release: {c.evidence}")
    said = _said_held_after(earlier, at, facts)
    if said is not None:
        answered = (
            f"{lib} answered that process {earlier.process} still held "
            f"{earlier.name or 'the lock'} when asked at {secs(said)}, "
            f"{(said - at) / NS:.3f} s after the service had granted it to another at "
            f"{secs(at)}"
        )
        if library.value("still_held") == "local":  # documented as its own belief
            return library.attribute(
                DESIGN,
                "still_held",
                f"behaves as documented: {answered}; its answer is its own belief, "
                "not the service's",
            )
        return library.attribute(LIBRARY, "still_held", answered)
    if c.cause in HARNESS_FAULTS:
        return library.attribute(
            HARNESS, None, f"the harness's own doing, not {lib}'s: {c.evidence}"
        )
    if c.cause in (PAUSED, CUT_OFF) and library.value("fencing") != "token":
        how = "a pause" if c.cause == PAUSED else "a partition"
        cannot = (
            f"; it cannot say whether it still holds ({library.says('still_held')})"
            if library.value("still_held") == "none"
            else ""
        )
        return library.attribute(
            DESIGN,
            "fencing",
            f"behaves as documented: {lib}'s lock gives no fencing token; {how} past the "
            f"TTL lets two hold{cannot}",
        )
    if c.cause == SERVICE_BUG:
        return library.attribute(SERVICE, None, c.evidence)
    return library.attribute(NOBODY, None, f"the records name no one: {c.evidence}")


def _said_held_after(earlier: Holding, at: int, facts: LeaseFacts | None) -> int | None:
    """When ``earlier``'s library, asked after the grant at ``at`` and before its holding
    ended, answered that it still held (the first such question), else None."""
    if facts is None:
        return None
    end = earlier.end if earlier.end is not None else 1 << 62
    return min((s for s in facts.said_held if at < s <= end), default=None)
