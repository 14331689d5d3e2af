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
``step`` once per (class, state); hints become masks, so R3 and R5 test a whole set at
once. The path is a linked list of tuples, kept in O(1) when it is the deepest so far.
Partitions with more than ``bits.LEAN`` entries run in a lean mode whose memory stays
linear in their size: frames keep one bitset and are dropped once nothing is left to
try from them, and candidate masks are computed instead of tabled.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Generator, Hashable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from checkers.linear import bits
from checkers.linear.bits import CandidateMasks, callable_table, mask, unlink
from checkers.linear.model import ANY, NO_HINT, NOTHING, Call, Hint, Model
from checkers.linear.prepare import Entry, Problem

Verdict = bool | Literal["unknown"]
REDUCTIONS: Final = frozenset({"R1", "R2", "R3", "R4", "R5", "R6"})
"""All reductions (on by default); tests switch them off one by one."""


@dataclass
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


class Search:
    """The optimized search over one problem; ``run()`` is a resumable generator."""

    MAX_PATHS = 3

    def __init__(
        self, problem: Problem, model: Model, reductions: frozenset[str] = REDUCTIONS
    ) -> None:
        unknown = reductions - REDUCTIONS
        if unknown:
            raise ValueError(f"unknown reductions {sorted(unknown)}: choose from {REDUCTIONS}")
        self.problem = problem
        self.model = model
        self.reductions = reductions
        self.states: list[Hashable] = [problem.init]
        self.sid_of: dict[Hashable, int] = {problem.init: 0}
        self.init_sid = 0
        self.model_steps = 0
        self.steps = 0
        self.memo: dict[tuple[int, int], list[int]] = {}
        self.configs = 0
        self.stack: list[list[Any]] = []
        self._reachable: Callable[[Any, Any], bool] | None = getattr(model, "reachable", None)
        self._reach: dict[tuple[int, int], bool] = {}
        self._reach_mask: dict[int, int] = {}
        self.unc_mask = 0
        self._compile(problem, getattr(model, "hint", None), "R1" in reductions)
        # Switching a reduction off costs the hot loop nothing: its masks become empty.
        self.observe_mask = self.unc_mask if "R6" in reductions else 0
        if "R2" not in reductions:
            self.unc_mask = 0
        if "R3" not in reductions:
            self.ro_mask = self.ro_free = 0
            self.ro_at: dict[int, int] = {}
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
        output form a class: one hint, one transition table; masks are built per class."""
        intern = self._intern
        calls = problem.calls
        n_in = len(calls)
        class_of: dict[tuple[Hashable, Hashable], int] = {}
        cids = [class_of.setdefault((c[0], c[1]), len(class_of)) for c in calls]
        first = [0] * len(class_of)
        for i in range(n_in - 1, -1, -1):
            first[cids[i]] = i
        class_hint = [hint_of(calls[i]) if hint_of is not None else NO_HINT for i in first]
        n_certain = problem.n_certain
        if drop_ro and any(class_hint[c].readonly for c in cids[n_certain:]):  # R1
            index = [i for i in range(n_in) if i < n_certain or not class_hint[cids[i]].readonly]
            calls = [calls[i] for i in index]
            cids = [cids[i] for i in index]
            starts = [problem.starts[i] for i in index]
            ends = [problem.ends[i] for i in index]
        else:
            index = list(range(n_in))
            starts = problem.starts
            ends = problem.ends
        n = len(index)
        class_trans: list[dict[int, int]] = [{} for _ in first]
        trans = [class_trans[c] for c in cids]
        # Per-class facts; masks are built from lists of positions in linear time (a
        # mask per class or per entry would cost quadratic memory on big partitions).
        class_need: list[int] = []
        class_produced: list[int] = []
        sid_of = self.sid_of
        for h in class_hint:
            pr = h.produces
            if pr is ANY:
                class_produced.append(-2)
            elif pr is NOTHING:
                class_produced.append(-1)
            else:
                p = sid_of.get(pr)
                class_produced.append(intern(pr) if p is None else p)
            rq = h.requires
            if rq is NOTHING:
                class_need.append(-1)
            else:
                r = sid_of.get(rq)
                class_need.append(intern(rq) if r is None else r)
        produced = [class_produced[c] for c in cids]
        hints = [class_hint[c] for c in cids]
        rep = [-1] * len(first)  # the first entry of each class
        member_ends: list[list[int]] = [[] for _ in first]
        member_ks: list[list[int]] = [[] for _ in first]
        lower_same: list[Any] = []
        for k, c in enumerate(cids):  # R4: entries are in return order
            ks = member_ks[c]
            es = member_ends[c]
            start = starts[k]
            if not ks:
                rep[c] = k
                lower_same.append(0)
            elif es[-1] <= start:
                lower_same.append(0)  # every earlier member returned before k began
            else:
                # Only same-class entries still open when k is invoked can be
                # candidates together with k: a suffix of the class (ends are sorted).
                near = ks[bisect_right(es, start) :]
                lower_same.append((near[0], mask([z - near[0] for z in near])))
            ks.append(k)
            es.append(ends[k])
        blind_class = [h.blind for h in class_hint]
        ro_class = [h.readonly for h in class_hint]
        any_mask = mask([k for k, p in enumerate(produced) if p == -2])
        blind_mask = mask([k for k, c in enumerate(cids) if blind_class[c]])
        ro_list = [k for k in range(n_certain) if ro_class[cids[k]]]
        req_mask = mask([k for k in range(n_certain) if class_need[cids[k]] >= 0])
        positions: dict[int, list[int]] = {}
        for k, p in enumerate(produced):
            if p >= 0:
                positions.setdefault(p, []).append(k)
        producers = {p: mask(ks) for p, ks in positions.items()}
        need_sid = [class_need[c] for c in cids[:n_certain]]
        need_prod = [producers.get(r, 0) if r >= 0 else 0 for r in need_sid]
        self.callable: list[int] | CandidateMasks = (
            callable_table(starts, ends, n_certain)
            if n_certain * n < bits.TABLE_BITS
            else CandidateMasks(starts, ends, n_certain)
        )
        self.index = index
        self.starts = starts
        self.ends = ends
        self.calls = calls
        self.hints = hints
        self.cids = cids
        self.dropped = n_in - n
        self.n_certain = n_certain
        self.trans = trans
        self.lower_same = lower_same
        self.produced = produced
        self.ro_mask = mask(ro_list)
        self.unc_mask = ((1 << n) - 1) ^ ((1 << n_certain) - 1)
        self.any_mask = any_mask
        self.req_mask = req_mask
        self.blind_mask = blind_mask
        self.useful: dict[int, int] = {}
        at: dict[int, list[int]] = {}
        free: list[int] = []
        for k in ro_list:
            r = class_need[cids[k]]
            if r >= 0:
                at.setdefault(r, []).append(k)
            else:
                free.append(k)
        self.ro_at = {r: mask(ks) for r, ks in at.items()}
        self.ro_free = mask(free)
        self.class_hint = class_hint
        self.class_need = class_need
        self.class_rep = rep
        self.need_sid = need_sid
        self.need_prod = need_prod
        self.config_bytes = 250 + n // 4  # about what one memoized configuration costs

    def _step(self, y: int, sid: int) -> int:
        """The state after entry ``y`` in state ``sid`` (-1: illegal), computed once."""
        call = self.calls[y]
        ok, new = self.model.step(self.states[sid], call[0], call[1])
        t = self._intern(new) if ok else -1
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
            target = self.states[need]
            mask = 0
            for i, p in enumerate(self.produced):
                if p >= 0 and reachable(self.states[p], target):
                    mask |= 1 << i
            self._reach_mask[need] = mask
        return not others & mask

    def _observed(self, sid: int, others: int) -> bool:
        """R6: whether some entry of ``others`` could usefully follow in state ``sid``:
        legal there, not blind, and certain or changing the state. A mask per state is
        kept for the first states met, built per class from the hints where they decide
        (over-approximating is safe: it only prunes less) and by stepping otherwise;
        beyond that, ``others`` are stepped one by one."""
        useful = self.useful
        trans = self.trans
        step = self._step
        n_certain = self.n_certain
        if len(useful) < 64:
            if_certain: list[bool] = []
            if_uncertain: list[bool] = []
            for c, h in enumerate(self.class_hint):
                k = self.class_rep[c]
                need = self.class_need[c]
                if k < 0 or h.blind:
                    ok = changes = False
                elif need >= 0:
                    ok = changes = need == sid
                elif h.readonly:
                    ok, changes = True, False
                else:
                    t = trans[k].get(sid)
                    if t is None:
                        t = step(k, sid)
                    ok, changes = t >= 0, t >= 0 and t != sid
                if_certain.append(ok)
                if_uncertain.append(changes)
            cids = self.cids
            found = mask(
                [k for k in range(n_certain) if if_certain[cids[k]]]
                + [k for k in range(n_certain, len(cids)) if if_uncertain[cids[k]]]
            )
            useful[sid] = found
            return bool(others & found)
        rest = others & ~self.blind_mask
        while rest:
            low = rest & -rest
            rest ^= low
            z = low.bit_length() - 1
            t = trans[z].get(sid)
            if t is None:
                t = step(z, sid)
            if t >= 0 and (z < n_certain or t != sid):
                return True
        return False

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
        need_prod = self.need_prod
        req_mask = self.req_mask
        any_mask = self.any_mask
        observe_mask = self.observe_mask
        useful = self.useful
        observed = self._observed
        unreachable = self._unreachable
        slow_step = self._step
        memo = self.memo
        cmask = (1 << n_certain) - 1
        configs = 0
        stack: list[list[Any]] = []
        self.stack = stack
        lean = len(self.index) > bits.LEAN
        # The current path as a linked list (entry, rest): O(1) to extend, to cut back
        # and to keep a copy of; turned into lists only for the result.
        path: Any = None
        paths: list[tuple[Any, int]] = []
        path_sids: set[int] = set()
        ro_at = self.ro_at
        ro_free = self.ro_free
        reach = self._reach
        lin = 0
        sid = self.init_sid
        steps = 0
        limit = quota
        best_x = -1
        max_paths = self.MAX_PATHS
        while True:
            # Enter (lin, sid): R3 closure, then memo, then R5.
            while True:
                x = ((lin + 1) & ~lin).bit_length() - 1
                if x >= n_certain:
                    self.steps = steps
                    return SearchResult(
                        True, steps=steps, model_steps=self.model_steps, configs=configs
                    )
                cand = callable_[x] & ~lin
                ro = cand & ro_at.get(sid, 0)  # legal here by their hints
                free = cand & ro_free
                while free:
                    low = free & -free
                    free ^= low
                    t = trans[low.bit_length() - 1].get(sid)
                    if t is None:
                        t = slow_step(low.bit_length() - 1, sid)
                    if t >= 0:
                        ro |= low
                if not ro:
                    break
                lin |= ro
                while ro:
                    low = ro & -ro
                    ro ^= low
                    path = (low.bit_length() - 1, path)
            lc = lin & cmask
            u = lin ^ lc
            key = (lc, sid)
            lst = memo.get(key)
            fresh = True
            if lst is not None:
                for v in lst:
                    if v | u == u:
                        fresh = False  # dominated by a configuration that failed
                        break
            if fresh:
                if x >= best_x:
                    if x > best_x:
                        best_x = x
                        paths = []
                        path_sids = set()
                    if len(paths) < max_paths and sid not in path_sids:
                        paths.append((path, sid))
                        path_sids.add(sid)
                # R5 on the next entry that requires a state.
                rem = req_mask & ~lin
                gbit = rem & -rem
                need = need_sid[gbit.bit_length() - 1] if rem else sid
                if need == sid:
                    stack.append(
                        [lin, sid, x, 0, path, None, None]
                        if lean
                        else [lin, sid, x, 0, path, cand & ~ro_mask, cand]
                    )
                else:
                    g = gbit.bit_length() - 1
                    others = (callable_[g] & ~lin) ^ gbit
                    if others & need_prod[g] or (
                        others & any_mask
                        and (reach.get((sid, need)) or not unreachable(sid, need, others))
                    ):
                        stack.append(
                            [lin, sid, x, 0, path, None, None]
                            if lean
                            else [lin, sid, x, 0, path, cand & ~ro_mask, cand]
                        )
                    else:
                        configs += 1
                        if lst is None:
                            memo[key] = [u]
                        else:
                            lst.append(u)
            # Advance to the next child of the deepest frame that has one.
            while stack:
                fr = stack[-1]
                sid0 = fr[1]
                orig = fr[6]
                if orig is None:
                    # A lean frame keeps one bitset: its candidates are recomputed, and
                    # those below fr[3] have been tried.
                    orig = callable_[fr[2]] & ~fr[0]
                    cand = (orig & ~ro_mask) >> fr[3] << fr[3]
                else:
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
                        m = useful.get(t)  # R6
                        if (orig ^ low) & m if m is not None else observed(t, orig ^ low):
                            break
                    t = -1
                if t < 0:
                    stack.pop()
                    lin0 = fr[0]
                    lc = lin0 & cmask
                    key = (lc, sid0)
                    configs += 1
                    lst = memo.get(key)
                    if lst is None:
                        memo[key] = [lin0 ^ lc]
                    else:
                        lst.append(lin0 ^ lc)
                    continue
                path = (y, fr[4])
                lin = fr[0] | low
                sid = t
                if not lean:
                    fr[5] = cand
                elif cand:
                    fr[3] = y + 1
                else:
                    # Its last child: nothing left to try from it. Big partitions drop
                    # such frames (each holds a bitset as long as the partition) and
                    # lose only their memo record.
                    stack.pop()
                break
            else:
                self.steps = steps
                return SearchResult(
                    False,
                    steps=steps,
                    model_steps=self.model_steps,
                    configs=configs,
                    failed=self._culprit(
                        best_x,
                        unlink(paths[0][0]) if paths else [],
                        paths[0][1] if paths else self.init_sid,
                    ),
                    paths=[(unlink(p), self.states[s]) for p, s in paths],
                )
            steps += 1
            if steps >= limit:
                self.steps = steps
                self.configs = configs
                quota = yield steps
                limit = steps + quota

    def _culprit(self, x: int, path: list[int], sid: int) -> int:
        """The entry to blame in the deepest configuration: the forced one ``x``, unless
        R5 cut the configuration because the next entry requiring a state could not
        get it; then that entry."""
        lin = 0
        for k in path:
            lin |= 1 << k
        rem = self.req_mask & ~lin
        if not rem:
            return x
        gbit = rem & -rem
        g = gbit.bit_length() - 1
        need = self.need_sid[g]
        if need == sid:
            return x
        others = (self.callable[g] & ~lin) ^ gbit
        if others & self.need_prod[g]:
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
