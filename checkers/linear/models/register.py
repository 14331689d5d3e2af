"""Single registers with read, write and compare-and-set, in three dialects.

- ``register``: initial nil; a read must return the current value (nil included); a
  ``fail`` did not happen.
- ``cas-register``: Knossos' model, initial 0; a ``fail`` did not happen (it is dropped);
  a read of nil constrains nothing.
- ``etcd``: porcupine's etcd logs, initial nil; a failed cas happened and changed nothing
  (the compare did not match); a failed read (``:timed-out``) constrains nothing.

In all three, ``info`` write/cas may take effect at any time after invocation, or never.
Histories with keys are checked per key. A register holds plain values (nil, booleans,
numbers, strings): a read returning a map, a write or cas of a list, or a write or cas
completed with another value than it was invoked with is a ``ModelError``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

from checkers.linear.model import (
    NOTHING,
    UNKNOWN,
    Call,
    Hint,
    by_key,
    freeze,
    unknown_op,
)
from checkers.linear.values import SCALARS, written, wrong_value
from core.history import History
from core.ops import Op

READ = ("read",)
READ_ANY: Final = Hint(True, NOTHING, NOTHING)
"""The hint of a call legal in every state that never changes it."""
_new: Final = tuple.__new__  # builds a Call or Hint without its Python-level __new__
READ_UNKNOWN: Final = Call(READ, UNKNOWN, False)
HOLDS: Final = "nil, booleans, numbers and strings"
"""The values a register holds, in words."""
# The calls of int reads, writes and cases, shared: most histories use few values, and a
# call costs more to build than to find. Bounded: cleared when full.
_READS: dict[int, Call] = {}
_WRITES: dict[int, Call] = {}
_UNSURE_WRITES: dict[int, Call] = {}
_CASES: dict[tuple[int, int, Any], Call] = {}
CACHE_LIMIT: Final = 4096


def _cached(cache: dict[Any, Call], key: Any, fields: tuple[Any, Any, bool]) -> Call:
    """The call made of ``fields``, kept in ``cache`` under ``key``."""
    if len(cache) >= CACHE_LIMIT:
        cache.clear()
    call = cache[key] = _new(Call, fields)
    return call


class RegisterModel:
    """A read/write/cas register; the flags choose the dialect (see the module doc).
    A plain class (not a dataclass: ``dataclasses`` imports ``inspect``, a tenth of a
    small check's start-up); its three instances below are the models."""

    def __init__(
        self,
        name: str,
        initial: Any = None,
        fail_cas_happened: bool = False,
        nil_read_any: bool = False,
    ) -> None:
        self.name = name
        self.initial = initial
        self.fail_cas_happened = fail_cas_happened
        self.nil_read_any = nil_read_any

    def __repr__(self) -> str:
        return f"RegisterModel({self.name!r})"

    def init(self) -> Hashable:
        return freeze(self.initial)

    def call(self, invoke: Op, completion: Op | None) -> Call | None:
        # The hot path of reading a history: int values hit the shared calls at once.
        f = invoke.f
        kind = "info" if completion is None else completion.type
        if f == "cas":
            raw = written(self.name, invoke, completion)
            if (raw.__class__ is not list and not isinstance(raw, (list, tuple))) or len(raw) != 2:
                raise unknown_op(self.name, invoke, "a cas value [old new]")
            old, new = raw
            if kind == "ok":
                output: Any = True
            elif kind == "fail":
                if not self.fail_cas_happened:
                    return None
                output = False
            else:
                output = UNKNOWN
            if old.__class__ is int and new.__class__ is int:
                key3 = (old, new, output)
                c = _CASES.get(key3)
                if c is None:
                    c = _cached(_CASES, key3, (("cas", old, new), output, kind != "info"))
                return c
            for v in (old, new):
                if type(v) not in SCALARS:
                    raise wrong_value(self.name, invoke, "a cas expected or wrote", v, HOLDS)
            return _new(Call, (("cas", old, new), output, kind != "info"))
        if f == "read":
            if completion is None or kind != "ok":
                return None if kind == "fail" else READ_UNKNOWN
            value = completion.value
            if value.__class__ is int:
                c = _READS.get(value)
                return _cached(_READS, value, (READ, value, True)) if c is None else c
            if value is None:
                return None if self.nil_read_any else _new(Call, (READ, None, True))
            if type(value) not in SCALARS:
                raise wrong_value(self.name, completion, "a read returned", value, HOLDS)
            return _new(Call, (READ, value, True))
        if f == "write":
            if kind == "fail":
                return None
            value = written(self.name, invoke, completion)
            if value.__class__ is int:
                cache = _WRITES if kind == "ok" else _UNSURE_WRITES
                c = cache.get(value)
                if c is None:
                    c = _cached(cache, value, (("write", value), None, kind == "ok"))
                return c
            if type(value) not in SCALARS:
                raise wrong_value(self.name, invoke, "a write of", value, HOLDS)
            return _new(Call, (("write", value), None, kind == "ok"))
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
        inp, out = call[0], call[1]
        kind = inp[0]  # type: ignore[index]
        if kind == "read":
            return READ_ANY if out is UNKNOWN else _new(Hint, (True, out, NOTHING, False))
        if kind == "write":
            return _new(Hint, (False, NOTHING, inp[1], True))  # type: ignore[index]
        if out is True:
            return _new(Hint, (False, inp[1], inp[2], False))  # type: ignore[index]
        if out is False:
            return READ_ANY
        return _new(Hint, (False, NOTHING, inp[2], False))  # type: ignore[index]

    def changes_from(self, call: Call) -> Any:
        """A cas produces its new value only from its expected one."""
        inp = call[0]
        return inp[1] if inp[0] == "cas" else NOTHING  # type: ignore[index]

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
