"""Porcupine's Jepsen etcd logs: ``INFO  jepsen.util - <process> :<type> :<f> <value>``.

Fields are separated by tabs or spaces. Values are ``nil``, an integer, ``[old new]`` for
a cas, or ``:timed-out`` on an ``:info`` write/cas or a ``:fail`` read. The reader keeps the
facts as written: ``:timed-out`` becomes ``error="timed-out"`` with no value, and a
``:fail :cas`` stays a fail (the etcd model decides it means "happened without effect").
Index and time are the line's position among the ops.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Final

from harness.formats.errors import format_error
from harness.history import History
from harness.ops import OP_TYPES, Op

LINE: Final = re.compile(r"^INFO\s+jepsen\.util\s+-\s+(\d+)\s+:(\w+)\s+:([\w-]+)\s+(.*?)\s*$")
_FIX = "expected lines like 'INFO  jepsen.util - 3\\t:ok\\t:cas\\t[1 2]'"


def read_etcd_log(path: Path, text: str | None = None) -> History:
    """The ops of a porcupine etcd log (an empty file is an empty history)."""
    if text is None:
        text = path.read_text(encoding="utf-8", errors="replace")
    ops: list[Op] = []
    for n, raw in enumerate(text.splitlines(), start=1):
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
                raise format_error(path, n, f"cannot read value {raw_value!r}", _FIX) from None
        i = len(ops)
        ops.append(Op(i, i, int(process), type_, f, value, error=error))  # type: ignore[arg-type]
    return History(ops)


def _value(raw: str) -> Any:
    if raw == "nil":
        return None
    if raw.startswith("[") and raw.endswith("]"):
        return [_value(part) for part in raw[1:-1].split()]
    return int(raw)
