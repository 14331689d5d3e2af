"""A small EDN reader, enough for Jepsen histories.

EDN is Clojure's data notation; Jepsen and Knossos write histories in it. This reader
handles what those files use: maps, vectors, lists, sets, keywords, symbols, strings,
characters, integers, floats, ``nil``, ``true``/``false``, comments (``;``), discarded
forms (``#_``), commas as whitespace and tagged literals (``#inst "..."`` reads as the
tagged value). It is not a general EDN implementation: ratios, big decimals and custom
readers are read as their nearest Python value or string.

Mapping to Python: keywords become plain strings without the colon (``:read`` is
``"read"``), vectors and lists become ``list``, sets ``frozenset``, maps ``dict``; a
collection used as a map key or set element becomes a ``tuple`` so that it is hashable.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from typing import Any, Final

from core.formats.edn_symbol import Symbol
from core.formats.edn_text import dumps
from core.formats.fields import MAX_DIGITS

__all__ = ["EdnError", "Symbol", "dumps", "iter_elements", "loads"]


class EdnError(ValueError):
    """Text that is not EDN; ``line`` is where the reader stopped (1-based)."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(f"line {line}: {message}")
        self.reason = message
        self.line = line


# Every repetition is possessive (``*+``, ``++``): the regex engine keeps no state per
# character or escape it repeats over, so a string of 10 MB is matched in milliseconds and
# no memory, where a plain ``(?:[^"\\]|\\.)*`` took a second and a gigabyte.
_TOKEN: Final = re.compile(
    r"""
    (?:[\s,]++|;[^\n]*+)*+
    (?:
      (?P<str>"[^"\\]*+(?:\\.[^"\\]*+)*+")
    | (?P<open>\#\{|[\[({])
    | (?P<close>[\])}])
    | (?P<discard>\#_)
    | (?P<tag>\#[A-Za-z][^\s,\[\](){}"]*)
    | (?P<char>\\(?:newline|space|tab|return|u[0-9a-fA-F]{4}|.))
    | (?P<atom>[^\s,\[\](){}";]++)
    | (?P<end>\Z)
    )
    """,
    re.VERBOSE | re.DOTALL,
)
_SKIP: Final = re.compile(r"(?:[\s,]++|;[^\n]*+)*+")
"""What ``_TOKEN`` skips before a token: whitespace, commas and comments."""
_INT: Final = re.compile(r"[+-]?\d+N?")
_FLOAT: Final = re.compile(r"[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?M?")
_RATIO: Final = re.compile(r"[+-]?\d+/\d+")
_CHARS: Final = {"newline": "\n", "space": " ", "tab": "\t", "return": "\r"}
_ESCAPES: Final = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "b": "\b", "f": "\f"}
_CLOSER: Final = {"[": "]", "(": ")", "{": "}", "#{": "}"}
MAX_DEPTH: Final = 40
"""Collections nested deeper than this are refused (histories nest a few levels)."""
_HEX4: Final = re.compile(r"[0-9a-fA-F]{4}")


def loads(text: str) -> Any:
    """The single EDN value in ``text``; raises EdnError if there is not exactly one."""
    values = list(_values(text, unwrap=False))
    if not values:
        raise EdnError("no EDN value found (empty input)", 1)
    if len(values) > 1:
        raise EdnError("more than one top-level value; expected exactly one", values[1][1])
    return values[0][0]


POLL_EVERY: Final = 4096
"""Tokens read between two calls of ``iter_elements``' ``poll``."""


def iter_elements(text: str, poll: Callable[[], None] | None = None) -> Iterator[tuple[Any, int]]:
    """Each value with the line it starts on, for the two shapes history files take.

    If the text is one top-level vector or list, its elements are yielded (a Knossos
    history); otherwise each top-level value is (one map per line, as in ``history.edn``).
    ``poll`` is called every ``POLL_EVERY`` tokens (a value of millions of them is read
    within the check's budget, which ``poll`` looks at).
    """
    return _values(text, unwrap=True, poll=poll)


class _Lines:
    """Line numbers of text offsets, computed only when asked (for messages)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts: list[int] | None = None

    def __call__(self, pos: int) -> int:
        if self._starts is None:
            self._starts = [m.end() for m in re.finditer("\n", self.text)]
        return bisect_right(self._starts, pos) + 1


def _values(
    text: str, unwrap: bool, poll: Callable[[], None] | None = None
) -> Iterator[tuple[Any, int]]:
    """Top-level values with their line; with ``unwrap``, a single top-level vector or list
    yields its elements instead.

    One regex pass over the text and an explicit stack: no recursion, no per-character
    Python work. Frames are ``[opener, items, start offset, pending tags/discards]``.
    """
    line_of = _Lines(text)
    stack: list[list[Any]] = []
    emit_depth = 0  # values completed at this depth are yielded
    wrapped = False  # the single top-level collection has been seen and closed
    discard = 0  # pending #_ at the current depth
    pos = 0
    match = _TOKEN.match
    tokens = 0
    while True:
        tokens += 1
        if poll is not None and not tokens % POLL_EVERY:
            poll()
        m = match(text, pos)
        if m is None:
            skipped = _SKIP.match(text, pos)
            pos = pos if skipped is None else skipped.end()
            raise EdnError(f"unexpected character {text[pos]!r}", line_of(pos))
        kind = m.lastgroup or "end"
        if kind == "end":
            break
        start = m.start(kind)
        pos = m.end()
        if kind == "tag":
            continue  # a tagged literal reads as its value
        if kind == "discard":
            discard += 1
            continue
        tok = m.group(kind)
        if kind == "open":
            if unwrap and not stack and emit_depth == 0 and not wrapped and tok in "[(":
                emit_depth = 1
            if len(stack) >= MAX_DEPTH:
                raise EdnError(f"collections nested more than {MAX_DEPTH} deep", line_of(start))
            stack.append([tok, [], start, discard])
            discard = 0
            continue
        if kind == "close":
            if not stack:
                raise EdnError(f"unexpected {tok!r} with no collection open", line_of(start))
            opener, items, ostart, discard = stack.pop()
            if _CLOSER[opener] != tok:
                raise EdnError(
                    f"{opener!r} opened on line {line_of(ostart)} closed by {tok!r}",
                    line_of(start),
                )
            if emit_depth == 1 and not stack:
                wrapped = True
                emit_depth = -1  # anything after the history vector is an error
                continue
            value = _build(opener, items, line_of, ostart)
            start = ostart
        elif kind == "str":
            value = _unescape(tok[1:-1], line_of, start)
        elif kind == "char":
            body = tok[1:]
            value = _CHARS.get(body) or (
                _code_point(body[1:], line_of, start) if len(body) == 5 else body
            )
        else:
            value = _atom(tok, line_of, start)
        if discard:
            discard -= 1
            continue
        if wrapped:
            raise EdnError("unexpected text after the history vector", line_of(start))
        if len(stack) == emit_depth:
            yield value, line_of(start)
        else:
            stack[-1][1].append(value)
    if stack:
        opener, _, ostart, _ = stack[-1]
        raise EdnError(f"{opener!r} opened here is never closed", line_of(ostart))


def _build(opener: str, items: list[Any], line_of: _Lines, start: int) -> Any:
    if opener == "{":
        if len(items) % 2:
            raise EdnError("a map needs an even number of forms (key value pairs)", line_of(start))
        keys = [_hashable(k) if isinstance(k, (list, dict)) else k for k in items[::2]]
        return dict(zip(keys, items[1::2], strict=True))
    if opener == "#{":
        return frozenset(_hashable(v) for v in items)
    return items


def _hashable(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _hashable(v)) for k, v in value.items())
    return value


def _atom(tok: str, line_of: _Lines, pos: int) -> Any:
    if tok[0] == ":":
        if len(tok) == 1:
            raise EdnError("a lone ':' is not a keyword", line_of(pos))
        return tok[1:]
    if tok == "nil":
        return None
    if tok == "true":
        return True
    if tok == "false":
        return False
    if _INT.fullmatch(tok):
        if len(tok) > MAX_DIGITS:
            raise EdnError(f"an integer of {len(tok)} digits, beyond 64 bits", line_of(pos))
        return int(tok.rstrip("N"))
    if _FLOAT.fullmatch(tok):
        x = float(tok.rstrip("M"))
        if not math.isfinite(x):
            raise EdnError(f"{tok[:30]!r} is too large for a number", line_of(pos))
        return x
    if _RATIO.fullmatch(tok):
        num, den = tok.split("/")
        if len(tok) > 2 * MAX_DIGITS or not int(den):
            raise EdnError(f"{tok[:30]!r} is not a ratio that can be read", line_of(pos))
        return int(num) / int(den)
    if tok[0].isdigit() or (tok[0] in "+-" and tok[1:2].isdigit()):
        raise EdnError(f"{tok[:30]!r} is not a number", line_of(pos))
    return Symbol(tok)  # a symbol: read as its name


def _code_point(hex4: str, line_of: _Lines, pos: int) -> str:
    """The character of a ``\\uXXXX`` escape; a lone surrogate is not text."""
    if not _HEX4.fullmatch(hex4):
        raise EdnError(f"'\\u{hex4}' is not a unicode escape", line_of(pos))
    c = int(hex4, 16)
    if 0xD800 <= c <= 0xDFFF:
        raise EdnError(f"'\\u{hex4}' is half a character (a surrogate)", line_of(pos))
    return chr(c)


def _unescape(body: str, line_of: _Lines, pos: int) -> str:
    """The string a token's body stands for: the text between escapes taken whole (a
    huge value costs its size, not a list entry per character)."""
    if "\\" not in body:
        return body
    out: list[str] = []
    i = 0
    while True:
        j = body.find("\\", i)
        if j < 0:
            out.append(body[i:])
            return "".join(out)
        out.append(body[i:j])
        nxt = body[j + 1]  # the token's regex puts a character after every backslash
        if nxt == "u":
            out.append(_code_point(body[j + 2 : j + 6], line_of, pos))
            i = j + 6
        elif nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i = j + 2
        else:
            raise EdnError(f"unknown string escape '\\{nxt}'", line_of(pos))
