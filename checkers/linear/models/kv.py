"""A key-value store with get, put and append (porcupine's kv model), checked per key.

Each key is a string register starting empty: ``get`` returns it, ``put`` replaces it,
``append`` adds to its end. A ``fail`` did not happen; an ``info`` put/append may take
effect at any time after invocation, or never. A get that returned nil reads as ``""``.
Values are strings: any other (a number, a map), or a put or append completed with
another value than it was invoked with, is a ``ModelError``.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, Final

from checkers.linear.model import ANY, NOTHING, UNKNOWN, Call, Hint, by_key, unknown_op
from checkers.linear.values import written, wrong_value
from core.history import History
from core.ops import Op

GET = ("get",)
HOLDS: Final = "strings (a get may return nil: the empty string)"
"""The values a key holds, in words."""
GET_ANY: Final = Hint(True, NOTHING, NOTHING)
"""The hint of a get of unknown result: legal in every state, never changes it."""
_new: Final = tuple.__new__  # builds a Call or Hint without its Python-level __new__


class KvModel:
    """One key of a string key-value store (histories are split by key)."""

    name: str = "kv"

    def init(self) -> Hashable:
        return ""

    def call(self, invoke: Op, completion: Op | None) -> Call | None:
        f = invoke.f
        kind = "info" if completion is None else completion.type
        if f == "get":
            if completion is None or kind != "ok":
                return None if kind == "fail" else _new(Call, (GET, UNKNOWN, False))
            value = completion.value
            if type(value) is not str:
                if value is not None:
                    raise wrong_value(self.name, completion, "a get returned", value, HOLDS)
                value = ""
            return _new(Call, (GET, value, True))
        if f == "put" or f == "append":
            if kind == "fail":
                return None
            value = written(self.name, invoke, completion)
            if type(value) is not str:
                what = f"{'a' if f == 'put' else 'an'} {f} of"
                raise wrong_value(self.name, invoke, what, value, HOLDS)
            return _new(Call, ((f, value), None, kind == "ok"))
        raise unknown_op(self.name, invoke, "get, put and append")

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Hashable]:
        f = input[0]
        if f == "get":
            return (output is UNKNOWN or state == output), state
        if f == "put":
            return True, input[1]
        return True, state + input[1]

    def partition(self, history: History) -> list[tuple[Any, History]]:
        return by_key(history)

    def hint(self, call: Call) -> Hint:
        inp = call[0]
        f = inp[0]  # type: ignore[index]
        if f == "get":
            out = call[1]
            return GET_ANY if out is UNKNOWN else _new(Hint, (True, out, NOTHING, False))
        if f == "put":
            return _new(Hint, (False, NOTHING, inp[1], True))  # type: ignore[index]
        return APPEND_HINT

    def reachable(self, state: Any, target: Any) -> bool:
        """Appends only extend: ``target`` must start with ``state``."""
        return type(target) is str and target.startswith(state)

    def describe_call(self, call: Call) -> str:
        inp = call.input
        if inp[0] == "get":  # type: ignore[index]
            return "get (unknown result)" if call.output is UNKNOWN else f"get {call.output!r}"
        return f"{inp[0]} {inp[1]!r}"  # type: ignore[index]

    def describe_state(self, state: Any) -> str:
        return repr(state)


APPEND_HINT: Final = Hint(False, NOTHING, ANY)


KV = KvModel()
