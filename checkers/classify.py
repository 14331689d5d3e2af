"""Why a violation happened, from what the run recorded.

Every takeover (a holding granted to one process while another still believed it held the
same lock or leadership) and every fencing-number anomaly gets one cause:

- ``lease-expired-while-paused``: the earlier holder's lease expired while the holder was
  paused (a client pause: the GC pause), so it could not renew. Expected of any
  lease-based lock; what it does to the resource is for fencing to stop. The fix is
  fencing.
- ``lease-expired-while-cut-off``: the same, but the holder was running and cut off from
  the service (a partition, a paused server node, or a lost connection its client
  reported: a failed renewal, ZooKeeper's SUSPENDED): it lost its session by the network,
  not by a pause.
- ``service-bug``: the service granted the lock while the previous lease was still valid
  by its own account (or reused or lowered a fencing number), with no fault to explain it.
  Its own account means its log, or a renewal it acknowledged less than a TTL before the
  grant, of a holder the harness had neither abandoned nor closed: the harness's own doings
  are ruled out before the service is blamed.
- ``released-another's-lock``: the lock was granted again while its holder's lease was
  valid, and between that holder's grant and the new one another client, whose own holding
  had been taken over, called release and was answered: its release freed a lock that was
  no longer its own (the library's release does not check whose the lock is). The
  evidence is that release operation, between the two grants.
- ``holder-abandoned``: the runner had abandoned the earlier holder (one of its operations
  timed out) before the grant, and nothing the service recorded shows the lease alive:
  what the abandoned worker did next (its late completion, its close, which lets go of
  the lease) is the harness's doing, so the overlap is not blamed on anyone (unknown).
- ``clock-jump``: a node's clock jumped during the holding; a lock whose safety depends on
  clocks (Redlock) is then unsafe.
- ``crash-lost-state``: a node crashed during the holding and the service granted the
  lock again: the crash lost the lock state (a Redis restart without fsync, a sim
  restart) or the node that took over never had it (a PostgreSQL failover).
- ``lost-unsynced``: a node lost power during the holding, the grant had been
  acknowledged within the time the service's fsync setting documents it may lose
  (``checkers.durability``: Redis's appendfsync everysec, 2 s), and the cut discarded
  unsynced writes on that node: lost, as documented. Under a setting that promises
  durability (appendfsync always) the same records are ``unexplained``: the bytes
  discarded may be a write not yet answered, and nothing ties the grant to them; with no
  rule recorded it stays a crash.
- ``unexplained``: none of the above fits the records.

One more cause is not the lock service's: ``resource-bug``, the protected resource
accepted a token lower than one it had accepted before (its fencing rule failed).

A stale read gets a cause when the run recorded a rule of its service that allows it
(test.json's ``service_rules``, a rule that ``explains`` the anomaly: ZooKeeper's reads,
synced or not, are not linearizable): ``documented-rule``, with the evidence the clients
recorded of the servers that answered (``checkers.served``), which must show the read's
server answering before it had applied the write the read missed. When it shows that
server had applied the write and still returned the older value, the rule does not
explain it: ``unexplained``, never excused.

Evidence, strongest first: the service's own lease log (exact expiries), the client's
keepalive acknowledgements (a renewal sent at ``s`` keeps the lease valid until at least
``s + ttl``), and the fault windows of the nemesis operations (``checkers.windows``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from checkers.attribution import Attribution
from checkers.durability import DurabilityRule
from checkers.holdings import Holding
from checkers.leases import LeaseFacts
from checkers.served import Served
from checkers.windows import (
    CRASHES,
    CUTS_OFF,
    FREEZES_CLIENT,
    LOSES_UNSYNCED,
    MOVES_CLOCK,
    FaultWindow,
    first_overlapping,
    with_effect,
)
from checkers.words import NS, article, listing, secs

PAUSED: Final = "lease-expired-while-paused"
CUT_OFF: Final = "lease-expired-while-cut-off"
EXPIRED: Final = (PAUSED, CUT_OFF)
"""The causes that are a lease doing what leases do: fencing's job."""
SERVICE_BUG: Final = "service-bug"
ABANDONED: Final = "holder-abandoned"
CLOCK_JUMP: Final = "clock-jump"
CRASH: Final = "crash-lost-state"
UNSYNCED: Final = "lost-unsynced"
UNEXPLAINED: Final = "unexplained"
RESOURCE_BUG: Final = "resource-bug"
DOCUMENTED: Final = "documented-rule"
RELEASED_OTHER: Final = "released-another's-lock"

LeaseKind = Literal["lease-valid", "lease-expired", "lease-unknown"]


@dataclass(frozen=True, slots=True)
class Cause:
    """What a cause means to a reader: its label, whether it is expected, the fix."""

    label: str
    expected: bool
    fix: str


CAUSES: Final[dict[str, Cause]] = {
    PAUSED: Cause(
        "lease expired while its holder was paused",
        True,
        "fencing: the protected resource must reject writes whose token is lower than the "
        "highest it has accepted (without it, this is what any lease-based lock does)",
    ),
    CUT_OFF: Cause(
        "lease expired while its holder was cut off from the service",
        True,
        "fencing: the protected resource must reject writes whose token is lower than the "
        "highest it has accepted; a holder that cannot reach the service must stop acting on "
        "its holding before its lease can have expired",
    ),
    SERVICE_BUG: Cause(
        "the service granted the lock while the previous lease was still valid by its own account",
        False,
        "a bug in the coordination service: it must not grant a lock before the previous "
        "holder's lease has expired or been released",
    ),
    ABANDONED: Cause(
        "the harness had abandoned the holder after its operation timed out",
        False,
        "not a finding about the service: raise --op-timeout above the client pause and the "
        "work time, so that the harness waits for the holder instead of abandoning it",
    ),
    CLOCK_JUMP: Cause(
        "a node's clock jumped",
        False,
        "a clock-assumption violation (the Redlock case): do not let lock safety depend on "
        "clocks; use a consensus-based lock service and fencing tokens",
    ),
    CRASH: Cause(
        "a node lost the lock state in a crash",
        False,
        "persist the lock state before acknowledging it (fsync), or use a replicated "
        "consensus service; fencing tokens limit the damage",
    ),
    UNSYNCED: Cause(
        "a power cut discarded a grant acknowledged but not yet fsynced, as the service's "
        "setting documents",
        True,
        "not a bug of the service: its setting fsyncs after answering; fsync before "
        "acknowledging (Redis: appendfsync always), or use a replicated consensus service; "
        "fencing tokens limit the damage",
    ),
    UNEXPLAINED: Cause(
        "unexplained",
        False,
        "no recorded fault explains it: read the timeline around it and the service's logs",
    ),
    RESOURCE_BUG: Cause(
        "the protected resource accepted a token lower than one it had accepted",
        False,
        "the resource must compare each write's token with the highest it has accepted and "
        "refuse lower ones",
    ),
    RELEASED_OTHER: Cause(
        "another client's release freed the lock while its holder still held it",
        False,
        "a bug in the lock library: release must delete the lock only while it is still the "
        "caller's (compare the owner's token in the same atomic step as the delete)",
    ),
    DOCUMENTED: Cause(
        "the service's documented consistency rule allows it",
        True,
        "not a bug of the service: it does not promise linearizable reads in this mode; "
        "read in a mode it documents as linearizable, or build on the weaker guarantee it "
        "states",
    ),
}

NUMBER_BUG_LABEL: Final = "the service reused or lowered a fencing {number}"
NUMBER_BUG_FIX: Final = (
    "a bug in the coordination service: every grant must carry {a_number} higher than any "
    "granted before, or fencing cannot tell a stale holder from the current one"
)


@dataclass(frozen=True, slots=True)
class Classification:
    """A cause, the evidence that supports it (a clause, no final period), the fault
    window involved if any, and the label and fix a reader sees (the cause's by default);
    ``attribution``: whose doing it was, when the run's lock was a library
    (``checkers.blame``). Build with ``Classification.of``."""

    cause: str
    evidence: str
    fault: FaultWindow | None
    label: str
    fix: str
    attribution: Attribution | None = None

    @classmethod
    def of(
        cls,
        cause: str,
        evidence: str,
        fault: FaultWindow | None = None,
        *,
        label: str | None = None,
        fix: str | None = None,
    ) -> Classification:
        meaning = CAUSES[cause]
        return cls(cause, evidence, fault, label or meaning.label, fix or meaning.fix)

    @property
    def expected(self) -> bool:
        return CAUSES[self.cause].expected

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "cause": self.cause,
            "label": self.label,
            "expected": self.expected,
            "evidence": self.evidence,
            "fix": self.fix,
        }
        if self.fault is not None:
            d["fault"] = self.fault.to_dict()
        if self.attribution is not None:
            d["attribution"] = self.attribution.to_dict()
        return d


@dataclass(frozen=True, slots=True)
class Takeover:
    """How the earlier holder's lease stood when the lock went to someone else, and why."""

    kind: LeaseKind
    classification: Classification


def lease_kind(facts: LeaseFacts | None, at: int) -> LeaseKind:
    """The three-way split: ``lease-valid`` when the service's log or an acknowledged
    renewal proves the lease alive at ``at``; ``lease-expired`` when the service logged
    its end, or when renewals were acknowledged but none proves it alive; else unknown."""
    if facts is None:
        return "lease-unknown"
    alive = facts.service_alive(at)
    if alive or facts.certainly_alive(at):
        return "lease-valid"
    if alive is False or facts.acks:
        return "lease-expired"
    return "lease-unknown"


def classify_takeover(
    earlier: Holding,
    facts: LeaseFacts | None,
    at: int,
    windows: Sequence[FaultWindow],
    durability: DurabilityRule | None = None,
    others: Sequence[Holding] = (),
    leases: Mapping[Any, LeaseFacts] | None = None,
) -> Takeover:
    """Why ``earlier``'s holder lost its holding to a grant at ``at`` without letting go;
    ``durability``: what the run's setting says a power cut may take; ``others``: the
    run's holdings, whose releases may have freed ``earlier``'s lock (``leases``: the
    facts of their leases)."""
    kind = lease_kind(facts, at)
    began = earlier.taken
    ack = facts.last_ack_before(at) if facts is not None else None
    quiet = ack[1] if ack is not None else began  # the holder's last sign of life
    clock = _clock_jump(windows, began, at)
    crash = first_overlapping(windows, began, at, CRASHES)
    if kind == "lease-valid":
        assert facts is not None
        if clock is not None:
            return Takeover(kind, _clock(clock))
        if crash is not None:
            return Takeover(kind, _crash(crash, earlier, durability, windows, at))
        freed = foreign_release(earlier, others, at, leases or {})
        if freed is not None:
            return Takeover(kind, _released_other(earlier, freed, facts, at))
        if not facts.service_alive(at) and _abandoned_before(earlier, at):
            return Takeover(kind, _abandoned(earlier, facts, at))
        asked = _asked_frees(earlier, facts, at)
        if asked:
            return Takeover(kind, _freed_unexplained(earlier, asked[0], at))
        return Takeover(kind, Classification.of(SERVICE_BUG, _still_valid(facts, at)))
    # A pause or partition explains the expiry only if it began before the lease ran out.
    expiry = facts.best_expiry(before=at)[0] if facts is not None else None
    until = at if expiry is None else max(quiet, min(at, expiry))
    paused = first_overlapping(windows, quiet, until, FREEZES_CLIENT, earlier.process)
    cut_off = first_overlapping(windows, quiet, until, CUTS_OFF)
    expired = _expired_words(facts, at)
    trouble = facts.first_trouble(quiet, at) if facts is not None else None
    saw = f"; {trouble[1]} at {secs(trouble[0])}" if trouble is not None else ""
    if paused is not None:
        evidence = (
            f"{paused.describe()}, so process {earlier.process} could not renew its "
            f"lease; {expired}"
        )
        return Takeover(kind, Classification.of(PAUSED, evidence, paused))
    if cut_off is not None:
        evidence = (
            f"{cut_off.describe()}, so process {earlier.process} was cut off from the "
            f"service{saw}; {expired}"
        )
        return Takeover(kind, Classification.of(CUT_OFF, evidence, cut_off))
    if trouble is not None and clock is None and crash is None:
        evidence = (
            f"no fault was injected, but process {earlier.process}'s client saw "
            f"{trouble[1].removeprefix('its client reported ')} at "
            f"{secs(trouble[0])}; {expired}"
        )
        return Takeover(kind, Classification.of(CUT_OFF, evidence))
    if clock is not None:
        return Takeover(kind, _clock(clock))
    if crash is not None:
        return Takeover(kind, _crash(crash, earlier, durability, windows, at))
    return Takeover(
        kind,
        Classification.of(
            UNEXPLAINED,
            (
                f"{expired}, but no recorded fault explains why process {earlier.process} stopped "
                f"renewing after {secs(quiet)}"
            ),
        ),
    )


def classify_number(
    number: str,
    earlier: int,
    later: int,
    windows: Sequence[FaultWindow],
    durability: DurabilityRule | None = None,
) -> Classification:
    """Why a grant at ``later`` reused or lowered the fencing ``number`` of a grant at
    ``earlier``: a crash that reset the service's counter (a power cut that took the
    earlier grant as the run's ``durability`` rule says it may: lost as documented), else
    a service bug."""
    crash = first_overlapping(windows, earlier, later, CRASHES)
    if crash is not None:
        lost = _lost(
            windows,
            durability,
            (earlier, later),
            f"the grant of {article(number)} at {secs(earlier)}",
            f"the restarted service handed out {article(number)} that was not higher",
        )
        if lost is not None:
            return lost
        c = _crash(crash)
        return Classification.of(CRASH, f"{c.evidence}; its {number} counter started over", crash)
    return Classification.of(
        SERVICE_BUG,
        f"no crash or restart happened between the two grants ({secs(earlier)} and "
        f"{secs(later)}): the service itself handed out {article(number)} that was not higher",
        label=NUMBER_BUG_LABEL.format(number=number),
        fix=NUMBER_BUG_FIX.format(a_number=article(number)),
    )


def classify_accepted(
    kind: str,
    takeover: Classification,
    number: str,
    granted: tuple[int, int],
    windows: Sequence[FaultWindow],
    numbers: tuple[int | None, int | None] = (None, None),
    durability: DurabilityRule | None = None,
) -> Classification:
    """Why the resource accepted a stale write of ``kind`` (``checkers.overlaps``).

    A lower token accepted, or no token at all, is the takeover's doing (a paused holder
    and no fencing to stop it). A token *not lower* than the newer holder's (``numbers``:
    the writer's and its successor's, as the service granted them) means fencing could not
    tell the two apart: the service reused (or lowered) the number between the writer's
    grant and its successor's (``granted``), which ``classify_number`` explains. A token
    lower than the successor's that got through only because the newer holder had not
    written yet is the takeover's doing too: the resource cannot reject a token it cannot
    know is stale. ``durability``: what the run's setting says a power cut may take."""
    if kind != "superseded" or not _not_higher(numbers):
        return takeover
    c = classify_number(number, granted[0], granted[1], windows, durability)
    return Classification(
        c.cause,
        f"its {number} was not lower than the newer {number}s the resource had seen, so "
        f"fencing could not tell it from the newer holder's: {c.evidence}",
        c.fault,
        c.label,
        c.fix,
    )


def _not_higher(numbers: tuple[int | None, int | None]) -> bool:
    """Whether the successor's number is not higher than the writer's (unknown: assume
    not higher, as before the numbers were passed)."""
    mine, theirs = numbers
    return mine is None or theirs is None or theirs <= mine


def classify_read(
    rule: dict[str, Any], target: str, read: Served | None, overwrite: Served | None
) -> Classification:
    """Why a read missed a write acknowledged before it began, under the service's
    ``rule`` (a ``service_rules`` entry of test.json that ``explains`` stale reads), from
    the answers the clients recorded: the read's (``read``) and the overwriting write's
    (``overwrite``). The rule is the cause when the read's server answered before it had
    applied the write; an answer given after applying it is not the rule's doing."""
    label = f"{target}'s documented rule, {rule.get('setting')} {rule.get('value')}"
    fix = f"{CAUSES[DOCUMENTED].fix} ({rule.get('source')})"
    if read is None or overwrite is None:
        missing = "the read's" if read is None else "the write's"
        evidence = f"the run recorded no answer of {missing} server to confirm it"
        return Classification.of(DOCUMENTED, evidence, label=label, fix=fix)
    wrote = overwrite.pos(overwrite.version)
    if read.applied is not None and overwrite.version is not None:
        if read.applied >= overwrite.version:
            return Classification.of(
                UNEXPLAINED,
                f"{read.where()} answered the read at {read.pos(read.applied)}, having "
                f"applied the write ({wrote}), yet returned the value of "
                f"{read.pos(read.version)}, which the rule does not allow ({label})",
            )
        evidence = (
            f"{read.where()} answered the read at {read.pos(read.applied)}, before it had "
            f"applied the write ({wrote}) that {overwrite.where()} had acknowledged"
        )
    else:
        evidence = (
            f"{read.where()} answered the read and {overwrite.where()} the write; their "
            f"answers recorded no {read.position} to compare"
        )
    return Classification.of(DOCUMENTED, evidence, label=label, fix=fix)


# --- evidence in words -------------------------------------------------------------------


def _clock_jump(windows: Sequence[FaultWindow], lo: int, hi: int) -> FaultWindow | None:
    return next((w for w in with_effect(windows, MOVES_CLOCK) if w.changes_within(lo, hi)), None)


def _clock(w: FaultWindow) -> Classification:
    return Classification.of(
        CLOCK_JUMP,
        f"{w.describe()}: a lease or lock whose validity is measured on that clock ended early",
        w,
    )


def _crash(
    w: FaultWindow,
    earlier: Holding | None = None,
    rule: DurabilityRule | None = None,
    windows: Sequence[FaultWindow] = (),
    at: int | None = None,
) -> Classification:
    """The crash ``w`` during ``earlier``'s holding, granted again at ``at``; a power cut
    of ``windows`` after the grant that took it as the run's ``rule`` says it may, first."""
    if earlier is not None and at is not None:
        lost = _lost(
            windows,
            rule,
            (earlier.taken, at),
            f"process {earlier.process}'s grant",
            "the restarted server granted the lock again",
        )
        if lost is not None:
            return lost
    return Classification.of(
        CRASH,
        f"{w.describe()}, during the holding; the service granted the lock again as though "
        "the holding had ended: the crash lost the lock state (or the node that took over "
        "never had it)",
        w,
    )


def _lost(
    windows: Sequence[FaultWindow],
    rule: DurabilityRule | None,
    span: tuple[int, int],
    what: str,
    again: str,
) -> Classification | None:
    """``what``, acknowledged at ``span[0]`` and handed out again at ``span[1]``, lost to
    the first power cut between the two (the first that could take it: one that began
    before the grant could not) as the run's durability ``rule`` says (else None)."""
    if rule is None:
        return None
    acked, again_at = span
    cut = next(
        (w for w in with_effect(windows, LOSES_UNSYNCED) if acked <= w.start <= again_at), None
    )
    return None if cut is None else lost_to_power_cut(cut, rule, acked, what, again)


def lost_to_power_cut(
    w: FaultWindow,
    rule: DurabilityRule,
    acked: int,
    what: str,
    again: str,
    label: str | None = None,
) -> Classification | None:
    """``what`` (``process 3's grant``, ``id 57``), acknowledged at ``acked`` and handed
    out again after the power cut ``w`` (``again``: said how), lost to that cut by the
    run's durability ``rule``: acknowledged within the time the rule says may be lost, on
    a node the cut discarded bytes of (else None: the rule does not explain it). The cut
    is timed at the start's answer, by which it had discarded: a write between its
    invocation and the kill was acknowledged before the cut, and the time before it is an
    upper bound. ``label``: the reader's label of a documented loss (the cause's own by
    default)."""
    before = (w.start - acked) / NS
    if before < 0 or sum(b for _, b in w.discarded) <= 0:
        return None
    where = listing(f"{b} bytes on {n}" for n, b in w.discarded if b > 0)
    said = f"{rule.target}'s {rule.named()}"
    if rule.promises:
        # The bytes discarded were not fsynced, but a write not yet answered is not
        # either: nothing in the records ties the acknowledged write to them, so the
        # service is not blamed (nor is the loss called documented).
        return Classification.of(
            UNEXPLAINED,
            f"{what} was acknowledged {before:.3f} s before the power cut ({w.describe()}; "
            f"it discarded {where} not fsynced), and under {said} every acknowledged write "
            f"is fsynced before its answer [{rule.source}]; the records do not show whether "
            "the write was among the bytes discarded (a write not yet answered is not "
            "fsynced either): compare the server's files with it",
            w,
        )
    if before > rule.within_s:
        return None
    return Classification.of(
        UNSYNCED,
        f"{what} was acknowledged {before:.3f} s before the power cut ({w.describe()}), "
        f"not fsynced under {said}: the cut discarded {where}, the write with them, and "
        f"{again}: lost, as documented (up to {rule.within_s:g} s) [{rule.source}]",
        w,
        label=label,
    )


def foreign_release(
    earlier: Holding, others: Sequence[Holding], at: int, leases: Mapping[Any, LeaseFacts]
) -> Holding | None:
    """The first holding of another process whose release of ``earlier``'s lock was
    called by ``at`` and answered (ok, or never) after ``earlier`` was granted: one in
    flight when the service's own log freed ``earlier``'s lock at a release's request
    (``freed_during``), else one called when its lock was no longer its own
    (``released_after_losing``)."""
    mine = leases.get(earlier.lease)
    called = [
        x
        for x in others
        if x.give is not None
        and x.give.type != "fail"
        and x.process != earlier.process
        and x.name == earlier.name
        and x.give.invoke.time <= at
    ]
    logged = [x for x in called if freed_during(x, earlier, at, mine) is not None]
    found = logged or [x for x in called if released_after_losing(x, earlier, leases.get(x.lease))]
    return min(found, key=lambda x: x.end or 0, default=None)


def freed_during(x: Holding, later: Holding, at: int, facts: LeaseFacts | None) -> int | None:
    """When the service's own log (``facts``: ``later``'s lease's) freed ``later``'s lock
    at a release's request while ``x``'s release was in flight (``_asked_frees``), else
    None. Of a release called as its caller's own lease ended, the times alone cannot say
    whose lock it freed; the service's record of the lease it freed can."""
    if facts is None or x.give is None:
        return None
    called, answered = x.give.invoke.time, x.give.end
    return next(
        (
            r
            for r in _asked_frees(later, facts, at)
            if called <= r and (answered is None or r <= answered)
        ),
        None,
    )


def _asked_frees(h: Holding, facts: LeaseFacts, at: int) -> list[int]:
    """The instants the service's own log (``facts``: ``h``'s lease's) freed ``h``'s lock
    at a release's request, from its grant to ``at``, before ``h``'s holder called its
    own release."""
    own = h.give.invoke.time if h.give is not None else None
    return [r for r in facts.freed if h.taken <= r <= at and (own is None or r < own)]


def _freed_unexplained(earlier: Holding, freed: int, at: int) -> Classification:
    """The service freed ``earlier``'s lock at a release's request no release in the
    history explains: not the service granting a held lock, and no one's to blame."""
    return Classification.of(
        UNEXPLAINED,
        f"by the service's own log, a release freed process {earlier.process}'s lock at "
        f"{secs(freed)}, before process {earlier.process} let it go, and it granted it again "
        f"at {secs(at)}; no other process's release in the history was in flight then, so "
        "the records do not say whose release it was",
    )


def released_after_losing(x: Holding, later: Holding, facts: LeaseFacts | None) -> bool:
    """Whether ``x``'s release came when its lock was ``later``'s: ``x`` taken before
    ``later``, its release answered (or never) after ``later``'s grant, and called after
    that grant, or after ``x``'s lease had ended (by the service's log, else the client's
    estimate): a release in flight as its own lease ended may have freed only its own."""
    if x.give is None or not x.definite or not x.taken < later.taken:
        return False
    called, answered = x.give.invoke.time, x.give.end
    if answered is not None and answered < later.taken:
        return False
    if called >= later.taken:
        return True
    if facts is None:
        return False
    alive = facts.service_alive(called)
    if alive is not None:
        return not alive
    expiry = facts.best_expiry(before=called)[0]
    return expiry is not None and expiry <= called


def _released_other(earlier: Holding, freed: Holding, facts: LeaseFacts, at: int) -> Classification:
    assert freed.give is not None
    called = freed.give.invoke.time
    answer = freed.give.end
    answered = "never answered" if answer is None else f"answered ok at {secs(answer)}"
    logged = freed_during(freed, earlier, at, facts)
    when = (
        f"in flight when, by the service's own log, a release freed the lock of process "
        f"{earlier.process} (granted it at {secs(earlier.taken)}) at {secs(logged)}"
        if logged is not None
        else f"after process {earlier.process} was granted it at {secs(earlier.taken)}"
    )
    return Classification.of(
        RELEASED_OTHER,
        f"process {freed.process}, whose holding of {freed.name or 'the lock'} from "
        f"{secs(freed.taken)} had been taken over, called release at {secs(called)} "
        f"({answered}), {when}; the service granted it again at {secs(at)} while "
        f"{_still_valid(facts, at)}",
    )


def _abandoned_before(h: Holding, at: int) -> bool:
    return h.abandoned is not None and h.abandoned <= at


def _abandoned(h: Holding, facts: LeaseFacts, at: int) -> Classification:
    assert h.abandoned is not None
    sent = max(s for s, _ in facts.proofs if s <= at)
    return Classification.of(
        ABANDONED,
        (
            f"an operation of process {h.process} timed out at {secs(h.abandoned)} and the "
            f"harness abandoned it; its last renewal was sent at {secs(sent)}, but nothing the "
            f"service recorded shows the lease still alive at the grant at {secs(at)}"
        ),
    )


def _still_valid(facts: LeaseFacts, at: int) -> str:
    deadline = facts.service_deadline(at)
    if facts.service_alive(at) and deadline is not None:
        return (
            f"by the service's own log the lease had been renewed until {secs(deadline)} "
            f"and had not expired or been revoked when it granted the lock again at "
            f"{secs(at)}"
        )
    sent = max(s for s, _ in facts.proofs if s <= at)
    ttl = facts.bound_ttl or 0.0
    return (
        f"the service acknowledged a renewal sent at {secs(sent)} with a TTL of {ttl:g} s, "
        f"so by its own answer the lease was valid until at least "
        f"{secs(sent + int(ttl * NS))}, yet it granted the lock again at {secs(at)}; the "
        f"holder had not let it go and the harness had not abandoned it"
    )


def _expired_words(facts: LeaseFacts | None, at: int) -> str:
    if facts is None or (not facts.acks and not facts.has_service_account):
        return "no lease events were recorded, so its expiry is not confirmed"
    expiry, source = facts.best_expiry(before=at)
    if source == "service":
        return f"its lease expired at {secs(expiry)} by the service's own log"
    last_local = facts.last_ack_before(at)
    if last_local is not None and last_local in facts.local:
        proofs = [a for a in facts.proofs if a[1] <= at]
        since = (
            f" (the last one the service itself acknowledged was sent at {secs(max(proofs)[0])})"
            if proofs
            else ""
        )
        return (
            f"its last renewal, at {secs(last_local[1])}, was answered by the one server "
            f"it was connected to, which proves nothing of the session at the service's "
            f"leader{since}"
        )
    if expiry is not None:
        last = expiry - int((facts.bound_ttl or 0) * NS)
        if facts.rule.lazy:
            latest = facts.rule.latest(expiry, facts.bound_ttl)
            return (
                f"its last renewal was acknowledged at {secs(last)}, so its lease could "
                f"expire from about {secs(expiry)} and ended by {secs(latest)} at the latest "
                f"({facts.rule.short()})"
            )
        return (
            f"its last renewal was acknowledged at {secs(last)}, so its lease expired "
            f"by about {secs(expiry)}"
        )
    return "its lease was not renewed"
