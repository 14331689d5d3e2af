"""Porcupine's Jepsen etcd logs: ``INFO  jepsen.util - <process> :<type> :<f> <value>``.

Fields are separated by tabs or spaces. Values are ``nil``, an integer, ``[old new]`` for
a cas, or ``:timed-out`` on an ``:info`` write/cas or a ``:fail`` read. The reader keeps the
facts as written: ``:timed-out`` becomes ``error="timed-out"`` with no value, and a
``:fail :cas`` stays a fail (the etcd model decides it means "happened without effect").
Index and time are the line's position among the ops; the ops keep the op semantics
(``core.formats.semantics``).
"""

from __future__ import annotations

import re
from typing import Any, Final

from core.formats.budget import Budget
from core.formats.errors import FilePath, format_error
from core.formats.fields import MAX_DIGITS, make_op
from core.formats.files import read_text
from core.formats.jsonl import CHECK_EVERY
from core.formats.semantics import refuse_breaks
from core.history import History
from core.ops import OP_TYPES, Op

LINE: Final = re.compile(r"^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(\w+)\s+:([\w-]+)\s+(.*?)\s*$")
_FIX = "expected lines like 'INFO  jepsen.util - 3\\t:ok\\t:cas\\t[1 2]'"


def read_etcd_log(path: FilePath, text: str | None = None, budget: Budget | None = None) -> History:
    """The ops of a porcupine etcd log."""
    if text is None:
        text = read_text(path, budget)
    ops: list[Op] = []
    lines: list[int] = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if budget is not None and not n % CHECK_EVERY:
            budget.check("reading", len(ops))
        if not raw.strip():
            continue
        m = LINE.match(raw)
        if m is None:
            raise format_error(path, n, f"not a jepsen.util op line: {raw[:60]!r}", _FIX)
        process, type_, f, raw_value = m.groups()
        if type_ not in OP_TYPES:
            raise format_error(path, n, f"unknown op type :{type_}", _FIX)
        error = None
        value: Any
        if raw_value == ":timed-out":
            value, error = None, "timed-out"
        else:
            try:
                value = _value(raw_value)
            except ValueError:
                raise format_error(path, n, f"cannot read value {raw_value[:40]!r}", _FIX) from None
        i = len(ops)
        try:
            ops.append(make_op(i, i, _int(process), type_, f, value, error=error))
        except ValueError as e:  # a FieldError, or a process beyond 64 bits
            raise format_error(path, n, str(e), _FIX) from None
        lines.append(n)
    refuse_breaks(path, ops, lines.__getitem__)
    return History(ops)


def op_line(path: FilePath, position: int) -> int | None:
    """The line of the op at ``position`` of the log in ``path`` (None: no such op)."""
    at = -1
    for n, raw in enumerate(read_text(path).splitlines(), start=1):
        at += bool(raw.strip())
        if at == position:
            return n
    return None


def _value(raw: str) -> Any:
    """``nil``, an integer, or ``[a b]`` of those (a cas): nothing nested deeper."""
    if raw.startswith("[") and raw.endswith("]"):
        return [_scalar(part) for part in raw[1:-1].split()]
    return _scalar(raw)


def _scalar(raw: str) -> int | None:
    return None if raw == "nil" else _int(raw)


def _int(raw: str) -> int:
    """A decimal integer within 64 bits (ValueError otherwise: no 5,000-digit parse)."""
    if len(raw) > MAX_DIGITS:
        raise ValueError(f"{raw[:20]}... is beyond 64 bits")
    return int(raw)
