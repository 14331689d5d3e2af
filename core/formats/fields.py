"""The fields of an op as every reader must check them: types, ranges, depth, size.

A reader hands over what it parsed; ``make_op`` builds the ``Op`` or raises ``FieldError``
saying, in a few words, which field is wrong and why (the reader adds the file and line).
Nothing is coerced: an index or time of ``1.5`` is an error, not ``1``. The bounds are
those of the histories the harness and Jepsen write (Jepsen's times and indices are Java
longs), and keep every later step linear in the file's size:

- index, time and an integer process: integers from 0 to 2**62 - 1, below the checkers'
  "infinity" (``1 << 62``); a time may be capped lower by the caller (a run directory's
  history must fit in a run); indices must increase (the checkers take their order for
  real time), which the readers check;
- process: such an integer or a non-empty string; f: a non-empty string;
- key: absent, an integer or a string (it partitions the history, so it must be hashable);
- value: JSON-like data nested at most ``MAX_DEPTH`` deep, integers within 64 bits,
  finite floats, at most ``MAX_ITEMS`` elements in all;
- error and node: absent or strings.
"""

from __future__ import annotations

import math
from typing import Any, Final

from core.ops import MAX_INT, OP_TYPES, Op

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "MAX_INT", "FieldError", "check_value", "make_op"]

MAX_DEPTH: Final = 32
MAX_DIGITS: Final = 20
"""Integers with more digits than this (beyond 64 bits) are refused by the text readers."""
MAX_ITEMS: Final = 100_000
_SCALARS: Final = (type(None), str, bool)
_OP_TYPES: Final = frozenset(OP_TYPES)


class FieldError(ValueError):
    """An op field of the wrong type or out of range; the message names the field."""


def make_op(
    index: Any,
    time: Any,
    process: Any,
    type_: Any,
    f: Any,
    value: Any = None,
    key: Any = None,
    error: Any = None,
    node: Any = None,
    max_time: int = MAX_INT,
) -> Op:
    """The op with these fields, each checked (see the module's docstring)."""
    if type(index) is not int or not 0 <= index <= MAX_INT:
        raise FieldError(f"index {_show(index)} is not an integer from 0 to 2**62-1")
    if type(time) is not int or not 0 <= time <= max_time:
        raise FieldError(f"time {_show(time)} is not an integer from 0 to {max_time} (ns)")
    if type(process) is int:
        if not 0 <= process <= MAX_INT:
            raise FieldError(f"process {_show(process)} is not from 0 to 2**62-1")
    elif type(process) is not str or not process:
        raise FieldError(f"process {_show(process)} is neither an integer nor a name")
    if type(type_) is not str or type_ not in _OP_TYPES:
        raise FieldError(f"type {_show(type_)} is not one of {', '.join(OP_TYPES)}")
    if type(f) is not str or not f:
        raise FieldError(f"f {_show(f)} is not a non-empty name")
    if type(value) not in _SCALARS:
        check_value(value, "value")
    if key is not None and type(key) is not str and (type(key) is not int or _big(key)):
        raise FieldError(f"key {_show(key)} is not an integer (64 bits) or a string")
    if error is not None and type(error) is not str:
        raise FieldError(f"error {_show(error)} is not a string")
    if node is not None and type(node) is not str:
        raise FieldError(f"node {_show(node)} is not a string")
    return Op(index, time, process, type_, f, value, key, error, node)  # type: ignore[arg-type]


def check_value(value: Any, field: str) -> None:
    """Raise FieldError unless ``value`` is plain data within the bounds: lists, tuples,
    sets and maps of strings, booleans, None, 64-bit integers and finite floats."""
    stack = [(value, 0)]
    items = 0
    while stack:
        v, depth = stack.pop()
        t = type(v)
        if t in _SCALARS:
            continue
        if t is int:
            if _big(v):
                raise FieldError(f"{field} holds an integer beyond 64 bits ({_show(v)})")
            continue
        if t is float:
            if not math.isfinite(v):
                raise FieldError(f"{field} holds a number that is not finite ({v})")
            continue
        if t in (list, tuple, frozenset, set, dict):
            if depth >= MAX_DEPTH:
                raise FieldError(f"{field} is nested more than {MAX_DEPTH} deep")
            items += len(v)
            if items > MAX_ITEMS:
                raise FieldError(f"{field} holds more than {MAX_ITEMS} elements")
            elements = [*v.keys(), *v.values()] if t is dict else v
            stack.extend((e, depth + 1) for e in elements)
            continue
        raise FieldError(f"{field} holds a {t.__name__}, which a history cannot hold")


def _big(n: int) -> bool:
    """Beyond 64 bits, signed or unsigned (etcd lease ids and ZooKeeper session ids and
    zxids use all 63 bits of a signed 64-bit integer; indexes and times are bounded apart,
    by ``MAX_INT``)."""
    return not -(2**63) <= n < 2**64


def _show(v: Any) -> str:
    """A short rendering of a bad field for a message (a huge integer is not printed)."""
    if type(v) is int and _big(v):
        return f"<an integer of {v.bit_length()} bits>"
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    try:
        text = repr(v) if not isinstance(v, (list, dict, tuple)) else _brief(v)
    except (RecursionError, ValueError):
        text = f"<a {type(v).__name__}>"
    return text if len(text) <= 40 else text[:37] + "..."


def _brief(v: Any) -> str:
    """A container's rendering without walking all of it (it may be very deep): a short
    one of scalars in full, else its brackets."""
    if len(v) <= 8 and all(type(x) in (*_SCALARS, int, float) for x in v):
        return repr(v)
    if isinstance(v, dict):
        return "{...}" if v else "{}"
    return ("[...]" if v else "[]") if isinstance(v, list) else ("(...)" if v else "()")
