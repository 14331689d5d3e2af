"""The values a model's operations carry, checked where the model reads them.

A model holds values of some types (a register: nil, booleans, numbers, strings; a kv
store: strings) and reads a write's value from its invocation (Knossos invokes some
with nil: then from its completion). A value of another type, or a completion that says
it wrote another value than its invocation, is no history the model can check: a
``ModelError`` naming the op (``harness check`` turns it into the op's line), never a
verdict. ``checkers.linear.registers`` gives such ops up to the general path, whose
models raise it.
"""

from __future__ import annotations

from typing import Any, Final

from checkers.linear.model import ModelError, freeze
from core.ops import Op

__all__ = ["SCALARS", "changed_value", "shown", "written", "wrong_value"]

SCALARS: Final = frozenset({type(None), bool, int, float, str})
"""The types of a plain value: what a register holds."""
_KINDS: Final[dict[type, str]] = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    dict: "a map",
    list: "a list",
    tuple: "a list",
    set: "a set",
    frozenset: "a set",
}


def written(model: str, invoke: Op, completion: Op | None) -> Any:
    """What a write (put, append, cas) wrote: its invocation's value, else its
    completion's; ModelError when the completion says another value (lists and tuples
    alike). ``registers._written`` reads it the same way."""
    value = invoke.value
    if completion is None:
        return value
    done = completion.value
    if value is None:
        return done
    if done is not None and done is not value and done != value and freeze(done) != freeze(value):
        raise changed_value(model, invoke, completion)
    return value


def wrong_value(model: str, op: Op, what: str, value: Any, holds: str) -> ModelError:
    """The error for an op whose value (``what`` it is: "a read returned") is of a type
    the model does not hold (``holds``: "nil, booleans, numbers and strings")."""
    kind = _KINDS.get(type(value), f"a {type(value).__name__}")
    return ModelError(
        f"op {op.index} (process {op.process}): {what} {kind} {shown(value)}, which the "
        f"{model} model does not hold (it holds {holds}); choose the model that matches "
        "the history",
        op,
    )


def changed_value(model: str, inv: Op, completion: Op) -> ModelError:
    """The error for a write (put, append...) completed with another value than the one
    its invocation wrote."""
    return ModelError(
        f"op {completion.index} (process {completion.process}): the {completion.type} of "
        f"{inv.f} {shown(inv.value)} says it wrote {shown(completion.value)}, which the "
        f"{model} model cannot read; a completion repeats the value its invocation wrote",
        completion,
    )


def shown(value: Any) -> str:
    """A value for a message, cut short (a value may hold 100,000 elements)."""
    import reprlib  # only a message needs it

    brief = reprlib.Repr()
    brief.maxlevel, brief.maxstring, brief.maxother = 3, 30, 30
    return brief.repr(value)
