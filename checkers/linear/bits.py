"""Bitsets as Python ints: building masks, the candidates of each forced entry, paths.

Sets of entries are ints with bit ``k`` for entry ``k``: union, difference and "lowest
member" are a few machine operations per 30 bits, done in C. An int with a high bit set
costs memory in proportion to that bit, so nothing here keeps one such int per entry for
big partitions.
"""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.formats.budget import Allowance

# Big-partition mode, tunable (tests force it on small partitions): partitions with more
# than LEAN entries keep frames and memo keys without the entries below the forced one;
# above TABLE_BITS bits (8 MiB) of masks, candidate masks are computed, not tabled.
LEAN = 4096
TABLE_BITS = 64 << 20
SPEND_BYTES = 1 << 20
"""Bytes of masks built between two accounts of them (and polls of the budget)."""
# Partitions of at most LAZY (and LEAN) entries are compiled lazily,
# as the search reaches their entries; tests set it to -1 to compile everything first.
LAZY = 4096


def mask(positions: list[int]) -> int:
    """The int whose set bits are ``positions``, built in time linear in the highest:
    a few by shifting, more as the binary digits of a bytearray, which ``int`` parses in
    linear time (power-of-two bases are exempt from the limit on digits)."""
    if len(positions) < 16:
        m = 0
        for k in positions:
            m |= 1 << k
        return m
    top = max(positions)
    digits = bytearray(b"0") * (top + 1)
    for k in positions:
        digits[top - k] = 49  # "1"
    return int(digits, 2)


def unlink(path: Any) -> list[int]:
    """A linked path ``(last, (previous, ... None))`` as the list of its entries, first
    entry first. A node is an entry (an int), or ``(base, bits)``: the entries ``base + k``
    for the set bits ``k`` of ``bits``, lowest first (kept small: a bitset from entry 0
    would cost memory in proportion to its depth)."""
    nodes: list[Any] = []
    while path is not None:
        nodes.append(path[0])
        path = path[1]
    out: list[int] = []
    for k in range(len(nodes) - 1, -1, -1):  # (mypyc cannot reverse a list of Any)
        node = nodes[k]
        if node.__class__ is int:
            out.append(node)
            continue
        base, m = node
        while m:
            low = m & -m
            m ^= low
            out.append(base + low.bit_length() - 1)
    return out


def callable_table(starts: list[int], ends: list[int], n_certain: int) -> list[int]:
    """For each certain entry ``x``: the entries invoked before ``x`` returned."""
    n = len(starts)
    by_start = sorted(range(n), key=starts.__getitem__)
    table: list[int] = []
    j = 0
    mask = 0
    for x in range(n_certain):
        end = ends[x]
        while j < n and starts[by_start[j]] < end:
            mask |= 1 << by_start[j]
            j += 1
        table.append(mask)
    return table


class CandidateMasks:
    """The same masks computed on demand, in memory linear in the partition's size
    times its concurrency.

    Entries ``0..x`` (certain, returned no later than ``x``) were all invoked before
    ``x`` returned; of the later certain ones, only those still open then (a few, at
    the history's concurrency) were, kept as ``spill[x]`` shifted down by ``x + 1``;
    uncertain entries are in order of invocation, so theirs is a prefix of
    ``ucount[x]`` entries from ``n_certain`` on. The open ones are kept as one mask
    from ``x`` on, each ``spill[x]`` that mask as it stands after ``x`` (time linear
    in the partition times its concurrency): at a high concurrency (tens of thousands
    of operations open together) the masks add up, so they are accounted against
    ``allowance`` (the check's memory) as they are kept.
    """

    __slots__ = ("n_certain", "spill", "ucount")

    def __init__(
        self,
        starts: list[int],
        ends: list[int],
        n_certain: int,
        allowance: Allowance | None = None,
    ) -> None:
        self.n_certain = n_certain
        by_start = sorted(range(n_certain), key=starts.__getitem__)
        ustarts = starts[n_certain:]
        self.spill: list[int] = []
        self.ucount: list[int] = []
        opened = 0  # the entries invoked and not returned, from x on: bit k - x for k
        j = 0
        unspent = 0
        for x in range(n_certain):
            end = ends[x]
            while j < n_certain and starts[by_start[j]] < end:
                opened |= 1 << (by_start[j] - x)
                j += 1
            opened >>= 1  # x returned; from x + 1 on
            self.spill.append(opened)
            self.ucount.append(bisect_left(ustarts, end))
            unspent += (opened.bit_length() >> 3) + 32
            if allowance is not None and (unspent > SPEND_BYTES or not x & 4095):
                allowance.spend(unspent)
                unspent = 0

    def __getitem__(self, x: int) -> int:
        return (
            ((2 << x) - 1)
            | (self.spill[x] << (x + 1))
            | (((1 << self.ucount[x]) - 1) << self.n_certain)
        )
