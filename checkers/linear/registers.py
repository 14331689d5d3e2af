"""The register models' fast path: every partition of a ``register``, ``cas-register`` or
``etcd`` history decided by a compact search over integers, in one pass over the ops.

Most histories users check are many small keys of plain values. For them the general
path's objects (a problem, a search, its tables and a generator per partition) cost more
than the search itself. Here each op is read once into a few integers per partition, and
each partition is searched by Wing & Gong's algorithm with Lowe's memoization (porcupine's
shape: a linked list of call and return events, linearized calls lifted out of it), which
is complete: it proves a partition valid or invalid. The model's reading of an op is the
dialect's (``checkers.linear.models.register``): a dropped op here is one its ``call``
drops or the search's R1 drops (an uncertain read).

It gives up (None: the general path decides the whole history, exactly as before) on
anything it does not read the way the general path does: values other than integers,
strings, booleans and nil, a write or cas completed with another value than it was
invoked with (the model refuses it), an op the model does not know, a malformed history, more than
a bounded number of steps in one partition (``STEPS_PER_ENTRY``: the general search's
reductions are for hard partitions), or the deadline.

Memory is kept within the check's budget (``core.formats.budget``): the C module accounts
every byte it allocates against what the budget had left when it started, and this one
accounts its memo the same way and polls the budget between steps; past it, OutOfBudget
(the check is unknown, with the reason). A configuration's set of linearized entries is
memoized lean: the certain entries apart from the uncertain ones (entries that constrain
nothing have no place), each set without the entries below its lowest unlinearized one
(all linearized), so that a partition searched mostly in order (the usual case) costs a
few words per configuration rather than a bit per entry of the partition.
"""

from __future__ import annotations

import importlib
import time
from typing import Any, Final, NamedTuple

from core.formats.budget import Allowance, Budget
from core.ops import NEMESIS, Op

READ: Final = 0
"""Legal iff the state is ``a``."""
WRITE: Final = 1
"""Legal; the state becomes ``a``."""
CAS: Final = 2
"""Legal iff the state is ``a``; it becomes ``b``."""
CAS_FAILED: Final = 3
"""Legal iff the state is not ``a``; unchanged (etcd's failed compare-and-set)."""
CAS_ANY: Final = 4
"""Legal; the state becomes ``b`` where it was ``a`` (a cas of unknown outcome)."""
DROPPED: Final = -1
"""An op that constrains nothing: not searched."""
STEPS_PER_ENTRY: Final = 8
"""The steps a partition may take per entry (plus ``STEPS_BASE``) before this path gives
it up to the general search."""
STEPS_BASE: Final = 4096
MAX_MEMO_BYTES: Final = 1 << 30
"""The C module's memo of one partition may take this much (beyond: it gives up, and the
general search, which would hold the same configurations in more memory, takes it);
within the memory the check's budget has left, whichever is less (beyond that: out of
memory, unknown)."""
RECORD_BYTES: Final = 48
"""What a memoized configuration costs the C module beyond its lean set's words (its
record's head and its share of the table); this module accounts its own the same way
(its own cost more: the budget's polls see the whole process)."""
DOING: Final = "checking (the register search)"
SMALL_BYTES: Final = 16 << 20
"""A history whose search cannot take this much (``most_bytes``) is searched without
asking the budget what is left (a look at the process's size costs more than checking a
history of a few hundred ops)."""
CHECK_EVERY: Final = 4096
"""Steps (or ops read) between two looks at the deadline."""


class Decided(NamedTuple):
    """What this path found: ``valid`` (False at the first invalid partition, the
    ``checked``-th, labelled ``invalid_label``), the partitions, the entries searched in
    all of them, the search's steps and its memoized configurations."""

    valid: bool
    partitions: int
    checked: int
    ops: int
    steps: int
    configs: int
    invalid_label: Any


class _Part:
    """One partition: per entry its code (``_code``: kind, certainty, operands; DROPPED
    when it constrains nothing), and the events in time order (``2 e`` the call of entry
    ``e``, ``2 e + 1`` its return)."""

    def __init__(self, label: Any) -> None:
        self.label = label
        self.codes: list[int] = []
        self.events: list[int] = []


class _Open:
    """An invocation not yet completed: its partition, entry and op."""

    def __init__(self, part: _Part, e: int, inv: Op) -> None:
        self.part = part
        self.e = e
        self.inv = inv


CERTAIN: Final = 8
"""The bit of an entry's code saying that it certainly took effect."""
MAX_VALUES: Final = 1 << 26
"""Distinct values this path can number (beyond: the general path)."""
SMALL: Final = 1 << 24
"""Integers from ``-SMALL`` to ``SMALL - 1`` are numbered without a lookup."""
_CANNOT: Final = -2
MASK: Final = (1 << 26) - 1


class _Values:
    """Values as small integers: equal values (in Python's sense, as the model compares
    states) share one. ``top`` is the largest number given."""

    def __init__(self) -> None:
        self.ids: dict[Any, int] = {}
        self.top = 0

    def id(self, v: Any) -> int:
        """The value's integer, or -1 when it is not a plain scalar (or one too many).
        nil is 0; a small non-negative integer ``n`` is ``n + 1``, without a lookup (a
        boolean is the integer it equals); other values are numbered from ``SMALL`` up
        in order of appearance."""
        t = type(v)
        if t is int or t is bool:
            n: int = v
            if 0 <= n < SMALL - 1:
                n += 1
                if n > self.top:
                    self.top = n
                return n
        elif v is None:
            return 0
        elif t is not str:
            return -1
        got = self.ids.get(v)
        if got is None:
            got = SMALL + len(self.ids)
            if got >= MAX_VALUES:
                return -1
            self.ids[v] = self.top = got
        return got


def decide(
    history: tuple[Op, ...],
    initial: Any,
    fail_cas_happened: bool,
    nil_read_any: bool,
    deadline: float | None,
    budget: Budget | None = None,
) -> Decided | None:
    """Every partition's verdict under the register dialect given by ``initial``,
    ``fail_cas_happened`` and ``nil_read_any`` (``RegisterModel``'s fields), or None where
    this path gives up (see the module's docstring). By the C module where it is built
    (the same reading and search), else here. OutOfBudget past ``budget``'s memory."""
    c = native()
    if c is None:
        return decide_here(history, initial, fail_cas_happened, nil_read_any, deadline, budget)
    return decide_in_c(c, history, initial, fail_cas_happened, nil_read_any, deadline, budget)


def decide_in_c(
    c: Any,
    history: tuple[Op, ...],
    initial: Any,
    fail_cas_happened: bool,
    nil_read_any: bool,
    deadline: float | None,
    budget: Budget | None = None,
) -> Decided | None:
    """``decide`` by the C module ``c`` (``native()``), with this module's limits."""
    left = -1.0 if deadline is None else max(0.0, deadline - time.perf_counter())
    memory = None if budget is None or small(history) else budget.memory_left()
    got = c.decide(
        history,
        Op,
        initial,
        fail_cas_happened,
        nil_read_any,
        left,
        STEPS_BASE,
        STEPS_PER_ENTRY,
        CHECK_EVERY,
        MAX_MEMO_BYTES,
        -1 if memory is None else memory,
    )
    if type(got) is int:
        assert budget is not None and memory is not None
        raise budget.out_of_memory(DOING, got, memory)
    return None if got is None else Decided(*got)


def native() -> Any:
    """The C module (``_registers.c``) when it is built and loaded, else None."""
    global _native
    if _native is False:
        try:
            _native = importlib.import_module("checkers.linear._registers")
        except ImportError:
            _native = None
    return _native


_native: Any = False


def decide_here(
    history: tuple[Op, ...],
    initial: Any,
    fail_cas_happened: bool,
    nil_read_any: bool,
    deadline: float | None,
    budget: Budget | None = None,
) -> Decided | None:
    """``decide`` in Python: the reference the C module follows step for step."""
    values = _Values()
    init = values.id(initial)
    if init < 0:
        return None
    parts = _read(history, values, fail_cas_happened, nil_read_any, deadline, budget)
    if parts is None:
        return None
    memory = None if budget is None or small(history) else Allowance(budget, DOING)
    kept = [len(part.codes) - part.codes.count(DROPPED) for part in parts]
    steps = configs = 0
    # Smallest first, as the general path does: a small invalid partition is found at once.
    for checked, i in enumerate(sorted(range(len(parts)), key=kept.__getitem__), 1):
        part = parts[i]
        if deadline is not None and time.perf_counter() > deadline:
            return None
        max_steps = STEPS_BASE + STEPS_PER_ENTRY * kept[i]
        held = 0 if memory is None else memory.used
        got = _search(part, init, max_steps, deadline, memory)
        if got is None:
            return None
        if memory is not None:  # its memo is gone
            memory.free(memory.used - held)
        steps += got[1]
        configs += got[2]
        if not got[0]:
            return Decided(False, len(parts), checked, sum(kept), steps, configs, part.label)
    # A history without keys is one partition, even of nemesis ops alone.
    n = len(parts) or (1 if history else 0)
    return Decided(True, n, n, sum(kept), steps, configs, None)


def most_bytes(n: int) -> int:
    """An upper bound on what the search of a history of ``n`` ops may take: each step
    memoizes at most one configuration, of a head and at most a word per 32 entries (two
    lean sets), in a table grown by doubling (twice that, and four slots a record); its
    arrays take a few hundred bytes an entry."""
    record = RECORD_BYTES + 32 + 8 * (n // 32 + 2)
    return 2 * (STEPS_BASE + STEPS_PER_ENTRY * n) * record + 256 * n


def small(history: tuple[Op, ...]) -> bool:
    """Whether the search of ``history`` cannot take ``SMALL_BYTES`` (``most_bytes``)."""
    return most_bytes(len(history)) < SMALL_BYTES


def _read(
    history: tuple[Op, ...],
    values: _Values,
    fail_cas_happened: bool,
    nil_read_any: bool,
    deadline: float | None,
    budget: Budget | None,
) -> list[_Part] | None:
    """The partitions (in order of their first op), each entry read by the dialect; None
    where the general path must read the history, or past the deadline."""
    parts: dict[Any, _Part] = {}
    order: list[_Part] = []
    # The open invocation of each busy process; None for one whose op ended ``info``
    # (it must never invoke again).
    open_: dict[Any, _Open | None] = {}
    countdown = CHECK_EVERY
    for op in history:
        countdown -= 1
        if not countdown:
            countdown = CHECK_EVERY
            if deadline is not None and time.perf_counter() > deadline:
                return None
            if budget is not None:
                budget.poll(DOING, None)
        p = op.process
        if type(p) is str and p == NEMESIS:
            continue
        t = op.type
        if t == "invoke":
            if p in open_:
                return None
            key = op.key
            part = parts.get(key)
            if part is None:
                part = parts[key] = _Part(key)
                order.append(part)
            e = len(part.codes)
            part.codes.append(DROPPED)
            part.events.append(2 * e)
            open_[p] = _Open(part, e, op)
            continue
        got = open_.pop(p, None)
        if got is None:
            return None
        inv = got.inv
        k1 = inv.key
        k2 = op.key
        if k1 is not k2 and k1 != k2:
            return None
        if t == "info":
            open_[p] = None
        code = _code(inv, op, t, values, fail_cas_happened, nil_read_any)
        if code == _CANNOT:
            return None
        part = got.part
        e = got.e
        part.codes[e] = code
        if code >= 0 and code & CERTAIN:
            part.events.append(2 * e + 1)
    for got in open_.values():  # never completed: unknown outcomes
        if got is not None:
            code = _code(got.inv, None, "info", values, fail_cas_happened, nil_read_any)
            if code == _CANNOT:
                return None
            got.part.codes[got.e] = code
    for part in order:
        events = part.events
        codes = part.codes
        for e in range(len(codes)):
            code = codes[e]
            if code >= 0 and not code & CERTAIN:
                events.append(2 * e + 1)
    return order


def _code(
    inv: Op,
    comp: Op | None,
    t: str,
    values: _Values,
    fail_cas_happened: bool,
    nil_read_any: bool,
) -> int:
    """The code of an invocation and its completion (of type ``t``) read as
    ``RegisterModel.call`` does: ``kind | CERTAIN? | a << 4 | b << 30``; DROPPED for one
    that constrains nothing, ``_CANNOT`` where this path cannot read it."""
    f = inv.f
    if f == "read":
        if t != "ok" or comp is None:
            return DROPPED  # failed, or unknown: constrains nothing
        v = comp.value
        if v is None and nil_read_any:
            return DROPPED
        a = values.id(v)
        return _CANNOT if a < 0 else READ | CERTAIN | a << 4
    if f == "write":
        if t == "fail":
            return DROPPED
        v = _written(inv, comp)
        if v is _CHANGED:
            return _CANNOT
        a = values.id(v)
        if a < 0:
            return _CANNOT
        return WRITE | (CERTAIN if t == "ok" else 0) | a << 4
    if f == "cas":
        raw = _written(inv, comp)
        if type(raw) is not list or len(raw) != 2:
            return _CANNOT
        a = values.id(raw[0])
        b = values.id(raw[1])
        if a < 0 or b < 0:
            return _CANNOT
        ab = a << 4 | b << 30
        if t == "ok":
            return CAS | CERTAIN | ab
        if t == "fail":
            return CAS_FAILED | CERTAIN | ab if fail_cas_happened else DROPPED
        return CAS_ANY | ab
    return _CANNOT


_CHANGED: Final = object()


def _written(inv: Op, comp: Op | None) -> Any:
    """What a write or cas wrote: its invocation's value, else its completion's (Knossos
    invokes some with nil); ``_CHANGED`` when the completion says another value."""
    v = inv.value
    if comp is not None:
        done = comp.value
        if v is None:
            return done
        if done is not None and done is not v and done != v:
            return _CHANGED
    return v


def _search(
    part: _Part,
    init: int,
    max_steps: int,
    deadline: float | None,
    memory: Allowance | None,
) -> tuple[bool, int, int] | None:
    """Search one partition: its verdict, steps and memoized configurations; None when
    it gives up (too many steps, or the deadline)."""
    codes = part.codes
    n = len(codes)
    kinds = [DROPPED] * n
    a_of = [0] * n
    b_of = [0] * n
    certain = [False] * n
    remaining = 0
    for e in range(n):
        code = codes[e]
        if code >= 0:
            kinds[e] = code & 7
            a_of[e] = code >> 4 & MASK
            b_of[e] = code >> 30
            if code & CERTAIN:
                certain[e] = True
                remaining += 1
    if remaining == 0:
        return True, 0, 0
    # The bit of each entry in the sets of linearized entries: the certain ones from 0,
    # the uncertain ones in a set of their own (``pos`` then numbers them from 0 too).
    pos = [0] * n
    n_certain = n_uncertain = 0
    for e in range(n):
        if certain[e]:
            pos[e] = n_certain
            n_certain += 1
        elif kinds[e] != DROPPED:
            pos[e] = n_uncertain
            n_uncertain += 1
    # The doubly linked list of events (dropped entries left out), ``head`` its sentinel.
    size = 2 * n
    head = size
    nxt = [-1] * (size + 1)
    prv = [-1] * (size + 1)
    last = head
    for ev in part.events:
        if kinds[ev >> 1] != DROPPED:
            nxt[last] = ev
            prv[ev] = last
            last = ev
    lin_a = lin_b = 0  # the certain entries linearized, and the uncertain ones
    state = init
    # The configurations entered: per state, the sets of linearized entries, lean: of
    # each set, the entries above the lowest one not linearized, ``x``, as the int
    # ``lin >> x << 32 | x``.
    memo: dict[int, set[tuple[int, int]]] = {}
    configs = 0
    # The linearized entries in order (``~e`` for one linearized as forced, below) and
    # the state before each.
    stack_e: list[int] = []
    stack_s: list[int] = []
    steps = 0
    check_at = CHECK_EVERY
    node = nxt[head]
    while True:
        fails = False
        if node & 1 == 0:
            e = node >> 1
            k = kinds[e]
            a = a_of[e]
            steps += 1
            if steps >= check_at:
                if steps > max_steps:
                    return None
                check_at = steps + CHECK_EVERY
                if deadline is not None and time.perf_counter() > deadline:
                    return None
            readonly = False
            if k == READ:
                legal = readonly = state == a
                after = state
            elif k == WRITE:
                legal = True
                after = a
            elif k == CAS:
                legal = state == a
                after = b_of[e]
            elif k == CAS_FAILED:
                legal = readonly = state != a
                after = state
            else:
                legal = True
                after = b_of[e] if state == a else state
            if legal:
                a2 = lin_a
                b2 = lin_b
                if certain[e]:
                    a2 |= 1 << pos[e]
                else:
                    b2 |= 1 << pos[e]
                seen = memo.get(after)
                if seen is None:
                    seen = memo[after] = set()
                xa = (~a2 & (a2 + 1)).bit_length() - 1
                xb = (~b2 & (b2 + 1)).bit_length() - 1
                key = (a2 >> xa << 32 | xa, b2 >> xb << 32 | xb)
                if key not in seen:
                    seen.add(key)
                    if memory is not None:  # as the C module's record: a head and words
                        words = (a2.bit_length() - xa) // 64 + (b2.bit_length() - xb) // 64
                        memory.spend(RECORD_BYTES + 8 * (words + 2))
                    configs += 1
                    # A read-only entry legal here is linearized here without loss (R3
                    # in docs/linearizability.md): if that fails, so does this config.
                    stack_e.append(~e if readonly else e)
                    stack_s.append(state)
                    lin_a = a2
                    lin_b = b2
                    state = after
                    # Lift the call and the return out of the list.
                    r = node + 1
                    nc = nxt[node]
                    pc = prv[node]
                    nxt[pc] = nc
                    if nc >= 0:
                        prv[nc] = pc
                    nr = nxt[r]
                    pr = prv[r]
                    nxt[pr] = nr
                    if nr >= 0:
                        prv[nr] = pr
                    if certain[e]:
                        remaining -= 1
                        if remaining == 0:
                            return True, steps, configs
                    node = nxt[head]
                    continue
                fails = readonly  # that config failed, and so does this one
            if not fails:
                node = nxt[node]
                continue
        # A return (its call must have been linearized before it), or a failure: back
        # to the last config with another entry to try.
        while True:
            if not stack_e:
                return False, steps, configs
            e = stack_e.pop()
            state = stack_s.pop()
            forced = e < 0
            if forced:
                e = ~e
            if certain[e]:
                lin_a ^= 1 << pos[e]
                remaining += 1
            else:
                lin_b ^= 1 << pos[e]
            c = 2 * e
            r = c + 1
            nr = nxt[r]
            if nr >= 0:
                prv[nr] = r
            nxt[prv[r]] = r
            nc = nxt[c]
            if nc >= 0:
                prv[nc] = c
            nxt[prv[c]] = c
            if not forced:
                node = nxt[c]
                break
