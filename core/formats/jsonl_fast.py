"""A fast path for big ``history.jsonl`` files: lines parsed and checked in C by msgspec.

``read_ops`` decodes each chunk's lines at once into ops whose field types, ranges and
names msgspec checks as it parses (``Op``'s annotations: the checks of
``core.formats.fields.make_op`` that a type can say); what no type says (a value's depth,
size and 64-bit integers, a key's 64 bits, times under ``max_time``, increasing indices)
is checked here as the ops are built, and the op semantics (``core.history.first_break``:
each completion paired with its invocation) once they are all read. It never words an
error: at the first line it does not accept, it gives up (``None``), and the caller reads
the file again with the plain reader (``core.formats.jsonl``), which says what is wrong,
where, and what to do, exactly as before. Anything the plain reader accepts and this path
does not (a lone surrogate escape, a number out of a float's range) is read by the plain
reader too. Without msgspec (an optional speed-up) every file takes the plain path.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, Final

from core.compiled import loaded
from core.formats.budget import Budget
from core.formats.fields import FieldError, check_value
from core.history import first_break
from core.ops import Op

__all__ = ["FAIL", "MIN_BYTES", "blocks", "line_checks", "op_decoder", "read_ops"]

MIN_BYTES: Final = 1 << 20
"""Files smaller than this take the plain path: loading msgspec costs more than it saves."""
CHUNK: Final = 1 << 20
"""Bytes decoded at a time (about 10,000 ops; the budget is looked at between chunks)."""
_SCALARS: Final = (type(None), str, bool)
_LOW: Final = -(2**63)
_HIGH: Final = 2**64


def op_decoder() -> Any:
    """msgspec's decoder of op lines straight into ``Op`` (whose annotations carry the
    checks a type can say), or None where msgspec cannot be loaded."""
    try:
        import msgspec
    except ImportError:
        return None
    return msgspec.json.Decoder(Op)


def read_ops(f: BinaryIO, budget: Budget | None, max_time: int) -> list[Op] | None:
    """The ops of the open file ``f`` (read from where it is), or None when a line is not
    one this path accepts or msgspec is missing: the plain reader then reads the file."""
    decoder = op_decoder()
    if decoder is None:
        return None
    paused = gc.isenabled()
    gc.disable()  # a collection would traverse every value read so far, again and again
    try:
        return _read(f, decoder.decode_lines, budget, max_time)
    finally:
        if paused:
            gc.enable()


def blocks(f: BinaryIO, tail: list[bytes]) -> Iterator[bytes]:
    """The whole lines of the open file ``f`` (from where it is), about ``CHUNK`` bytes of
    them at a time; once it is read, what follows its last newline is put in ``tail``."""
    rest = b""
    while True:
        chunk = f.read(CHUNK)
        if not chunk:
            break
        data = rest + chunk if rest else chunk
        cut = data.rfind(b"\n") + 1
        rest = data[cut:]
        if cut:
            yield data[:cut]
        del data
    tail.append(rest)


def _read(f: BinaryIO, decode: Any, budget: Budget | None, max_time: int) -> list[Op] | None:
    check, find_break = line_checks()
    ops: list[Op] = []
    previous = -1
    tail: list[bytes] = []
    for block in blocks(f, tail):
        if budget is not None:
            budget.check("reading", len(ops))
        try:
            lines: list[Op] = decode(block)
        except Exception:  # msgspec's DecodeError or ValidationError: the plain reader says
            return None
        del block
        previous = check(lines, previous, max_time)
        if previous == FAIL:
            return None
        ops += lines
    if tail[0].strip():
        return None  # a last line without a newline (maybe cut short): the plain reader's
    if budget is not None:
        budget.check("reading", len(ops))
    return None if find_break(ops) >= 0 else ops


FAIL: Final = -2
"""What ``check_lines`` returns at an op that fails a check."""


def check_lines(lines: list[Op], previous: int, max_time: int) -> int:
    """What no annotation says, checked on decoded ops: a value's depth, size and 64-bit
    integers, a key's type and 64 bits, times under ``max_time``, indices increasing
    from above ``previous``. The last index, or FAIL. (``_scan.c`` does the same in C.)"""
    for x in lines:
        value, key, index = x.value, x.key, x.index
        t = type(value)
        if t is int:
            if not _LOW <= value < _HIGH:
                return FAIL
        elif t not in _SCALARS and not (t is list and _plain(value)) and not _complex_ok(value):
            return FAIL
        t = type(key)
        if t is int:
            if not _LOW <= key < _HIGH:
                return FAIL
        elif key is not None and t is not str:
            return FAIL
        if index <= previous or x.time > max_time:
            return FAIL
        previous = index
    return previous


def break_at(ops: list[Op]) -> int:
    """The position of the first op breaking the op semantics, or -1 (``_scan.c``'s
    ``first_break`` says the same in C)."""
    found = first_break(ops)
    return -1 if found is None else found.position


def line_checks() -> tuple[Callable[[list[Op], int, int], int], Callable[[list[Op]], int]]:
    """``check_lines`` and ``break_at``, in C where ``_scan.c`` is built."""
    scan = _scan()
    if scan is None:
        return check_lines, break_at
    return (
        lambda lines, previous, max_time: int(
            scan.check_lines(lines, Op, previous, max_time, _complex_ok)
        ),
        break_finder(),
    )


def break_finder() -> Callable[[list[Op]], int]:
    """``break_at``, in C where ``_scan.c`` is built (the EDN fast path's too)."""
    scan = _scan()
    if scan is None:
        return break_at
    return lambda ops: int(scan.first_break(ops, Op))


def _scan() -> Any:
    """``_scan.c``'s module, or None where it is not built."""
    return loaded("core.formats._scan")


def _complex_ok(value: Any) -> bool:
    """Whether a value other than a scalar or a short list of them is within bounds."""
    try:
        check_value(value, "value")
    except FieldError:
        return False
    return True


def _plain(value: list[Any]) -> bool:
    """Whether a list holds only scalars within the bounds (a cas's ``[old, new]``): the
    common case, checked without ``check_value``'s walk."""
    if len(value) > 16:
        return False
    for x in value:
        t = type(x)
        if t is int:
            if not _LOW <= x < _HIGH:
                return False
        elif t not in _SCALARS:
            return False
    return True
