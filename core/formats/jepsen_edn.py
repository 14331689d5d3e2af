"""Jepsen EDN histories: Knossos ``data/`` files, ``history.edn``, porcupine's kv logs.

A file is either one vector (or list) of op maps, or one op map per top-level form. Each
map needs ``:process``, ``:type`` and ``:f``; ``:value``, ``:key``, ``:error``, ``:node``
and ``:time`` are kept when present. Every key of an op map is a keyword; porcupine's kv
logs hold only ``:process :type :f :key :value`` (anything else in one is garbage, not a
field to skip), and every one of them names its key. Index is the position in the file;
time is the file's ``:time`` when ops have one (then every op must, a non-negative
integer), else the position (Knossos files record only order). Fields are checked by
``core.formats.fields.make_op``, the op semantics by ``core.formats.semantics``. A text
of the usual shape is read by ``core.formats.edn_fast`` in C, to the same ops; the plain
reader here reads the rest and words every error.
"""

from __future__ import annotations

from typing import Any, Final

from core.formats.budget import Budget
from core.formats.edn_fast import read_ops
from core.formats.errors import FilePath, format_error
from core.formats.fields import FieldError, make_op
from core.formats.files import read_text
from core.formats.jsonl import CHECK_EVERY
from core.formats.semantics import refuse_breaks
from core.history import History
from core.ops import Op

_FIX: Final = "expected one op map per form, like {:process 0, :type :invoke, :f :read, :value nil}"
_KV_KEYS: Final = frozenset(("process", "type", "f", "key", "value"))


def read_edn_history(
    path: FilePath, text: str | None = None, budget: Budget | None = None, kv: bool = False
) -> History:
    """The ops of a Jepsen EDN history file (``kv``: a porcupine kv log, whose op maps
    hold nothing but their five keys)."""
    if text is None:
        text = read_text(path, budget)
    # Most histories are read into ops in C; the rest, and every error, here.
    fast = read_ops(text, kv, None if budget is None else lambda: budget.poll("reading"))
    if fast is not None:
        return History(fast)
    return _read_plain(path, text, budget, kv)


def _read_plain(path: FilePath, text: str, budget: Budget | None, kv: bool) -> History:
    """``read_edn_history`` by the EDN reader (imported only here: its patterns cost a
    millisecond to compile, which a check of small files that the fast path reads should
    not pay)."""
    from core.formats.edn import EdnError, iter_elements

    events: list[dict[str, Any]] = []
    lines: list[int] = []
    # A value of millions of tokens is read within the budget too, not just the forms.
    poll = None if budget is None else lambda: budget.poll("reading", len(events))
    try:
        for form, line in iter_elements(text, poll):
            if budget is not None and not len(events) % CHECK_EVERY:
                budget.check("reading", len(events))
            events.append(_event(path, form, line, kv))
            lines.append(line)
    except EdnError as err:
        raise format_error(
            path, err.line, f"not EDN ({err.reason})", "fix or truncate the file"
        ) from None
    timed = any("time" in ev for ev in events)
    ops = []
    for i, ev in enumerate(events):
        try:
            ops.append(_op(i, ev, timed))
        except FieldError as err:
            raise format_error(path, lines[i], str(err), _FIX) from None
    refuse_breaks(path, ops, lines.__getitem__)
    return History(ops)


def op_line(path: FilePath, position: int) -> int | None:
    """The line of the op at ``position`` of the EDN history in ``path`` (None: no such
    op). Read again: only an error needs it."""
    from core.formats.edn import iter_elements

    for at, (_, line) in enumerate(iter_elements(read_text(path))):
        if at == position:
            return line
    return None


def _event(path: FilePath, form: Any, line: int, kv: bool) -> dict[str, Any]:
    if not isinstance(form, dict):
        raise format_error(path, line, f"{_brief(form)} is not a map", _FIX)
    for k in form:
        if type(k) is not str:
            raise format_error(path, line, f"the map key {_brief(k)} is not a keyword", _FIX)
        if kv and k not in _KV_KEYS:
            raise format_error(
                path,
                line,
                f"a kv op with :{k[:30]}",
                "a kv op holds only :process :type :f :key :value",
            )
    for k in ("process", "type", "f"):
        if k not in form:
            raise format_error(path, line, f"op map without :{k}", _FIX)
    if kv and "key" not in form:
        raise format_error(
            path, line, "a kv op without :key", "every op of a kv log names the key it is on"
        )
    return form


def _op(i: int, e: dict[str, Any], timed: bool) -> Op:
    if timed and "time" not in e:
        raise FieldError("an op without :time, where others have one")
    error = e.get("error")
    if error is not None and type(error) is not str:
        from core.formats.edn_text import dumps

        error = dumps(error)
    return make_op(
        i,
        e["time"] if timed else i,
        e["process"],
        e["type"],
        e["f"],
        e.get("value"),
        e.get("key"),
        error,
        e.get("node"),
    )


def _brief(form: Any) -> str:
    from core.formats.edn_text import dumps

    text = dumps(form)
    return text if len(text) <= 60 else text[:57] + "..."
