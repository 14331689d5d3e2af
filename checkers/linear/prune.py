"""The tests of R5 (the next required state cannot be reached) and R6 (nothing can
usefully follow an uncertain entry) past the masks the hot loop tries first, and the
entry to blame when the search fails (see ``tables.py`` for the chain of classes)."""

from __future__ import annotations

from checkers.linear.lazy import Lazy


class Prune(Lazy):
    """R5's reachability and R6's usefulness, each decided once and remembered."""

    __slots__ = ()

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

    def _reaches(self, g: int, lin: int, sid: int, need: int) -> bool:
        """R5's test for entry ``g``, which requires the state ``need`` (not ``sid``):
        whether some other unlinearized entry invoked before ``g`` returned produces it,
        or may lead to it (an ``ANY`` producer, ``need`` not proved unreachable)."""
        others = (self.callable[g] & ~lin) ^ (1 << g)
        if others & self.producers.get(need, 0):
            return True
        if not others & self.any_mask:
            return False
        return bool(self._reach.get((sid, need))) or not self._unreachable(sid, need, others)

    def _culprit(self, x: int, lin: int, sid: int) -> int:
        """The entry to blame in the deepest configuration (its entries ``lin``, its
        state ``sid``): the forced one ``x``, unless R5 cut the configuration because the
        next entry requiring a state could not get it; then that entry."""
        rem = self.req_mask & ~lin
        if not rem:
            return x
        g = (rem & -rem).bit_length() - 1
        need = self.need_sid[g]
        if need == sid or self._reaches(g, lin, sid, need):
            return x
        return g
