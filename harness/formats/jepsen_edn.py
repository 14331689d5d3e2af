"""Jepsen EDN histories: Knossos ``data/`` files, ``history.edn``, porcupine's kv logs.

A file is either one vector (or list) of op maps, or one op map per top-level form. Each
map needs ``:process``, ``:type`` and ``:f``; ``:value``, ``:key``, ``:error``, ``:node``
and ``:time`` are kept when present. Index is the position in the file; time is the
file's ``:time`` when every op has one, else the position (Knossos files record only order).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.formats.edn import EdnError, dumps, iter_elements
from harness.formats.errors import format_error
from harness.history import History
from harness.ops import OP_TYPES, Op

_FIX = "expected one op map per form, like {:process 0, :type :invoke, :f :read, :value nil}"


def read_edn_history(path: Path, text: str | None = None) -> History:
    """The ops of a Jepsen EDN history file."""
    if text is None:
        text = path.read_text(encoding="utf-8", errors="replace")
    events: list[dict[str, Any]] = []
    lines: list[int] = []
    try:
        for form, line in iter_elements(text):
            events.append(_event(path, form, line))
            lines.append(line)
    except EdnError as err:
        raise format_error(
            path, err.line, f"not EDN ({err.reason})", "fix or truncate the file"
        ) from None
    timed = bool(events) and all(isinstance(ev.get("time"), int) for ev in events)
    ops = []
    for i, ev in enumerate(events):
        try:
            ops.append(_op(i, ev, timed))
        except ValueError as err:
            raise format_error(path, lines[i], str(err), _FIX) from None
    return History(ops)


def _event(path: Path, form: Any, line: int) -> dict[str, Any]:
    if not isinstance(form, dict):
        raise format_error(path, line, f"{dumps(form)[:60]} is not a map", _FIX)
    for k in ("process", "type", "f"):
        if k not in form:
            raise format_error(path, line, f"op map without :{k}", _FIX)
    if form["type"] not in OP_TYPES:
        raise format_error(
            path, line, f":type {dumps(form['type'])} is not one of {', '.join(OP_TYPES)}", _FIX
        )
    return form


def _op(i: int, e: dict[str, Any], timed: bool) -> Op:
    error = e.get("error")
    node = e.get("node")
    process = e["process"]
    if not isinstance(process, (int, str)):
        raise ValueError(f":process {dumps(process)} is neither an integer nor a keyword")
    return Op(
        index=i,
        time=e["time"] if timed else i,
        process=process,
        type=e["type"],
        f=str(e["f"]),
        value=e.get("value"),
        key=e.get("key"),
        error=None if error is None else (error if isinstance(error, str) else dumps(error)),
        node=None if node is None else str(node),
    )
