"""The model protocol: what the linearizability checker needs to know about an object.

Porcupine's shape: a model has an initial state and a pure ``step(state, input, output)``
returning ``(legal, new_state)``. States, inputs and outputs are hashable values; the
checker memoizes on states, so two equal states must behave the same.

Ours adds one method, ``call``: the model reads an invocation and its completion and says
what they mean for it, because what ``fail`` or ``info`` means depends on the object
(Knossos' CAS register: a ``fail`` did not happen; porcupine's etcd logs: a failed cas
happened without effect). The answer is a ``Call``: input, output, and whether the
operation certainly took effect (``certain``). An uncertain call may take effect at any
point after its invocation, or never; its output is ``UNKNOWN``. ``call`` is also where a
model says which values it holds: a value of another type (a register read returning a
map), or a write completed with another value than it wrote, is a ``ModelError`` naming
the op (``checkers.linear.values``), never a verdict.

Optional abilities are separate small protocols:

- ``Partitioned``: split a history into independent sub-histories (P-compositionality:
  a history is linearizable iff each part is, e.g. one part per key);
- ``Hinted``: per-call facts the search uses to prune (each must be conservative);
- ``Reachable``: whether calls of unknown effect could turn one state into another;
- ``Described``: words for reports.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final, NamedTuple, Protocol, runtime_checkable

from checkers.linear.partition import by_key as by_key  # models partition with it
from core.history import History
from core.ops import Op


class ModelError(ValueError):
    """A history the model cannot read (an op it does not know, a value of a type it does
    not hold), or an unknown model name. The message says which op and what to do; ``op``
    is that op (None for a model name), so that a reader can name its line."""

    def __init__(self, message: str, op: Op | None = None) -> None:
        super().__init__(message)
        self.op = op


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        return self._name  # pickled as the module-level singleton


UNKNOWN: Final = _Sentinel("UNKNOWN")
"""The output of a call whose outcome is unknown."""
NOTHING: Final = _Sentinel("NOTHING")
"""In a Hint: no single required state / the call never changes the state."""
ANY: Final = _Sentinel("ANY")
"""In a Hint: the call may leave any state (the checker cannot tell)."""


class Call(NamedTuple):
    """What a model makes of one operation: hashable ``input`` and ``output`` for ``step``,
    and whether it certainly took effect (``certain``); uncertain calls may be left out."""

    input: Hashable
    output: Hashable
    certain: bool


class Hint(NamedTuple):
    """Facts about one call that let the search prune. Each must hold for every state:

    - ``readonly``: whenever the call is legal it leaves the state unchanged;
    - ``requires``: the one state in which it is legal: legal there and nowhere else
      (``NOTHING``: no such state);
    - ``produces``: the only state it can leave behind when it changes the state
      (``NOTHING``: it never changes it; ``ANY``: unknown);
    - ``blind``: legal in every state, and leaves the same state whatever the state
      before (a write, a put): it observes nothing.
    """

    readonly: bool = False
    requires: Any = NOTHING
    produces: Any = ANY
    blind: bool = False


NO_HINT: Final = Hint()


@runtime_checkable
class Model(Protocol):
    """A sequential specification: initial state, call interpretation, pure step."""

    @property
    def name(self) -> str:
        """The name reports use (``cas-register``, ``etcd``...)."""
        ...

    def init(self) -> Hashable:
        """The state before any operation."""
        ...

    def call(self, invoke: Op, completion: Op | None) -> Call | None:
        """What an invocation and its completion (None: it never returned) mean for the
        model; None when the operation certainly did not happen (it is left out).
        Raises ModelError for an operation it does not know."""
        ...

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Hashable]:
        """Whether ``input`` returning ``output`` is legal in ``state``, and the state
        after it. Must be pure."""
        ...


@runtime_checkable
class Partitioned(Protocol):
    """A model whose histories split into independent parts."""

    def partition(self, history: History) -> list[tuple[Any, History]]:
        """(label, sub-history) pairs; the history is linearizable iff every part is."""
        ...


@runtime_checkable
class Hinted(Protocol):
    """A model that tells the search which calls are read-only, what they need and make."""

    def hint(self, call: Call) -> Hint: ...


@runtime_checkable
class Reachable(Protocol):
    """A model that can rule out reaching one state from another by the calls whose hint
    says ``produces=ANY`` (kv appends: only by extending the string)."""

    def reachable(self, state: Any, target: Any) -> bool:
        """False only if no sequence of ``ANY``-producing calls turns ``state`` into
        ``target`` (True when unsure; must be True when equal)."""
        ...


@runtime_checkable
class Sourced(Protocol):
    """A model that can say from which state a call of unknown outcome produces the state
    its hint names, when it produces it at all (a compare-and-set: its expected value).
    The unique-values fast path (``checkers.linear.unique``) then places such a call."""

    def changes_from(self, call: Call) -> Any:
        """The one state from which ``call`` produces ``hint(call).produces``; ``NOTHING``
        when there is no single such state."""
        ...


@runtime_checkable
class Described(Protocol):
    """A model that can put calls and states into words for reports."""

    def describe_call(self, call: Call) -> str:
        """Like ``read 2``, ``write 4``, ``cas 3->0``: a verb phrase."""
        ...

    def describe_state(self, state: Any) -> str: ...


def outcome(completion: Op | None) -> str:
    """``ok``, ``fail`` or ``info`` (an operation that never returned is ``info``)."""
    return "info" if completion is None else completion.type


def result_value(invoke: Op, completion: Op | None) -> Any:
    """The completion's value when it has one, else the invocation's."""
    if completion is not None and completion.value is not None:
        return completion.value
    return invoke.value


def freeze(value: Any) -> Hashable:
    """A hashable equal of a value read from JSON or EDN (lists become tuples)."""
    if value is None or type(value) in _ATOMS:
        return value
    if isinstance(value, list):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted(((freeze(k), freeze(v)) for k, v in value.items()), key=repr))
    if isinstance(value, set):
        return frozenset(freeze(v) for v in value)
    return value


_ATOMS: Final = frozenset({int, str, float, bool})


def unknown_op(model: str, inv: Op, known: str) -> ModelError:
    """The error for an operation a model does not know."""
    return ModelError(
        f"op {inv.index} (process {inv.process}) is {inv.f!r}, which the {model} model does "
        f"not know (it knows {known}); choose the model that matches the workload",
        inv,
    )
