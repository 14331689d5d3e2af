"""The linearizability search for one partition: Wing & Gong with Lowe's memoization,
plus reductions that never change the verdict.

Terms. Entries are numbered certain ones first in order of return, then uncertain ones
in order of invocation; a *configuration* is ``(L, s)``: the set ``L`` of linearized
entries (a bitset, a Python int) and the model state ``s`` (an interned int). The *forced*
entry ``x`` of a configuration is the unlinearized certain entry that returns first: the
lowest zero bit of ``L``. An entry is a *candidate* when it is not in ``L`` and was
invoked before ``x`` returned; only candidates can be linearized next (anything invoked
later must follow ``x``). The configuration succeeds when every certain entry is in
``L``; a *completion* of it is a sequence of unlinearized entries, every certain one
included, legal from ``s`` and respecting real time. Two facts hold in every
configuration the search reaches and are used by the proofs:

(F1) every certain entry that returned before ``x`` is in ``L``;
(F2) no unlinearized entry precedes a candidate in real time: such an entry would have
     returned before the candidate's invocation, hence before ``x`` returned, so it is
     certain (uncertain entries never return) and, by (F1), linearized.

Memoization (Lowe), with dominance: a configuration's fate depends only on ``(L, s)``.
Each configuration found to have no completion is recorded under its certain part ``C``
and state ``s``, with its set ``U`` of linearized uncertain entries. A configuration
``(C, U', s)`` with a recorded ``(C, U, s)``, ``U`` a subset of ``U'``, is not expanded:
a completion of it would be one of ``(C, U, s)`` too (the entries of ``U' - U`` are
uncertain and may be left out). Only configurations whose exploration is over are
recorded (those being explored are ancestors of the current one, and ``L`` only grows
along a path, so they never come back); by induction on the recording order, each
recorded one truly has no completion.

The reductions, each complete (a configuration has a completion after the reduction
iff it had one before; the proofs of R2, R4 and R6 show that a completion starting
with a skipped child gives one that is shorter or starts with an earlier entry, so by
induction one starts with a child that is tried):

R1. *Uncertain read-only entries are dropped.* An entry whose outcome is unknown may be
    left out, and one that never changes the state (a read of unknown result) cannot
    enable or disable anything: removing it from any completion leaves a completion.
R2. *Uncertain entries are never linearized as no-ops.* If linearizing uncertain ``y``
    leaves ``s`` unchanged, any completion of ``(L+y, s)`` is one of ``(L, s)`` (``y``
    may be left out), so the child adds nothing. Uncertain entries are never forced:
    the search succeeds without them.
R3. *Legal read-only certain candidates are linearized at once, without branching.* Let
    ``y`` be a candidate whose step, whenever legal, keeps the state (a read, the etcd
    failed cas; *not* a write of the current value, whose effect later differs), legal
    in ``s``. Take a completion with ``y`` at position ``k``; move ``y`` to the front.
    The state sequence is unchanged (``y`` keeps ``s``), and no entry before position
    ``k`` precedes ``y`` in real time (F2), so the result is a completion.
R4. *Among candidates with the same effect, only the first in return order is tried.*
    Same effect: equal input and output, so the same step in every state. Let ``a``
    return no later than ``b`` and a completion start with ``b``. If ``a`` occurs later
    in it, swap them: ``a`` first is fine by (F2), and ``b`` in ``a``'s place is fine as
    ``b`` returns no earlier than ``a`` and was invoked before ``x`` returned. If ``a``
    does not occur, ``a`` is uncertain, so is ``b`` (it returns no earlier); use ``a``
    instead of ``b``.
R5. *Backtrack when the next required state cannot be reached.* Let ``g`` be the first
    unlinearized certain entry, in return order, that is legal only in one state ``v``
    (a read; ``g`` is often ``x``), and ``v != s``. Every completion places ``g``
    somewhere; the entries placed before it must take ``s`` to ``v``, and each was
    invoked before ``g`` returned (else it would follow ``g``): each is unlinearized,
    other than ``g``, and callable before ``g`` returns. Let ``z`` be the last of them
    whose hint names the one state it produces (a write, a put). After ``z`` only
    entries of unknown effect (``ANY``: an append) change the state, so ``v`` is
    reachable by them from ``z``'s state, or from ``s`` if there is no ``z``. Hence: if
    no such ``z`` produces a state from which ``v`` is reachable, and ``v`` is not
    reachable from ``s`` (reachable means equal when no ``ANY`` entry is there, else the
    model's ``reachable``, True when the model has none), there is no completion. This
    looks past ``x``: the append orders that cannot lead to the next read are cut at
    once, not when that read is forced.
R6. *An uncertain entry is linearized only if something can usefully follow it.* Let a
    completion start with uncertain ``y`` leaving ``s'``, then ``z`` (if nothing
    follows, drop ``y``). ``z`` is a candidate other than ``y`` (``x`` is unchanged, ``y``
    being uncertain). If ``z`` is blind (legal everywhere, its result independent of
    the state: a write), dropping ``y`` leaves a completion. If ``z`` is uncertain and
    keeps ``s'``, drop ``z`` and repeat. So some completion starts with ``y`` only if a
    candidate other than ``y`` is legal in ``s'``, not blind, and certain or changing
    ``s'``; otherwise the completions not starting with ``y`` are the other branches.

Branches are tried in return order (earliest first); that is an ordering, not a
reduction. The search is a generator so that partitions can be interleaved: it yields
after each quota of steps and is resumed with the next quota.

Representation (for speed: the hot loop touches only ints, lists and dicts). Sets of
entries are bitsets (``checkers.linear.bits``); states are interned ints; entries with
equal input and output share one transition table, filled by calling the model's
``step`` once per (class, state), except for blind entries, whose hint gives the state
they leave; hints become masks, so R3 and R5 test a whole set at once. The path is a
linked list of tuples, one per step (the entries it linearized: one child, or R3's at
once as a bitset shifted down to the forced entry), kept in O(1) when it is the deepest
so far, with its bitset of entries for the culprit. The memo is consulted only once
something is recorded (the first descent records nothing). Small searches are lazily
compiled with each class's hint read once into a kind (``_K_*``) that says which masks
its entries go to.

Compilation. Small partitions (up to ``bits.LAZY`` operations) are compiled lazily: the
uncertain entries up front, the certain ones in chunks, in return order, as the search
reaches them (``Search._extend``): an invalid history is usually refuted before its end,
and what lies past the refutation is then never compiled. This changes nothing the search
does: it only ever consults the forced entry, R5's next requiring entry, the candidates
of either (each candidate mask is final once every entry invoked before its forced
entry's return is compiled), and masks restricted to those candidates; later entries
only add higher bits. Bookkeeping that later entries change is kept up to date (R4 of
the uncertain entries, R6's useless blind entries, R5's reachability masks are dropped).
Bigger partitions are compiled up front (``_compile``). Partitions with more than
``bits.LEAN`` entries run in a lean mode whose memory stays linear in their size: a frame
and a memo key keep only the certain entries above the forced one ``x`` (every entry
below ``x`` is linearized: a few bits, at the history's concurrency) and the uncertain
ones, and candidate masks are computed instead of tabled. (Frames used to be dropped
after their last child, losing their memo record to save memory: on one key of 10,000
operations the search then went over the same configurations again and again.)
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter, ne
from typing import Any, Final, Literal

from checkers.linear import bits
from checkers.linear.bits import CandidateMasks, callable_table, mask, unlink
from checkers.linear.model import ANY, NO_HINT, NOTHING, Call, Hint, Model
from checkers.linear.prepare import INF, Entry, Problem

Verdict = bool | Literal["unknown"]
_INPUT_OUTPUT: Final = itemgetter(0, 1)
_CHUNK: Final = 16
"""Lazy mode: certain entries given candidate masks at a time, at least."""
_UNCOMPILED: Final[dict[int, int]] = {}
"""Lazy mode: the transition table of an entry not compiled yet (never consulted)."""
# Lazy mode: the fields of a class record, and its flags.
_RID, _RTRANS, _RPROD, _RNEED, _RFLAGS, _RKS, _RES, _RUNSURE, _RKIND = range(9)
_READONLY: Final = 1
_BLIND: Final = 2
# Lazy mode: how a certain entry of a class is compiled, by its hint: the common kinds
# set only the masks they are in. With R1, R3 and R5 on (the default), a read-only class
# (producing nothing) needs only its masks: R3 (reading it at once, or never trying it)
# spares it R4. Other classes take the general way.
_K_GENERAL: Final = 0
_K_WRITE: Final = 1
"""Blind, producing one state: R4, the producers of that state, the blind ones."""
_K_READ: Final = 2
"""Read-only, legal in one state: R3's mask for that state, R5's."""
_K_FREE: Final = 3
"""Read-only, legal in states the hint does not name: R3's mask of those stepped."""

REDUCTIONS: Final = frozenset({"R1", "R2", "R3", "R4", "R5", "R6"})
"""All reductions (on by default); tests switch them off one by one."""


@dataclass(slots=True)
class SearchResult:
    """The verdict of one partition and what the search saw.

    For an invalid partition, ``failed`` is the entry to blame in the deepest
    configuration reached (its forced entry, or the next entry needing a state when R5
    cut it there), and ``paths`` the longest partial linearizations (entry numbers in
    order, and the state they leave).
    """

    valid: Verdict
    reason: str = ""
    steps: int = 0
    model_steps: int = 0
    configs: int = 0
    failed: int = -1
    paths: list[tuple[list[int], Hashable]] = field(default_factory=list)


class _Unions:
    """Masks of unions of classes (named by their first entry), each class given by its
    first position and, when it has several, its positions. In a small partition, each
    class's mask is built once and masks are unions of them; in a big one (more than
    ``bits.LEAN`` entries, where a mask per class would cost quadratic time), each
    union is built once from its positions, in time linear in the partition."""

    __slots__ = ("certain", "first", "masks", "members", "n_certain", "small")

    def __init__(
        self, first: dict[int, int], members: dict[int, list[int]], n: int, n_certain: int
    ) -> None:
        self.first = first
        self.members = members
        self.n_certain = n_certain
        self.certain = (1 << n_certain) - 1
        self.small = n <= bits.LEAN
        self.masks: dict[int, int] = {}

    def __call__(self, classes: list[int], certain_only: bool) -> int:
        """The mask of the classes' entries (only the certain ones if ``certain_only``)."""
        members = self.members
        if self.small:
            masks = self.masks
            out = 0
            for c in classes:
                m = masks.get(c)
                if m is None:
                    ms = members.get(c)
                    m = masks[c] = 1 << self.first[c] if ms is None else mask(ms)
                out |= m
            return out & self.certain if certain_only else out
        positions: list[int] = []
        first = self.first
        n_certain = self.n_certain
        for c in classes:
            ms = members.get(c)
            if ms is None:
                positions.append(first[c])
            elif certain_only and ms[-1] >= n_certain:
                positions += ms[: bisect_left(ms, n_certain)]
            else:
                positions += ms
        return mask(positions)


class Search:
    """The optimized search over one problem; ``run()`` is a resumable generator."""

    MAX_PATHS = 3

    # Slots: a search is made per partition and per check, and most partitions are
    # small, so its set-up cost counts.
    __slots__ = (
        "_blind_to",
        "_by_start",
        "_class_of",
        "_compiled",
        "_fast_ro",
        "_hint_of",
        "_invoked",
        "_invoked_mask",
        "_r1",
        "_r3",
        "_r4",
        "_r5",
        "_reach",
        "_reach_mask",
        "_reachable",
        "_ready",
        "_sorted_starts",
        "any_mask",
        "blind_mask",
        "callable",
        "calls",
        "cids",
        "class_hint",
        "class_need",
        "class_produced",
        "config_bytes",
        "configs",
        "dropped",
        "ends",
        "hinted",
        "index",
        "init_sid",
        "lazy",
        "lower_same",
        "memo",
        "model",
        "model_steps",
        "n_certain",
        "need_sid",
        "observe_mask",
        "problem",
        "producers",
        "reductions",
        "req_mask",
        "ro_at",
        "ro_free",
        "ro_mask",
        "sid_of",
        "stack",
        "starts",
        "states",
        "steps",
        "trans",
        "unc_mask",
        "useful",
    )

    # Set by either way of compiling (eager ``_compile``, lazy ``_prepare``).
    index: list[int]
    starts: list[int]
    ends: list[int]
    calls: list[Call]
    cids: list[int]
    n_certain: int
    dropped: int
    trans: list[dict[int, int]]
    lower_same: list[Any]
    need_sid: list[int]
    callable: list[int] | CandidateMasks
    class_hint: dict[int, Hint]
    class_need: dict[int, int]
    class_produced: dict[int, int]
    producers: dict[int, int]
    ro_at: dict[int, int]
    ro_mask: int
    ro_free: int
    req_mask: int
    any_mask: int
    blind_mask: int
    config_bytes: int

    def __init__(
        self, problem: Problem, model: Model, reductions: frozenset[str] = REDUCTIONS
    ) -> None:
        if reductions is not REDUCTIONS:
            unknown = reductions - REDUCTIONS
            if unknown:
                raise ValueError(f"unknown reductions {sorted(unknown)}: choose from {REDUCTIONS}")
        self.problem = problem
        self.model = model
        self.reductions = reductions
        self.model_steps = 0
        self.states: list[Hashable] = [problem.init]
        self.sid_of: dict[Hashable, int] = {problem.init: 0}
        self.init_sid = 0
        self.steps = 0
        self.memo: dict[tuple[int, ...], list[int]] = {}
        self.configs = 0
        self.stack: list[list[Any]] = []
        self._reachable: Callable[[Any, Any], bool] | None = getattr(model, "reachable", None)
        self._reach: dict[tuple[int, int], bool] = {}
        self._reach_mask: dict[int, int] = {}
        self.unc_mask = 0
        self.hinted: set[int] = set()
        self.useful: dict[int, list[int]] = {}
        self._blind_to: dict[int, int] = {}  # blind class: the state it leaves
        hint_of = getattr(model, "hint", None)
        self.lazy = len(problem.calls) <= min(bits.LEAN, bits.LAZY)
        if self.lazy:
            self._prepare(problem, hint_of, reductions)
        else:
            self._compile(problem, hint_of, "R1" in reductions)
            self._ready = self._compiled = self.n_certain
        # Switching a reduction off costs the hot loop nothing: its masks become empty.
        self.observe_mask = self.unc_mask
        if reductions is REDUCTIONS:
            return
        if "R6" not in reductions:
            self.observe_mask = 0
        if "R2" not in reductions:
            self.unc_mask = 0
        if "R3" not in reductions:
            self.ro_mask = self.ro_free = 0
            self.ro_at = {}
        if "R4" not in reductions:
            self.lower_same = [0] * len(self.index)
        if "R5" not in reductions:
            self.req_mask = 0

    @property
    def entries(self) -> list[Entry]:
        """The searched operations as records (for reports), in search order."""
        return [self.problem.entry(i) for i in self.index]

    def _intern(self, state: Hashable) -> int:
        sid = self.sid_of.get(state)
        if sid is None:
            sid = self.sid_of[state] = len(self.states)
            self.states.append(state)
        return sid

    def _compile(
        self, problem: Problem, hint_of: Callable[[Call], Hint] | None, drop_ro: bool
    ) -> None:
        """Per-entry ints and masks for the hot loop. Entries with the same input and
        output form a class, named by the index of its first entry: one hint, one
        transition table. Per-entry work is done by C-level passes (``map``, masks as
        binary numerals); Python loops run per class, and (R4) per entry whose class
        has an earlier member. Masks are built in time linear in their highest bit (a
        mask per class or per entry would cost quadratic memory on big partitions)."""
        calls = problem.calls
        n_in = len(calls)
        n_certain = problem.n_certain
        class_of: dict[tuple[Hashable, Hashable], int] = {}
        cids = list(map(class_of.setdefault, map(_INPUT_OUTPUT, calls), range(n_in)))
        firsts = list(class_of.values())  # one per class, in order
        if hint_of is None:
            class_hint = dict.fromkeys(firsts, NO_HINT)
        else:
            hints = map(hint_of, map(calls.__getitem__, firsts))
            class_hint = dict(zip(firsts, hints, strict=True))
        starts = problem.starts
        ends = problem.ends
        index: list[int] | None = None
        if drop_ro and n_certain < n_in:  # R1
            keep = [i for i in range(n_certain, n_in) if not class_hint[cids[i]].readonly]
            if len(keep) < n_in - n_certain:
                index = list(range(n_certain)) + keep
                calls = [calls[i] for i in index]
                cids = [cids[i] for i in index]
                starts = [starts[i] for i in index]
                ends = [ends[i] for i in index]
        n = len(cids)
        # R4: entries are in return order. Only same-class entries still open when k is
        # invoked can be candidates together with k: a suffix of the earlier members
        # (their ends are sorted). Only entries whose class has an earlier one matter.
        first_at: dict[int, int] = {}  # class: its first entry's position
        first_pos = list(map(first_at.setdefault, cids, range(n)))
        lower_same: list[Any] = [0] * n
        members: dict[int, list[int]] = {}  # of the classes with several entries
        member_ends: dict[int, list[int]] = {}
        for k in compress(range(n), map(ne, first_pos, range(n))):
            c = cids[k]
            ms = members.get(c)
            start = starts[k]
            if ms is None:
                z = first_pos[k]
                members[c] = [z, k]
                member_ends[c] = [ends[z], ends[k]]
                if ends[z] > start:
                    lower_same[k] = (z, 1)
                continue
            es = member_ends[c]
            if es[-1] > start:
                near = ms[bisect_right(es, start) :]
                z0 = near[0]
                lower_same[k] = (z0, mask([z - z0 for z in near]))
            ms.append(k)
            es.append(ends[k])
        # Per class: required and produced states (-1: none; -2: ANY), its transition
        # table, and the masks its hint puts its entries in (read-only ones: only the
        # certain entries).
        sid_of = self.sid_of
        intern = self._intern
        class_need: dict[int, int] = {}
        class_produced: dict[int, int] = {}
        class_trans: dict[int, dict[int, int]] = {}
        in_any: list[int] = []
        in_blind: list[int] = []
        in_req: list[int] = []
        in_ro: list[int] = []
        in_free: list[int] = []
        in_made: dict[int, list[int]] = {}
        in_at: dict[int, list[int]] = {}
        for c, h in class_hint.items():
            class_trans[c] = {}
            pr = h.produces
            rq = h.requires
            if pr is ANY:
                p = -2
            elif pr is NOTHING:
                p = -1
            else:
                sid = sid_of.get(pr)
                p = intern(pr) if sid is None else sid
            if rq is NOTHING:
                r = -1
            else:
                sid = sid_of.get(rq)
                r = intern(rq) if sid is None else sid
            class_produced[c] = p
            class_need[c] = r
            if h.blind and p >= 0:
                self._blind_to[c] = p
            first = first_at.get(c)
            if first is None:
                continue  # all its entries were dropped (R1)
            z = first
            if p >= 0:
                cs = in_made.get(p)
                if cs is None:
                    in_made[p] = [c]
                else:
                    cs.append(c)
            elif p == -2:
                in_any.append(c)
            if h.blind:
                in_blind.append(c)
            if z >= n_certain:
                continue
            if r >= 0:
                in_req.append(c)
            if h.readonly:
                in_ro.append(c)
                if r < 0:
                    in_free.append(c)
                else:
                    cs = in_at.get(r)
                    if cs is None:
                        in_at[r] = [c]
                    else:
                        cs.append(c)
        union = _Unions(first_at, members, n, n_certain)
        self.callable = (
            callable_table(starts, ends, n_certain)
            if n_certain * n < bits.TABLE_BITS
            else CandidateMasks(starts, ends, n_certain)
        )
        self.index = list(range(n)) if index is None else index
        self.starts = starts
        self.ends = ends
        self.calls = calls
        self.cids = cids
        self.dropped = len(problem.calls) - n
        self.n_certain = n_certain
        self.trans = list(map(class_trans.__getitem__, cids))
        self.lower_same = lower_same
        self.class_produced = class_produced
        self.ro_mask = union(in_ro, True)
        self.unc_mask = ((1 << n) - 1) ^ ((1 << n_certain) - 1)
        self.any_mask = union(in_any, False)
        self.req_mask = union(in_req, True)
        self.blind_mask = union(in_blind, False)
        self.producers = {p: union(cs, False) for p, cs in in_made.items()}
        self.ro_at = {r: union(cs, True) for r, cs in in_at.items()}
        self.ro_free = union(in_free, True)
        self.class_hint = class_hint
        self.class_need = class_need
        self.need_sid = list(map(class_need.__getitem__, cids[:n_certain]))
        # About what one memoized configuration costs: its key holds every certain entry,
        # except in lean mode, where it holds those above the forced one (a few).
        self.config_bytes = 300 + (n - n_certain) // 4 if n > bits.LEAN else 250 + n // 4

    def _prepare(
        self,
        problem: Problem,
        hint_of: Callable[[Call], Hint] | None,
        reductions: frozenset[str],
    ) -> None:
        """Lazy mode (small partitions, see ``bits.LAZY``): what is needed up front is
        prepared here (R1, the uncertain entries, which stay candidates once invoked);
        the certain entries are compiled in chunks as the search reaches them
        (``_extend``). The search only ever consults compiled entries: the forced entry
        and R5's next requiring entry, the candidates of either, and the masks restricted
        to those; new entries only get higher positions, so what it found stays true.

        Here classes are numbered in order of appearance, each with a record (a list,
        ``_R*`` fields) so that compiling an entry looks its class up once, and masks are
        built by setting one bit per entry (a partition this small makes that cheap)."""
        self._hint_of = hint_of
        r1 = self._r1 = "R1" in reductions
        r3 = self._r3 = "R3" in reductions
        r4 = self._r4 = "R4" in reductions
        r5 = self._r5 = "R5" in reductions
        self._fast_ro = r1 and r3 and r5
        class_of: dict[tuple[Hashable, Hashable], list[Any]] = {}
        self._class_of = class_of
        self.class_hint = {}
        self.class_need = {}
        self.class_produced = {}
        calls = problem.calls
        n_certain = problem.n_certain
        starts = problem.starts
        ends = problem.ends
        n_in = len(calls)
        cids = [-1] * n_certain
        trans = [_UNCOMPILED] * n_certain
        lower_same: list[Any] = [0] * n_certain
        producers: dict[int, int] = {}
        any_mask = blind_mask = 0
        # The uncertain entries, in one pass: R1 drops the read-only ones; R4 among the
        # others (each is still open when any later one is invoked); their masks.
        kept: list[int] = []
        new_class = self._new_class
        k = n_certain
        for i in range(n_certain, n_in):
            call = calls[i]
            rec = class_of.get((call[0], call[1]))
            if rec is None:
                rec = new_class(call)
            flags = rec[_RFLAGS]
            if r1 and flags & _READONLY:
                continue
            kept.append(i)
            cids.append(rec[_RID])
            trans.append(rec[_RTRANS])
            bit = 1 << k
            us = rec[_RUNSURE]
            if us is None:
                rec[_RUNSURE] = [k]
                lower_same.append(0)
            else:
                lower_same.append((0, mask(us)) if r4 else 0)
                us.append(k)
            p = rec[_RPROD]
            if p >= 0:
                producers[p] = producers.get(p, 0) | bit
            elif p == -2:
                any_mask |= bit
            if flags & _BLIND:
                blind_mask |= bit
            k += 1
        if k < n_in:
            # Only uncertain entries went: the certain ones are copied as they are.
            index = list(range(n_certain))
            index += kept
            calls = calls[:n_certain] + [calls[i] for i in kept]
            starts = starts[:n_certain] + [starts[i] for i in kept]
            ends = ends[:n_certain] + [INF] * len(kept)
        else:
            index = list(range(n_in))
        n = k
        self.index = index
        self.starts = starts
        self.ends = ends
        self.calls = calls
        self.dropped = n_in - n
        self.n_certain = n_certain
        self.cids = cids
        self.trans = trans
        self.lower_same = lower_same
        self.need_sid = [-1] * n_certain
        self.unc_mask = ((1 << n) - 1) ^ ((1 << n_certain) - 1)
        self.ro_mask = self.req_mask = self.ro_free = 0
        self.any_mask = any_mask
        self.blind_mask = blind_mask
        self.producers = producers
        self.ro_at = {}
        self.callable = []
        self.config_bytes = 250 + n // 4  # about what one memoized configuration costs
        # Candidate masks, built in order of forced entry (see bits.callable_table): the
        # entries in order of invocation, their starts (and a sentinel past any end).
        self._by_start = sorted(range(n), key=starts.__getitem__)
        sorted_starts = sorted(starts)  # starts are distinct: the same order
        sorted_starts.append(INF)
        self._sorted_starts = sorted_starts
        self._invoked = 0  # entries of _by_start in _invoked_mask
        self._invoked_mask = 0
        self._ready = 0  # certain entries with a candidate mask, all of it compiled
        self._compiled = 0  # certain entries compiled

    def _new_class(self, call: Call) -> list[Any]:
        """Lazy mode: the record of a new class for a call: its number, transition table,
        produced and required states (-1: none; -2: ANY for the produced one), flags,
        and for R4 its compiled certain entries, their ends and its uncertain ones."""
        hint_of = self._hint_of
        h = NO_HINT if hint_of is None else hint_of(call)
        readonly, requires, produces, blind = h
        sid_of = self.sid_of
        # States are interned here (not by ``_intern``): a class is made per new call.
        if produces is ANY:
            p = -2
        elif produces is NOTHING:
            p = -1
        else:
            p = sid_of.get(produces, -3)
            if p == -3:
                p = sid_of[produces] = len(self.states)
                self.states.append(produces)
        if requires is NOTHING:
            r = -1
        else:
            r = sid_of.get(requires, -3)
            if r == -3:
                r = sid_of[requires] = len(self.states)
                self.states.append(requires)
        c = len(self.class_hint)
        self.class_hint[c] = h
        self.class_produced[c] = p
        self.class_need[c] = r
        flags = _READONLY if readonly else 0
        if blind:
            flags |= _BLIND
            if p >= 0:
                self._blind_to[c] = p
        kind = _K_GENERAL
        if readonly:
            if self._fast_ro and p == -1 and not blind:
                kind = _K_READ if r >= 0 else _K_FREE
        elif blind and p >= 0 and r < 0:
            kind = _K_WRITE
        rec = self._class_of[(call[0], call[1])] = [c, {}, p, r, flags, None, None, None, kind]
        return rec

    def _extend(self, target: int) -> int:
        """Lazy mode: give the certain entries up to ``target`` (and a few more) their
        candidate masks, and compile every certain entry those masks contain. Returns
        the new number of entries ready. The R5 reachability masks depend on the
        producers compiled, so they are forgotten."""
        n_certain = self.n_certain
        ready = self._ready
        hi = min(n_certain, max(target + 1, ready + _CHUNK))
        ends = self.ends
        by_start = self._by_start
        sorted_starts = self._sorted_starts
        j = self._invoked
        m = self._invoked_mask
        table = self.callable
        assert isinstance(table, list)
        for x in range(ready, hi):
            end = ends[x]
            while sorted_starts[j] < end:
                m |= 1 << by_start[j]
                j += 1
            table.append(m)
        self._invoked = j
        self._invoked_mask = m
        self._ready = hi
        self._reach_mask.clear()
        # Compile every certain entry those masks contain (R4 against the earlier
        # members of their class, including the uncertain ones it concerns; their bits
        # in the masks).
        lo = self._compiled
        horizon = max(hi, (m & ((1 << n_certain) - 1)).bit_length())
        if horizon <= lo:
            return hi
        calls = self.calls
        starts = self.starts
        cids = self.cids
        trans = self.trans
        lower_same = self.lower_same
        need_sid = self.need_sid
        class_of = self._class_of
        new_class = self._new_class
        producers = self.producers
        ro_at = self.ro_at
        r3 = self._r3
        r4 = self._r4
        r5 = self._r5
        req_mask = self.req_mask
        ro_free = self.ro_free
        any_mask = self.any_mask
        blind_mask = self.blind_mask
        # A certain read-only entry is never tried as a child when R3 is on (R3
        # linearizes it, or it is illegal), and with R1 its class has no uncertain
        # entries: R4 never looks at it, nor at anything it would record.
        skip_r4 = _READONLY if r3 and self._r1 else 0
        for k in range(lo, horizon):
            call = calls[k]
            rec = class_of.get((call[0], call[1]))
            if rec is None:
                rec = new_class(call)
            cids[k] = rec[0]
            trans[k] = rec[1]
            kind = rec[8]
            bit = 1 << k
            if kind > _K_WRITE:  # read-only: R3's masks (the union, ro_mask, after the loop)
                if kind == _K_READ:
                    r = rec[3]
                    need_sid[k] = r
                    req_mask |= bit
                    ro_at[r] = ro_at.get(r, 0) | bit
                else:
                    ro_free |= bit
                continue
            flags = rec[4]
            if r4 and not flags & skip_r4:
                # R4: the earlier certain members still open when k is invoked (a
                # suffix: their ends are sorted), and k for each uncertain member
                # invoked before k returned.
                end = ends[k]
                ks = rec[5]
                if ks is None:
                    rec[5] = [k]
                    rec[6] = [end]
                else:
                    es = rec[6]
                    start = starts[k]
                    if es[-1] > start:
                        near = ks[bisect_right(es, start) :]
                        z0 = near[0]
                        lower_same[k] = (z0, mask([z - z0 for z in near]))
                    ks.append(k)
                    es.append(end)
                us = rec[7]
                if us is not None:
                    for u in us:
                        if end > starts[u]:
                            ls = lower_same[u]
                            lower_same[u] = (0, bit if ls == 0 else ls[1] | bit)
            p = rec[2]
            if kind:  # _K_WRITE
                producers[p] = producers.get(p, 0) | bit
                blind_mask |= bit
                continue
            if p >= 0:
                producers[p] = producers.get(p, 0) | bit
            elif p == -2:
                any_mask |= bit
            r = rec[3]
            if r >= 0:
                need_sid[k] = r
                if r5:
                    req_mask |= bit
            if flags:
                if flags & _BLIND:
                    blind_mask |= bit
                if flags & _READONLY and r3:
                    if r >= 0:
                        ro_at[r] = ro_at.get(r, 0) | bit
                    else:
                        ro_free |= bit
        ro_mask = ro_free
        for m in ro_at.values():
            ro_mask |= m
        self.ro_mask = ro_mask
        self.req_mask = req_mask
        self.ro_free = ro_free
        self.any_mask = any_mask
        if blind_mask != self.blind_mask:
            # R6 records blind entries as useless from the start, in every state.
            added = blind_mask ^ self.blind_mask
            for d in self.useful.values():
                d[1] |= added
            self.blind_mask = blind_mask
        self._compiled = horizon
        return hi

    def rest_produces(self, need: int) -> bool:
        """Whether some certain entry not compiled yet produces an unknown state (``ANY``)
        or state ``need``: what a report needs to know of the rest of the partition
        (until one does, each call is looked up in the classes known, and its hint asked
        for once otherwise; nothing is compiled)."""
        if self._compiled >= self.n_certain:
            return False
        calls = self.calls
        class_of = self._class_of
        hint_of = self._hint_of
        target = self.states[need] if need >= 0 else ANY
        asked: dict[tuple[Hashable, Hashable], bool] = {}
        for k in range(self._compiled, self.n_certain):
            call = calls[k]
            io = (call[0], call[1])
            rec = class_of.get(io)
            if rec is not None:
                if rec[_RPROD] == -2 or rec[_RPROD] == need:
                    return True
                continue
            hit = asked.get(io)
            if hit is None:
                made = (NO_HINT if hint_of is None else hint_of(call)).produces
                hit = asked[io] = made is ANY or (made is not NOTHING and made == target)
            if hit:
                return True
        return False

    def hint(self, k: int) -> Hint:
        """The hint of entry ``k`` (compiled)."""
        return self.class_hint[self.cids[k]]

    def produced_at(self, k: int) -> int:
        """The state entry ``k`` (compiled) produces when it changes the state (-1: none,
        -2: unknown)."""
        return self.class_produced[self.cids[k]]

    def _step(self, y: int, sid: int) -> int:
        """The state after entry ``y`` in state ``sid`` (-1: illegal), computed once. A
        blind entry's is its hint's: legal everywhere, leaving the one state it produces
        (the state it leaves is the same whatever the state before, and is that one
        wherever it changes the state)."""
        t = self._blind_to.get(self.cids[y])
        if t is None:
            call = self.calls[y]
            ok, new = self.model.step(self.states[sid], call[0], call[1])
            if ok:
                t = self.sid_of.get(new)
                if t is None:
                    t = self._intern(new)
            else:
                t = -1
        self.trans[y][sid] = t
        self.model_steps += 1
        return t

    def _unreachable(self, sid: int, need: int, others: int) -> bool:
        """R5 past the cheap test: no exact producer of ``need`` among ``others``, but
        some ``ANY`` producers. True when ``need`` cannot be reached (prune)."""
        reachable = self._reachable
        if reachable is None:
            return False
        key = (sid, need)
        r = self._reach.get(key)
        if r is None:
            r = self._reach[key] = bool(reachable(self.states[sid], self.states[need]))
        if r:
            return False
        mask = self._reach_mask.get(need)
        if mask is None:
            # The entries producing a known state from which ``need`` is reachable.
            states = self.states
            target = states[need]
            mask = 0
            for p, made in self.producers.items():
                if reachable(states[p], target):
                    mask |= made
            self._reach_mask[need] = mask
        return not others & mask

    def _observed(self, sid: int, others: int) -> bool:
        """R6: whether some entry of ``others`` could usefully follow in state ``sid``:
        legal there, not blind, and certain or changing the state.

        Decisions are kept per state as two masks, ``useful[sid] = [yes, no]`` (blind
        entries are in ``no`` from the start), so each entry is decided at most once
        per state and the hot loop answers from the masks when they suffice. In the
        first states met (up to 64) the hints decide where they can (over-approximating
        is safe: it only prunes less): an entry requiring a state is legal only there and
        is taken to change it; a read-only one is taken to be legal and to keep the
        state. Other entries, and every entry in later states, are stepped."""
        d = self.useful.get(sid)
        if d is None:
            d = self.useful[sid] = [0, self.blind_mask]
            if len(self.hinted) < 64:
                self.hinted.add(sid)
        yes, no = d
        if others & yes:
            return True
        by_hint = sid in self.hinted
        trans = self.trans
        cids = self.cids
        class_need = self.class_need
        class_hint = self.class_hint
        n_certain = self.n_certain
        rest = others & ~no
        found = False
        while rest:
            low = rest & -rest
            rest ^= low
            z = low.bit_length() - 1
            if by_hint:
                c = cids[z]
                need = class_need[c]
                if need >= 0:
                    ok = need == sid
                elif class_hint[c].readonly:
                    ok = z < n_certain
                else:
                    t = trans[z].get(sid)
                    if t is None:
                        t = self._step(z, sid)
                    ok = t >= 0 and (z < n_certain or t != sid)
            else:
                t = trans[z].get(sid)
                if t is None:
                    t = self._step(z, sid)
                ok = t >= 0 and (z < n_certain or t != sid)
            if ok:
                yes |= low
                found = True
                break
            no |= low
        d[0] = yes
        d[1] = no
        return found

    def run(self) -> Generator[int, int, SearchResult]:
        """Search; yields the step count after each quota and is resumed with the next
        quota (``send``). Returns the result. Prime it with ``next()`` first."""
        quota = yield 0
        n_certain = self.n_certain
        callable_ = self.callable
        trans = self.trans
        ro_mask = self.ro_mask
        unc_mask = self.unc_mask
        lower_same = self.lower_same
        need_sid = self.need_sid
        producers = self.producers
        req_mask = self.req_mask
        any_mask = self.any_mask
        observe_mask = self.observe_mask
        observed = self._observed
        useful = self.useful
        unreachable = self._unreachable
        slow_step = self._step
        memo = self.memo
        cmask = (1 << n_certain) - 1
        configs = 0
        stack: list[list[Any]] = []
        self.stack = stack
        lean = len(self.index) > bits.LEAN
        # The current path as a linked list (entries, rest), ``entries`` a bitset of the
        # entries linearized at once (R3's, or one child): O(1) to extend, to cut back
        # and to keep a copy of; turned into lists only for the result.
        path: Any = None
        paths: list[tuple[Any, int, int]] = []  # (path, its state, its entries)
        path_sids: list[int] = []
        ro_at = self.ro_at
        ro_free = self.ro_free
        reach = self._reach
        lin = 0
        sid = self.init_sid
        steps = 0
        limit = quota
        best_x = -1
        max_paths = self.MAX_PATHS
        # Lazy mode: the certain entries below ``ready`` have their candidate masks and
        # everything those contain is compiled; ``pending`` while R5 may need to look
        # past the compiled ones. (Eager mode: all are ready.)
        ready = self._ready
        pending = self._r5 and self._compiled < n_certain if self.lazy else False
        while True:
            # Enter (lin, sid): R3 closure, then memo, then R5.
            ro_here = ro_at.get(sid, 0)  # read-only entries legal here by their hints
            while True:
                x = (lin ^ (lin + 1)).bit_length() - 1  # its lowest zero bit
                if x >= ready:
                    if x >= n_certain:
                        self.steps = steps
                        return SearchResult(
                            True, steps=steps, model_steps=self.model_steps, configs=configs
                        )
                    ready = self._extend(x)
                    ro_mask, ro_free, req_mask, any_mask = (
                        self.ro_mask,
                        self.ro_free,
                        self.req_mask,
                        self.any_mask,
                    )
                    ro_here = ro_at.get(sid, 0)
                cand = callable_[x] & ~lin
                ro = cand & ro_here
                free = cand & ro_free
                while free:
                    low = free & -free
                    free ^= low
                    y = low.bit_length() - 1
                    t = trans[y].get(sid)
                    if t is None:
                        t = slow_step(y, sid)
                    if t >= 0:
                        ro |= low
                if not ro:
                    break
                lin |= ro
                path = ((x, ro >> x), path)  # every entry of ro is x or above
            fresh = True
            if memo:  # (nothing is recorded before the first backtrack)
                lc = lin & cmask
                if lean:  # keys and records without the bits of the entries below x
                    lst = memo.get((x, lc >> x, sid))
                    u = lin >> n_certain
                else:
                    lst = memo.get((lc, sid))
                    u = lin ^ lc
                if lst is not None:
                    for v in lst:
                        if v | u == u:
                            fresh = False  # dominated by a configuration that failed
                            break
            if fresh:
                if x > best_x:
                    best_x = x
                    paths = [(path, sid, lin)]
                    path_sids = [sid]
                elif x == best_x and len(paths) < max_paths and sid not in path_sids:
                    paths.append((path, sid, lin))
                    path_sids.append(sid)
                # R5 on the next entry that requires a state.
                rem = req_mask & ~lin
                if pending and not rem:
                    while not rem and self._compiled < n_certain:
                        ready = self._extend(self._compiled)
                        req_mask = self.req_mask
                        rem = req_mask & ~lin
                    ro_mask, ro_free, any_mask = self.ro_mask, self.ro_free, self.any_mask
                    pending = self._compiled < n_certain
                gbit = rem & -rem
                need = need_sid[gbit.bit_length() - 1] if rem else sid
                if need == sid:
                    stack.append(
                        [(lin & cmask) >> x, sid, x, 0, path, lin >> n_certain, None]
                        if lean
                        else [lin, sid, x, 0, path, cand & ~ro_mask, cand]
                    )
                else:
                    g = gbit.bit_length() - 1
                    if g >= ready:
                        ready = self._extend(g)
                        ro_mask, ro_free, req_mask, any_mask = (
                            self.ro_mask,
                            self.ro_free,
                            self.req_mask,
                            self.any_mask,
                        )
                        pending = pending and self._compiled < n_certain
                    others = (callable_[g] & ~lin) ^ gbit
                    if others & producers.get(need, 0) or (
                        others & any_mask
                        and (reach.get((sid, need)) or not unreachable(sid, need, others))
                    ):
                        stack.append(
                            [(lin & cmask) >> x, sid, x, 0, path, lin >> n_certain, None]
                            if lean
                            else [lin, sid, x, 0, path, cand & ~ro_mask, cand]
                        )
                    else:
                        configs += 1
                        lc = lin & cmask
                        key: tuple[int, ...]
                        if lean:
                            key = (x, lc >> x, sid)
                            rec = lin >> n_certain
                        else:
                            key = (lc, sid)
                            rec = lin ^ lc
                        lst = memo.get(key)
                        if lst is None:
                            memo[key] = [rec]
                        else:
                            lst.append(rec)
            # Advance to the next child of the deepest frame that has one.
            while stack:
                fr = stack[-1]
                sid0 = fr[1]
                orig = fr[6]
                if orig is None:
                    # A lean frame keeps its entries as the certain ones above x and the
                    # uncertain ones (all below x are in): its candidates are recomputed,
                    # and those below fr[3] have been tried.
                    x0 = fr[2]
                    lin0 = ((1 << x0) - 1) | (fr[0] << x0) | (fr[5] << n_certain)
                    orig = callable_[x0] & ~lin0
                    cand = (orig & ~ro_mask) >> fr[3] << fr[3]
                else:
                    lin0 = fr[0]
                    cand = fr[5]
                t = -1
                while cand:
                    low = cand & -cand
                    cand ^= low
                    y = low.bit_length() - 1
                    ls = lower_same[y]
                    if ls and orig >> ls[0] & ls[1]:
                        continue  # R4
                    t = trans[y].get(sid0)
                    if t is None:
                        t = slow_step(y, sid0)
                    if t >= 0 and (t != sid0 or not unc_mask & low):  # R2
                        if not observe_mask & low:
                            break
                        others = orig ^ low  # R6
                        d = useful.get(t)
                        if d is not None:
                            if others & d[0]:
                                break
                            if not others & ~d[1]:
                                t = -1
                                continue
                        if observed(t, others):
                            break
                    t = -1
                if t < 0:
                    stack.pop()
                    configs += 1
                    if lean:
                        key = (fr[2], fr[0], sid0)
                        rec = fr[5]
                    else:
                        lc = lin0 & cmask
                        key = (lc, sid0)
                        rec = lin0 ^ lc
                    lst = memo.get(key)
                    if lst is None:
                        memo[key] = [rec]
                    else:
                        lst.append(rec)
                    continue
                path = (y, fr[4])
                lin = lin0 | low
                sid = t
                if lean:
                    fr[3] = y + 1
                else:
                    fr[5] = cand
                break
            else:
                self.steps = steps
                return SearchResult(
                    False,
                    steps=steps,
                    model_steps=self.model_steps,
                    configs=configs,
                    failed=self._culprit(
                        best_x, paths[0][2] if paths else 0, paths[0][1] if paths else self.init_sid
                    ),
                    paths=[(unlink(p), self.states[s]) for p, s, _ in paths],
                )
            steps += 1
            if steps >= limit:
                self.steps = steps
                self.configs = configs
                quota = yield steps
                limit = steps + quota

    def _culprit(self, x: int, lin: int, sid: int) -> int:
        """The entry to blame in the deepest configuration (its entries ``lin``, its
        state ``sid``): the forced one ``x``, unless R5 cut the configuration because the
        next entry requiring a state could not get it; then that entry."""
        rem = self.req_mask & ~lin
        if not rem:
            return x
        gbit = rem & -rem
        g = gbit.bit_length() - 1
        need = self.need_sid[g]
        if need == sid:
            return x
        others = (self.callable[g] & ~lin) ^ gbit
        if others & self.producers.get(need, 0):
            return x
        if others & self.any_mask and not self._unreachable(sid, need, others):
            return x
        return g

    def memory(self) -> int:
        """Estimated bytes held by the memo and the stack (bitsets: three per frame, one
        in a lean one)."""
        per_frame = 1 if len(self.index) > bits.LEAN else 3
        return (self.configs + per_frame * len(self.stack)) * self.config_bytes

    def unknown(self, reason: str) -> SearchResult:
        """The result when the search is stopped before a verdict."""
        return SearchResult(
            "unknown",
            reason=reason,
            steps=self.steps,
            model_steps=self.model_steps,
            configs=self.configs,
        )
