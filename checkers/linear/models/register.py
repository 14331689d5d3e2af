"""Single registers with read, write and compare-and-set, in three dialects.

- ``register``: initial nil; a read must return the current value (nil included); a
  ``fail`` did not happen.
- ``cas-register``: Knossos' model, initial 0; a ``fail`` did not happen (it is dropped);
  a read of nil constrains nothing.
- ``etcd``: porcupine's etcd logs, initial nil; a failed cas happened and changed nothing
  (the compare did not match); a failed read (``:timed-out``) constrains nothing.

In all three, ``info`` write/cas may take effect at any time after invocation, or never.
Histories with keys are checked per key.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any

from checkers.linear.model import (
    NOTHING,
    UNKNOWN,
    Call,
    Hint,
    by_key,
    freeze,
    unknown_op,
)
from harness.history import History
from harness.ops import Op

READ = ("read",)


@dataclass(frozen=True)
class RegisterModel:
    """A read/write/cas register; the flags choose the dialect (see the module doc)."""

    name: str
    initial: Any = None
    fail_cas_happened: bool = False
    nil_read_any: bool = False

    def init(self) -> Hashable:
        return freeze(self.initial)

    def call(self, invoke: Op, completion: Op | None) -> Call | None:
        f = invoke.f
        kind = "info" if completion is None else completion.type
        if f == "read":
            if kind == "ok":
                value = completion.value  # type: ignore[union-attr]
                if value is None:
                    return None if self.nil_read_any else Call(READ, None, True)
                return Call(READ, value if type(value) is int else freeze(value), True)
            return None if kind == "fail" else Call(READ, UNKNOWN, False)
        if f == "write":
            if kind == "fail":
                return None
            value = invoke.value
            if value is None and completion is not None:
                value = completion.value
            return Call(("write", freeze(value)), None, kind == "ok")
        if f == "cas":
            raw = invoke.value
            if raw is None and completion is not None:
                raw = completion.value
            if not isinstance(raw, (list, tuple)) or len(raw) != 2:
                raise unknown_op(self.name, invoke, "a cas value [old new]")
            inp = ("cas", freeze(raw[0]), freeze(raw[1]))
            if kind == "ok":
                return Call(inp, True, True)
            if kind == "fail":
                return Call(inp, False, True) if self.fail_cas_happened else None
            return Call(inp, UNKNOWN, False)
        raise unknown_op(self.name, invoke, "read, write and cas")

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Hashable]:
        kind = input[0]
        if kind == "read":
            return (output is UNKNOWN or state == output), state
        if kind == "write":
            return True, input[1]
        if output is True:
            return state == input[1], input[2]
        if output is False:
            return state != input[1], state
        return True, (input[2] if state == input[1] else state)

    def partition(self, history: History) -> list[tuple[Any, History]]:
        return by_key(history)

    def hint(self, call: Call) -> Hint:
        inp, out = call.input, call.output
        kind = inp[0]  # type: ignore[index]
        if kind == "read":
            return Hint(True, NOTHING if out is UNKNOWN else out, NOTHING)
        if kind == "write":
            return Hint(False, NOTHING, inp[1], blind=True)  # type: ignore[index]
        if out is True:
            return Hint(False, inp[1], inp[2])  # type: ignore[index]
        if out is False:
            return Hint(True, NOTHING, NOTHING)
        return Hint(False, NOTHING, inp[2])  # type: ignore[index]

    def describe_call(self, call: Call) -> str:
        inp, out = call.input, call.output
        kind = inp[0]  # type: ignore[index]
        if kind == "read":
            return "read (unknown result)" if out is UNKNOWN else f"read {_v(out)}"
        if kind == "write":
            return f"write {_v(inp[1])}"  # type: ignore[index]
        text = f"cas {_v(inp[1])}->{_v(inp[2])}"  # type: ignore[index]
        if out is False:
            return text + " (failed: no match)"
        return text

    def describe_state(self, state: Any) -> str:
        return _v(state)


def _v(value: Any) -> str:
    return "nil" if value is None else str(value)


REGISTER = RegisterModel("register")
CAS_REGISTER = RegisterModel("cas-register", initial=0, nil_read_any=True)
ETCD = RegisterModel("etcd", fail_cas_happened=True)
