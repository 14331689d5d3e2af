"""Lazy compilation: the tables of a small partition (up to ``bits.LAZY`` operations),
built as the search reaches its entries (see ``tables.py`` for the chain of classes).

Invariant: the search only ever consults compiled entries (the forced entry, R5's next
requiring entry, the candidates of either, and masks restricted to those); later entries
only add higher bits, so what it found stays true. Bookkeeping that later entries change
is kept up to date (R4 of the uncertain entries, R6's useless blind entries) or dropped
(R5's reachability masks).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Hashable
from typing import Any, Final

from checkers.linear.bits import mask
from checkers.linear.eager import Eager
from checkers.linear.model import ANY, NO_HINT, NOTHING, Call, Hint
from checkers.linear.prepare import INF, Problem

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


class Lazy(Eager):
    """Compiling the certain entries in chunks, in return order, as the search reaches
    them (an invalid history is usually refuted before its end)."""

    __slots__ = ()

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
