"""Eager compilation: the tables of a partition of more than ``bits.LAZY`` operations,
built at once, in time linear in its size (see ``tables.py`` for the chain of classes).

Its masks are ints as long as the highest entry they hold: where many states are each
produced (or read) by entries spread over the partition, or many operations of a class
overlap, they add up to much more than the partition (quadratic in it). So each mask
is accounted before it is built against the check's budget (``Tables.meter``), which
the loops poll: out of it, OutOfBudget, and the check is unknown."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Hashable
from itertools import compress
from operator import itemgetter, ne
from typing import Any, Final

from checkers.linear import bits
from checkers.linear.bits import CandidateMasks, callable_table, mask
from checkers.linear.model import ANY, NO_HINT, NOTHING, Call, Hint
from checkers.linear.prepare import Problem
from checkers.linear.tables import Tables
from core.formats.budget import Allowance

_INPUT_OUTPUT: Final = itemgetter(0, 1)
COMPILING: Final = "compiling the search"
POLL_EVERY: Final = 4096
"""Entries (or classes) between two polls of the budget in the loops of compiling."""
MASK_BYTES: Final = 64
"""What an int costs beyond its digits (accounted with them)."""


class _Unions:
    """Masks of unions of classes (named by their first entry), each class given by its
    first position and, when it has several, its positions. In a small partition, each
    class's mask is built once and masks are unions of them; in a big one (more than
    ``bits.LEAN`` entries, where a mask per class would cost quadratic time), each
    union is built once from its positions, in time linear in the partition."""

    __slots__ = ("allowance", "certain", "first", "masks", "members", "n_certain", "small")

    def __init__(
        self,
        first: dict[int, int],
        members: dict[int, list[int]],
        n: int,
        n_certain: int,
        allowance: Allowance | None,
    ) -> None:
        self.first = first
        self.members = members
        self.n_certain = n_certain
        self.certain = (1 << n_certain) - 1
        self.small = n <= bits.LEAN
        self.masks: dict[int, int] = {}
        self.allowance = allowance

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
        if self.allowance is not None and positions:
            self.allowance.spend(max(positions) // 8 + MASK_BYTES)
        return mask(positions)


class Eager(Tables):
    """Compiling every entry of a partition before the search starts."""

    __slots__ = ()

    def _compile(
        self, problem: Problem, hint_of: Callable[[Call], Hint] | None, drop_ro: bool
    ) -> None:
        """Per-entry ints and masks for the hot loop. Entries with the same input and
        output form a class, named by the index of its first entry: one hint, one
        transition table. Per-entry work is done by C-level passes (``map``, masks as
        binary numerals); Python loops run per class, and (R4) per entry whose class
        has an earlier member. Masks are built in time linear in their highest bit (a
        mask per class or per entry would cost quadratic memory on big partitions)."""
        allowance = None if self.meter is None else Allowance(self.meter, COMPILING)
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
            if allowance is not None and not k % POLL_EVERY:
                allowance.spend(0)
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
                if allowance is not None:
                    allowance.spend((near[-1] - z0) // 8 + MASK_BYTES)
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
        for j, (c, h) in enumerate(class_hint.items()):
            if allowance is not None and not j % POLL_EVERY:
                allowance.spend(0)
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
        union = _Unions(first_at, members, n, n_certain, allowance)
        self.callable = (
            callable_table(starts, ends, n_certain)
            if n_certain * n < bits.TABLE_BITS
            else CandidateMasks(starts, ends, n_certain, allowance)
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
