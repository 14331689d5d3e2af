"""The linearizability search for one partition: Wing & Gong with Lowe's memoization,
plus reductions that never change the verdict (R1-R6); their proofs are in
``docs/linearizability.md``.

A *configuration* is ``(L, s)``: the bitset ``L`` of linearized entries and the interned
state ``s``; its *forced* entry ``x`` is the lowest zero bit of ``L`` (the unlinearized
certain entry returning first), its *candidates* the entries not in ``L`` invoked before
``x`` returned (``callable[x] & ~L``). Invariants the loop relies on:

- (F1) every certain entry that returned before ``x`` is in ``L``; (F2) no unlinearized
  entry precedes a candidate in real time;
- only configurations whose exploration is over are recorded in the memo (as failed),
  under their certain part and state, with their uncertain part: a configuration whose
  uncertain part contains a recorded one is dominated and not expanded;
- R1 (uncertain read-only entries dropped) is done when compiling; R3 (legal read-only
  candidates linearized at once) on entering a configuration; R5 (the next required
  state unreachable: backtrack) before a configuration is pushed; R4 (same effect: only
  the first tried), R2 (no uncertain no-op) and R6 (an uncertain entry only if something
  can usefully follow) when choosing a child. A reduction switched off is an empty mask;
- in lean mode (more than ``bits.LEAN`` entries) a frame and a memo key keep only the
  certain entries above ``x`` and the uncertain ones (every entry below ``x`` is in ``L``).

The search is a generator so that partitions can be interleaved: it yields after each
quota of steps and is resumed with the next quota.
"""

from __future__ import annotations

from collections.abc import Generator, Hashable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from checkers.linear import bits
from checkers.linear.bits import unlink
from checkers.linear.model import Model
from checkers.linear.prepare import Problem
from checkers.linear.prune import Prune

Verdict = bool | Literal["unknown"]

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


class Search(Prune):
    """The optimized search over one problem; ``run()`` is a resumable generator."""

    MAX_PATHS = 3

    __slots__ = ()

    def __init__(
        self, problem: Problem, model: Model, reductions: frozenset[str] = REDUCTIONS
    ) -> None:
        if reductions is not REDUCTIONS:
            unknown = reductions - REDUCTIONS
            if unknown:
                raise ValueError(f"unknown reductions {sorted(unknown)}: choose from {REDUCTIONS}")
        super().__init__(problem, model)
        self.reductions = reductions
        self.steps = 0
        self.memo = {}
        self.configs = 0
        self.stack = []
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
