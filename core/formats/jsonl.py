"""Our JSON Lines files, read strictly: ``history.jsonl`` and a run's side logs.

Every line is one JSON value (blank lines aside), in strict UTF-8, without ``NaN`` or
``Infinity``; a history's lines are op objects whose fields ``make_op`` checks, with
indices that increase, and no other fields (what ``Op.to_json`` writes: anything else in
an op is garbage, not a field to skip), keeping the op semantics
(``core.formats.semantics``). The one thing tolerated is what a killed writer
leaves: a last line cut short (no newline after it, the start of a JSON object). It is
dropped and said: ``JsonLines.truncated`` is its line number.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from typing import Any, BinaryIO, Final

from core.formats.budget import Budget
from core.formats.errors import FilePath, FormatError, format_error
from core.formats.fields import MAX_INT, FieldError, make_op
from core.formats.files import bad_utf8, open_regular, read_bytes
from core.formats.jsonl_fast import MIN_BYTES, read_ops
from core.formats.semantics import refuse_breaks
from core.history import History
from core.ops import Op

__all__ = [
    "CHECK_EVERY",
    "JsonLines",
    "op_line",
    "read_history_jsonl",
    "read_json",
    "truncation_note",
]

CHECK_EVERY: Final = 8192
"""Lines between two looks at the time and memory budget."""
CHUNK: Final = 1 << 22
"""Bytes read at a time."""
_FIX: Final = "each line must be one op object with index, time, process, type and f"
_REQUIRED: Final = ("index", "time", "process", "type", "f")
_FIELDS: Final = frozenset((*_REQUIRED, "value", "key", "error", "node"))
_PARTIAL_LITERALS: Final = ("true", "false", "null", "-")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


_DECODER: Final = json.JSONDecoder(parse_constant=_no_constant)


class JsonLines:
    """The JSON value of each line of a file, with its line number (1-based).

    The file is read in chunks of ``CHUNK`` bytes (never whole: a history may be larger
    than what its ops take in memory), each decoded as strict UTF-8; the budget is looked
    at after every chunk and every ``CHECK_EVERY`` lines. ``file`` is the file already
    open (at its start), else ``path`` is opened.
    """

    def __init__(
        self,
        path: FilePath,
        budget: Budget | None = None,
        fix: str = _FIX,
        file: BinaryIO | None = None,
    ) -> None:
        self.path = path
        self.budget = budget
        self.fix = fix
        self.truncated: int | None = None
        self._file = file

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        f = open_regular(self.path) if self._file is None else self._file
        try:
            yield from self._lines(f)
        finally:
            if self._file is None:
                f.close()

    def _lines(self, f: BinaryIO) -> Iterator[tuple[int, Any]]:
        path, budget = self.path, self.budget
        decode = _DECODER.decode
        n = 0  # lines so far
        offset = 0  # bytes before ``rest``
        rest = b""
        while True:
            if budget is not None:
                budget.check("reading", n)
            try:
                chunk = f.read(CHUNK)
            except OSError as e:
                raise format_error(
                    path, n + 1, f"cannot read it ({e.strerror})", "check it"
                ) from None
            if not chunk:
                break
            data = rest + chunk if rest else chunk
            cut = data.rfind(b"\n") + 1
            if not cut:
                rest = data
                continue
            try:
                text = data[:cut].decode("utf-8")
            except UnicodeDecodeError as e:
                raise bad_utf8(path, data, e, n + 1, offset) from None
            rest = data[cut:]
            offset += cut
            del data
            lines = text.split("\n")
            lines.pop()  # the empty string after the last newline
            del text
            for raw in lines:
                n += 1
                if budget is not None and not n % CHECK_EVERY:
                    budget.check("reading", n)
                if not raw:
                    continue
                try:
                    value = decode(raw)
                except json.JSONDecodeError as e:
                    if not raw.strip():
                        continue
                    raise self._bad_json(n, e) from None
                except RecursionError:
                    raise self.error(n, "nested too deeply") from None
                except ValueError as e:  # NaN, Infinity, an integer of thousands of digits
                    raise self.error(n, _unreadable(e)) from None
                yield n, value
        if rest.strip():
            yield from self._last(rest, n + 1, offset)

    def _last(self, rest: bytes, n: int, offset: int) -> Iterator[tuple[int, Any]]:
        """The last line, without a newline: a value, or the cut-short line a killed
        writer leaves (dropped, and ``truncated`` set), or an error."""
        try:
            raw = rest.decode("utf-8")
        except UnicodeDecodeError as e:
            if (
                rest.startswith(b"{")
                and e.end == len(rest)
                and e.reason == "unexpected end of data"
            ):
                self.truncated = n  # cut inside a character
                return
            raise bad_utf8(self.path, rest, e, n, offset) from None
        try:
            value = _DECODER.decode(raw)
        except json.JSONDecodeError as e:
            if _cut_short(raw, e):
                self.truncated = n
                return
            raise self._bad_json(n, e) from None
        except RecursionError:
            raise self.error(n, "nested too deeply") from None
        except ValueError as e:
            raise self.error(n, _unreadable(e)) from None
        yield n, value

    def _bad_json(self, line: int, e: json.JSONDecodeError) -> FormatError:
        return self.error(line, f"not a JSON object ({e.msg} at column {e.colno})")

    def error(self, line: int, problem: str) -> FormatError:
        """The one-line error for ``line`` of this file."""
        return format_error(self.path, line, problem, self.fix)


def _cut_short(raw: str, e: json.JSONDecodeError) -> bool:
    """Whether a last line is the start of a JSON object that ends where the file does
    (what a killed writer leaves), not a line with something wrong inside it."""
    if not raw.startswith("{"):
        return False
    rest = raw[e.pos :].rstrip()
    return (
        not rest
        or e.msg.startswith("Unterminated string")
        or any(lit.startswith(rest) for lit in _PARTIAL_LITERALS)
    )


def read_history_jsonl(
    path: FilePath,
    budget: Budget | None = None,
    max_time: int = MAX_INT,
    file: BinaryIO | None = None,
) -> tuple[History, int | None]:
    """The ops of a ``history.jsonl`` file (``file``: already open, at its start), and the
    line number of a truncated last line that was dropped (None if there was none). Times
    above ``max_time`` are errors, and so are ops that break the op semantics. A big file
    is read by the fast path (``core.formats.jsonl_fast``) when it accepts every line,
    else by the one below."""
    if file is None:
        with open_regular(path) as f:
            return read_history_jsonl(path, budget, max_time, f)
    if _size(file) >= MIN_BYTES:
        fast = read_ops(file, budget, max_time)
        if fast is not None:
            return History(fast), None
        file.seek(0)
    lines = JsonLines(path, budget, file=file)
    ops: list[Op] = []
    previous = -1
    for n, d in lines:
        if type(d) is not dict:
            raise lines.error(n, f"a JSON {type(d).__name__}, not an op object")
        g = d.get
        try:
            op = make_op(
                g("index"),
                g("time"),
                g("process"),
                g("type"),
                g("f"),
                g("value"),
                g("key"),
                g("error"),
                g("node"),
                max_time,
            )
        except FieldError as e:
            missing = [k for k in _REQUIRED if k not in d]
            raise lines.error(n, f"not an op (no {missing[0]})" if missing else str(e)) from None
        if not _FIELDS.issuperset(d):
            extra = sorted(k for k in d if k not in _FIELDS)[0]
            raise lines.error(n, f"an op with a field {extra[:30]!r} ops do not have")
        if op.index <= previous:
            raise lines.error(n, f"index {op.index} does not follow index {previous}")
        previous = op.index
        ops.append(op)
    refuse_breaks(path, ops, lambda i: op_line(path, i))
    return History(ops), lines.truncated


def op_line(path: FilePath, position: int) -> int | None:
    """The line of the op at ``position`` of the history in ``path`` (None: no such op).
    Read again: only an error needs it."""
    for at, (n, _) in enumerate(JsonLines(path)):
        if at == position:
            return n
    return None


def _size(file: BinaryIO) -> int:
    try:
        return os.fstat(file.fileno()).st_size
    except (OSError, ValueError, AttributeError):  # not a file descriptor (a test's BytesIO)
        return 0


def read_json(path: FilePath, budget: Budget | None = None) -> Any:
    """The one JSON value of a regular file (strict UTF-8, no NaN, bounded nesting)."""
    data = read_bytes(path, budget)
    try:
        return _DECODER.decode(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise bad_utf8(path, data, e) from None
    except json.JSONDecodeError as e:
        raise format_error(path, e.lineno, f"not JSON ({e.msg})", "fix or remove it") from None
    except RecursionError:
        raise format_error(path, None, "JSON nested too deeply", "fix or remove it") from None
    except ValueError as e:
        raise format_error(path, None, _unreadable(e), "fix it") from None


def _unreadable(e: ValueError) -> str:
    """What is wrong in JSON that parses but cannot be read (NaN, a huge integer)."""
    if "integer string conversion" in str(e):
        return "an integer of thousands of digits (beyond 64 bits)"
    return f"not JSON that can be read ({e})"


def truncation_note(path: FilePath, line: int) -> str:
    """The note said when a truncated last line was dropped."""
    return f"{path}:{line}: the last line is cut short (a killed run?) and was left out"
