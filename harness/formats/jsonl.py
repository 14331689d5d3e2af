"""Our JSON Lines files, read strictly: ``history.jsonl`` and a run's side logs.

Every line is one JSON value (blank lines aside), in strict UTF-8, without ``NaN`` or
``Infinity``; a history's lines are op objects whose fields ``make_op`` checks, with
indices that increase. The one thing tolerated is what a killed writer leaves: a last line
cut short (no newline after it, the start of a JSON object). It is dropped and said:
``JsonLines.truncated`` is its line number.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from harness.formats.budget import Budget
from harness.formats.errors import FormatError, format_error
from harness.formats.fields import MAX_INT, FieldError, make_op
from harness.formats.files import bad_utf8, read_bytes
from harness.history import History
from harness.ops import Op

__all__ = ["CHECK_EVERY", "JsonLines", "read_history_jsonl", "read_json", "truncation_note"]

CHECK_EVERY: Final = 8192
"""Lines between two looks at the time and memory budget."""
_FIX: Final = "each line must be one op object with index, time, process, type and f"
_REQUIRED: Final = ("index", "time", "process", "type", "f")
_PARTIAL_LITERALS: Final = ("true", "false", "null", "-")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


_DECODER: Final = json.JSONDecoder(parse_constant=_no_constant)


class JsonLines:
    """The JSON value of each line of a file, with its line number (1-based)."""

    def __init__(
        self, path: Path, budget: Budget | None = None, fix: str = _FIX, data: bytes | None = None
    ) -> None:
        self.path = path
        self.budget = budget
        self.fix = fix
        self.truncated: int | None = None
        self._data = data

    def __iter__(self) -> Iterator[tuple[int, Any]]:
        path, budget = self.path, self.budget
        data = read_bytes(path, budget) if self._data is None else self._data
        self._data = None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            cut = data.rfind(b"\n") + 1
            if e.start < cut or not data[cut:].startswith(b"{"):
                raise bad_utf8(path, data, e) from None
            text = data[:cut].decode("utf-8")  # a tail cut inside a character
            self.truncated = text.count("\n") + 1
        del data
        lines = text.split("\n")
        del text
        last = len(lines) - 1
        decode = _DECODER.decode
        for i, raw in enumerate(lines):
            if budget is not None and not i % CHECK_EVERY:
                budget.check("reading", i)
            if not raw:
                continue
            try:
                value = decode(raw)
            except json.JSONDecodeError as e:
                if not raw.strip():
                    continue
                if i == last and _cut_short(raw, e):
                    self.truncated = i + 1
                    return
                problem = f"not a JSON object ({e.msg} at column {e.colno})"
                raise self.error(i + 1, problem) from None
            except RecursionError:
                raise self.error(i + 1, "nested too deeply") from None
            except ValueError as e:  # NaN, Infinity, an integer of thousands of digits
                raise self.error(i + 1, _unreadable(e)) from None
            yield i + 1, value

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
    path: Path, budget: Budget | None = None, max_time: int = MAX_INT, data: bytes | None = None
) -> tuple[History, int | None]:
    """The ops of a ``history.jsonl`` file (or of its ``data``, already read), and the line
    number of a truncated last line that was dropped (None if there was none). Times above
    ``max_time`` are errors."""
    lines = JsonLines(path, budget, data=data)
    ops: list[Op] = []
    previous = -1
    for n, d in lines:
        if type(d) is not dict:
            raise lines.error(n, f"a JSON {type(d).__name__}, not an op object")
        g = d.get
        try:
            op = make_op(g("index"), g("time"), g("process"), g("type"), g("f"), g("value"),
                         g("key"), g("error"), g("node"), max_time)  # fmt: skip
        except FieldError as e:
            missing = [k for k in _REQUIRED if k not in d]
            raise lines.error(n, f"not an op (no {missing[0]})" if missing else str(e)) from None
        if op.index <= previous:
            raise lines.error(n, f"index {op.index} does not follow index {previous}")
        previous = op.index
        ops.append(op)
    return History(ops), lines.truncated


def read_json(path: Path, budget: Budget | None = None) -> Any:
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


def truncation_note(path: Path, line: int) -> str:
    """The note said when a truncated last line was dropped."""
    return f"{path}:{line}: the last line is cut short (a killed run?) and was left out"
