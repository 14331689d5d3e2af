"""History writers: ops back into the formats ``core.formats`` reads, so that what a
command derives from a history file (``harness check FILE --shrink OUT``: a shrunk
history) is a file of the same format, checked by the same reader with the same model.

``render(fmt, ops)`` gives the text; writing it is the caller's (through
``core.writes``). Each writer keeps what its reader reads: our JSONL every field
(``Op.to_json``); Jepsen's EDN one op map per line, ``:time`` only when the ops' times are
not their positions (Knossos files record order alone); porcupine's kv logs the five keys
they hold; porcupine's etcd logs one ``INFO  jepsen.util`` line per op, ``:timed-out``
for an op whose error says so. Indices are not written where the format has none: the
reader numbers the ops again, in the same order, so the real-time order is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final

from core.formats.edn import dumps
from core.ops import Op

__all__ = ["WRITERS", "render"]


def _jsonl(ops: Sequence[Op]) -> str:
    return "".join(op.to_json() + "\n" for op in ops)


def _edn(ops: Sequence[Op]) -> str:
    timed = any(op.time != op.index for op in ops)
    return "".join(_edn_map(op, timed, kv=False) + "\n" for op in ops)


def _kv(ops: Sequence[Op]) -> str:
    return "".join(_edn_map(op, False, kv=True) + "\n" for op in ops)


def _edn_map(op: Op, timed: bool, kv: bool) -> str:
    fields: list[tuple[str, Any]] = [("process", op.process), ("type", op.type), ("f", op.f)]
    if kv or op.key is not None:
        fields.append(("key", op.key))
    fields.append(("value", op.value))
    if not kv:
        fields += [(k, v) for k, v in (("error", op.error), ("node", op.node)) if v is not None]
        if timed:
            fields.append(("time", op.time))
    return "{" + ", ".join(f":{k} {dumps(v)}" for k, v in fields) + "}"


def _etcd(ops: Sequence[Op]) -> str:
    return "".join(
        f"INFO  jepsen.util - {op.process}\t:{op.type}\t:{op.f}\t{_etcd_value(op)}\n" for op in ops
    )


def _etcd_value(op: Op) -> str:
    if op.error == "timed-out" and op.value is None:
        return ":timed-out"
    return dumps(op.value)


WRITERS: Final[dict[str, Callable[[Sequence[Op]], str]]] = {
    "jsonl": _jsonl,
    "edn": _edn,
    "porcupine-etcd": _etcd,
    "porcupine-kv": _kv,
}
"""The formats a history can be written in, by the names ``core.formats.FORMATS`` gives."""


def render(fmt: str, ops: Sequence[Op]) -> str:
    """``ops`` as the text of a history file in the format ``fmt`` (KeyError: no writer)."""
    return WRITERS[fmt](ops)
