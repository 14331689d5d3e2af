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

from collections.abc import Generator, Hashable, Sequence
from typing import Any, Final, Literal, NamedTuple

from checkers.linear import bits
from checkers.linear.bits import unlink
from checkers.linear.model import Model
from checkers.linear.prepare import Problem
from checkers.linear.prune import Prune
from core.formats.budget import Budget

Verdict = bool | Literal["unknown"]

REDUCTIONS: Final = frozenset({"R1", "R2", "R3", "R4", "R5", "R6"})
"""All reductions (on by default); tests switch them off one by one."""


class SearchResult(NamedTuple):
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
    paths: Sequence[tuple[list[int], Hashable]] = ()


class Search(Prune):
    """The optimized search over one problem; ``run()`` is a resumable generator."""

    MAX_PATHS = 3

    __slots__ = ()

    def __init__(
        self,
        problem: Problem,
        model: Model,
        reductions: frozenset[str] = REDUCTIONS,
        meter: Budget | None = None,
    ) -> None:
        """The search of ``problem``; compiling it polls ``meter`` (the check's budget)
        and accounts the tables it builds against it (OutOfBudget past it)."""
        if reductions is not REDUCTIONS:
            unknown = reductions - REDUCTIONS
            if unknown:
                raise ValueError(f"unknown reductions {sorted(unknown)}: choose from {REDUCTIONS}")
        super().__init__(problem, model, meter)
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
        quota (``send``). Returns the result. Prime it with ``next()`` first.

        Each step enters a configuration (``_enter``: R3), expands it unless the memo
        dominates it (``_expand``: R5, then a frame on the stack) and moves to the next
        child of the deepest frame that has one (``_advance``: R4, R2, R6)."""
        quota = yield 0
        n_certain = self.n_certain
        lean = len(self.index) > bits.LEAN
        cmask = (1 << n_certain) - 1
        memo = self.memo
        # The current path as a linked list (entries, rest), ``entries`` a bitset of the
        # entries linearized at once (R3's, or one child): O(1) to extend, to cut back
        # and to keep a copy of; turned into lists only for the result.
        path: Any = None
        self._paths = []
        self._path_sids = []
        self._best_x = -1
        lin = 0
        sid = self.init_sid
        steps = 0
        limit = quota
        while True:
            x, lin, path, cand = self._enter(lin, sid, path)
            if x >= n_certain:
                self.steps = steps
                return SearchResult(
                    True, steps=steps, model_steps=self.model_steps, configs=self.configs
                )
            if not memo or not self._dominated(lin, sid, x, lean, cmask):
                self._expand(lin, sid, x, path, cand, lean, cmask)
            y, lin, sid, parent = self._advance(lean, cmask)
            if y < 0:
                self.steps = steps
                return self._refuted(steps)
            path = (y, parent)
            steps += 1
            if steps >= limit:
                self.steps = steps
                quota = yield steps
                limit = steps + quota

    def _enter(self, lin: int, sid: int, path: Any) -> tuple[int, int, Any, int]:
        """Enter ``(lin, sid)``: R3's closure (the legal read-only candidates linearized
        at once, again while that adds some). Returns the forced entry (``n_certain`` or
        more when every certain entry is in), the entries, the path and the candidates.
        Lazy mode: compiles up to the forced entry first."""
        callable_ = self.callable
        trans = self.trans
        ro_at = self.ro_at
        ro_free = self.ro_free
        ro_here = ro_at.get(sid, 0)  # read-only entries legal here by their hints
        while True:
            x = (lin ^ (lin + 1)).bit_length() - 1  # its lowest zero bit
            if x >= self._ready:
                if x >= self.n_certain:
                    return x, lin, path, 0
                self._extend(x)
                ro_free = self.ro_free
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
                    t = self._step(y, sid)
                if t >= 0:
                    ro |= low
            if not ro:
                return x, lin, path, cand
            lin |= ro
            path = ((x, ro >> x), path)  # every entry of ro is x or above

    def _key(self, lin: int, sid: int, x: int, lean: bool, cmask: int) -> tuple[int, ...]:
        """The memo's key of a configuration: its certain part and state (lean mode:
        without the bits below its forced entry ``x``, and with ``x``)."""
        if lean:
            return (x, (lin & cmask) >> x, sid)
        return (lin & cmask, sid)

    def _dominated(self, lin: int, sid: int, x: int, lean: bool, cmask: int) -> bool:
        """Whether the memo holds a failed configuration with the same key whose
        uncertain part is contained in this one's (then this one fails too)."""
        lst = self.memo.get(self._key(lin, sid, x, lean, cmask))
        if lst is None:
            return False
        u = lin >> self.n_certain if lean else lin & ~cmask
        return any(v | u == u for v in lst)

    def _remember(self, key: tuple[int, ...], rec: int) -> None:
        """Record a configuration whose exploration is over as failed: its key and its
        uncertain part (lean mode: shifted down to the uncertain entries)."""
        self.configs += 1
        lst = self.memo.get(key)
        if lst is None:
            self.memo[key] = [rec]
        else:
            lst.append(rec)

    def _expand(
        self, lin: int, sid: int, x: int, path: Any, cand: int, lean: bool, cmask: int
    ) -> None:
        """A configuration not dominated: kept among the deepest paths, then pushed as a
        frame unless R5 cuts it (then recorded as failed)."""
        if x > self._best_x:
            self._best_x = x
            self._paths = [(path, sid, lin)]
            self._path_sids = [sid]
        elif x == self._best_x and len(self._paths) < self.MAX_PATHS and sid not in self._path_sids:
            self._paths.append((path, sid, lin))
            self._path_sids.append(sid)
        if not self._r5_cuts(lin, sid):
            n_certain = self.n_certain
            self.stack.append(
                [(lin & cmask) >> x, sid, x, 0, path, lin >> n_certain, None]
                if lean
                else [lin, sid, x, 0, path, cand & ~self.ro_mask, cand]
            )
        elif lean:
            self._remember(self._key(lin, sid, x, lean, cmask), lin >> self.n_certain)
        else:
            self._remember(self._key(lin, sid, x, lean, cmask), lin & ~cmask)

    def _r5_cuts(self, lin: int, sid: int) -> bool:
        """R5 on the next entry that requires a state: whether it cannot get it. Lazy
        mode: compiles as far as needed to find that entry, and up to it."""
        rem = self.req_mask & ~lin
        if not rem and self._compiled < self.n_certain and self._r5:  # lazy mode
            while not rem and self._compiled < self.n_certain:
                self._extend(self._compiled)
                rem = self.req_mask & ~lin
        if not rem:
            return False
        gbit = rem & -rem
        g = gbit.bit_length() - 1
        need = self.need_sid[g]
        if need == sid:
            return False
        if g >= self._ready:
            self._extend(g)
        return not self._reaches(g, lin, sid, need)

    def _advance(self, lean: bool, cmask: int) -> tuple[int, int, int, Any]:
        """The next child of the deepest frame that has one: ``(y, entries, state,
        parent path)``; frames without one are popped and recorded as failed. ``y`` is -1
        when the stack is empty (the search failed)."""
        stack = self.stack
        n_certain = self.n_certain
        callable_ = self.callable
        trans = self.trans
        lower_same = self.lower_same
        unc_mask = self.unc_mask
        observe_mask = self.observe_mask
        useful = self.useful
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
                cand = (orig & ~self.ro_mask) >> fr[3] << fr[3]
            else:
                lin0 = fr[0]
                cand = fr[5]
            while cand:
                low = cand & -cand
                cand ^= low
                y = low.bit_length() - 1
                ls = lower_same[y]
                if ls and orig >> ls[0] & ls[1]:
                    continue  # R4
                t = trans[y].get(sid0)
                if t is None:
                    t = self._step(y, sid0)
                if t < 0 or (t == sid0 and unc_mask & low):  # R2
                    continue
                if observe_mask & low:  # R6
                    others = orig ^ low
                    d = useful.get(t)
                    if d is None or not others & d[0]:
                        if d is not None and not others & ~d[1]:
                            continue
                        if not self._observed(t, others):
                            continue
                if lean:
                    fr[3] = y + 1
                else:
                    fr[5] = cand
                return y, lin0 | low, t, fr[4]
            stack.pop()
            if lean:
                self._remember((fr[2], fr[0], sid0), fr[5])
            else:
                self._remember((lin0 & cmask, sid0), lin0 & ~cmask)
        return -1, 0, 0, None

    def _refuted(self, steps: int) -> SearchResult:
        """The result when every configuration failed: the deepest paths, and the entry
        to blame at the first of them."""
        paths = self._paths
        first_lin, first_sid = (paths[0][2], paths[0][1]) if paths else (0, self.init_sid)
        return SearchResult(
            False,
            steps=steps,
            model_steps=self.model_steps,
            configs=self.configs,
            failed=self._culprit(self._best_x, first_lin, first_sid),
            paths=[(unlink(p), self.states[s]) for p, s, _ in paths],
        )

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
