"""Several registers in one value, read and written atomically (Knossos' multi-register).

Ops: ``read`` and ``write`` whose value is a map ``{key: value}`` (or a list of
``[key value]`` pairs), or ``txn`` whose value is a list of ``[f key value]`` micro-ops
(``f`` read or write) applied in order. Registers start nil; a read of a key must return
its current value. A ``fail`` did not happen; an ``info`` may take effect at any time
after invocation, or never (its reads constrain nothing). Not partitioned: an op spans keys.
Keys and values are plain (nil, booleans, numbers, strings); anything else, a micro-op
other than read or write, or a write completed with another value than it was invoked
with, is a ``ModelError``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

from checkers.linear.model import (
    ANY,
    NOTHING,
    UNKNOWN,
    Call,
    Hint,
    outcome,
    result_value,
    unknown_op,
)
from checkers.linear.values import SCALARS, written
from core.ops import Op

Micro = tuple[str, Hashable, Hashable]


class MultiRegisterModel:
    """Registers keyed by name; the state is a sorted tuple of (key, value) pairs."""

    name: str = "multi-register"

    def init(self) -> Hashable:
        return ()

    def call(self, invoke: Op, completion: Op | None) -> Call | None:
        f = invoke.f
        if f not in ("read", "write", "txn"):
            raise unknown_op(self.name, invoke, "read, write and txn")
        kind = outcome(completion)
        if kind == "fail":
            return None
        if f == "write":
            written(self.name, invoke, completion)  # ModelError if the completion says another
        source = result_value(invoke, completion) if kind == "ok" else invoke.value
        try:
            micro = _micro_ops(f, source)
        except (TypeError, ValueError, IndexError, KeyError):
            known = "maps {key: value} or [[f key value] ...]"
            raise unknown_op(self.name, invoke, known) from None
        if kind == "info":
            return Call(tuple(m for m in micro if m[0] == "write"), UNKNOWN, False)
        return Call(micro, None, True)

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Hashable]:
        regs = dict(state)
        changed = False
        for f, k, v in input:
            if f == "read":
                if regs.get(k) != v:
                    return False, state
            else:
                regs[k] = v
                changed = True
        if not changed:
            return True, state
        return True, tuple(sorted(((k, v) for k, v in regs.items() if v is not None), key=repr))

    def hint(self, call: Call) -> Hint:
        if all(m[0] == "read" for m in call.input):  # type: ignore[attr-defined]
            return Hint(True, NOTHING, NOTHING)
        return Hint(False, NOTHING, ANY)

    def describe_call(self, call: Call) -> str:
        return " ".join(f"{f} {k}={v}" for f, k, v in call.input)  # type: ignore[attr-defined]

    def describe_state(self, state: Any) -> str:
        return "{" + ", ".join(f"{k}: {v}" for k, v in state) + "}"


def _micro_ops(f: str, value: Any) -> tuple[Micro, ...]:
    """The micro-ops of an op's value; ValueError (or TypeError, IndexError) for a value
    that is not a map, a list of pairs or of ``[f key value]`` micro-ops of plain values."""
    if f == "txn":
        micro = tuple((m[0], m[1], m[2]) for m in value)
    else:
        items = value.items() if isinstance(value, dict) else value
        micro = tuple((f, k, v) for k, v in items)
    for g, k, v in micro:
        if g not in ("read", "write") or type(k) not in SCALARS or type(v) not in SCALARS:
            raise ValueError("not a micro-op of plain values")
    return micro


MULTI_REGISTER = MultiRegisterModel()
