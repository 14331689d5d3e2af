"""What the search's hot loop reads of one partition, and the model stepped once per
(class, state).

The search over a partition is layered as a chain of classes, one job per module (mypyc,
which compiles them, takes single inheritance only): ``Tables`` (here: the fields, the
interned states, stepping the model) <- ``Eager`` (``eager.py``: compiling every entry up
front) <- ``Lazy`` (``lazy.py``: compiling the entries as the search reaches them) <-
``Prune`` (``prune.py``: the tests of R5 and R6 past their masks) <- ``Search``
(``search.py``: the loop). The terms and the proofs are in ``docs/linearizability.md``.

Invariants the code relies on: entries are numbered certain ones first, in order of
return, then uncertain ones in order of invocation, so a set of entries is a bitset
(``checkers.linear.bits``) and the forced entry is the lowest zero bit; states are
interned ints (``states[sid]``); entries with equal input and output form a class (named
by its first entry, or numbered in lazy mode) sharing one transition table
``trans[k][sid]`` (-1: illegal), filled by ``_step`` when first consulted, except for
blind classes, whose hint gives the state they leave.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any

from checkers.linear.bits import CandidateMasks
from checkers.linear.model import Call, Hint, Model
from checkers.linear.prepare import Entry, Problem
from core.formats.budget import Budget


class Tables:
    """The per-entry ints and masks of one partition (set by ``Eager._compile`` or
    ``Lazy._prepare``) and the states met so far."""

    # Slots: a search is made per partition and per check, and most partitions are
    # small, so its set-up cost counts.
    __slots__ = (
        "_best_x",
        "_blind_to",
        "_by_start",
        "_class_of",
        "_compiled",
        "_fast_ro",
        "_hint_of",
        "_invoked",
        "_invoked_mask",
        "_path_sids",
        "_paths",
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
        "meter",
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
    # Lazy mode's (``Lazy._prepare``); ``_ready`` and ``_compiled`` in both modes.
    _hint_of: Callable[[Call], Hint] | None
    _r1: bool
    _r3: bool
    _r4: bool
    _r5: bool
    _fast_ro: bool
    _class_of: dict[tuple[Hashable, Hashable], list[Any]]
    _by_start: list[int]
    _sorted_starts: list[int]
    _invoked: int
    _invoked_mask: int
    _ready: int
    _compiled: int
    # The search's (``Search.__init__``).
    reductions: frozenset[str]
    steps: int
    memo: dict[tuple[int, ...], list[int]]
    configs: int
    stack: list[list[Any]]
    lazy: bool
    observe_mask: int
    _paths: list[tuple[Any, int, int]]
    """The deepest configurations reached (at most ``MAX_PATHS``): path, state, entries."""
    _path_sids: list[int]
    _best_x: int

    def __init__(self, problem: Problem, model: Model, meter: Budget | None = None) -> None:
        self.problem = problem
        self.model = model
        self.meter = meter
        self.model_steps = 0
        self.states: list[Hashable] = [problem.init]
        self.sid_of: dict[Hashable, int] = {problem.init: 0}
        self.init_sid = 0
        self._reachable: Callable[[Any, Any], bool] | None = getattr(model, "reachable", None)
        self._reach: dict[tuple[int, int], bool] = {}
        self._reach_mask: dict[int, int] = {}
        self.unc_mask = 0
        self.hinted: set[int] = set()
        self.useful: dict[int, list[int]] = {}
        self._blind_to: dict[int, int] = {}  # blind class: the state it leaves

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
