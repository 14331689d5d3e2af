"""A fast path for Jepsen EDN histories: the text read into ops in C (``_edn.c``).

Most EDN histories (Knossos' ``data/`` files, Jepsen's ``history.edn``, porcupine's kv
logs) are op maps of keywords, small integers, strings and vectors of them. ``read_ops``
reads such a text straight into ops, each op's fields checked as
``core.formats.fields.make_op`` checks them, and the op semantics
(``core.history.first_break``) once they are all read. It never words an error: at
anything it does not read, or an op the semantics refuse, it gives up (``None``), and the
caller reads the text with the plain reader (``core.formats.jepsen_edn``), which says what
is wrong, where, and what to do, exactly as before. Where ``_edn.c`` is not built (no C
compiler), every file takes the plain path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.compiled import loaded
from core.formats.jsonl_fast import break_finder
from core.ops import Op

__all__ = ["read_ops"]


def read_ops(text: str, kv: bool, poll: Callable[[], None] | None) -> list[Op] | None:
    """The ops of an EDN history's ``text`` (``kv``: a porcupine kv log, whose op maps
    hold nothing but ``:process :type :f :key :value``, the key always), or None where
    this path does not read it. ``poll`` is called every 4,096 op maps (the check's
    budget: what it raises is raised)."""
    c = _native()
    if c is None:
        return None
    ops: list[Op] | None = c.read_ops(text, Op, kv, poll, _render)
    if ops is None or break_finder()(ops) >= 0:
        return None
    return ops


def _render(error: list[Any]) -> str:
    """An error that is a vector (``[:timeout nil]``) as the plain reader keeps it: its EDN
    text (``core.formats.edn_text``: the reader itself is not imported)."""
    from core.formats.edn_text import dumps

    return dumps(error)


def _native() -> Any:
    """The C module, or None where it is not built."""
    return loaded("core.formats._edn")
