"""Small helpers the checkers share to put times and counts into plain words.

Every time in a run's records is in nanoseconds on the run clock; reports speak seconds.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

NS: Final = 1_000_000_000


def secs(ns: int | float | None, digits: int = 3) -> str:
    """``12.345 s`` for a time or duration in ns; ``?`` when unknown."""
    return "?" if ns is None else f"{ns / NS:.{digits}f} s"


def seconds(ns: int | float | None) -> float | None:
    """A duration in ns as seconds (rounded to the microsecond) for JSON, None stays None."""
    return None if ns is None else round(ns / NS, 6)


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 write``, ``3 writes`` (``many`` for irregular plurals)."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def article(word: str) -> str:
    """``a token``, ``an epoch``."""
    return f"{'an' if word[:1].lower() in 'aeiou' else 'a'} {word}"


def listing(items: Iterable[Any], limit: int = 4) -> str:
    """``a, b and c``; longer lists end with ``and N more``."""
    xs = [str(x) for x in items]
    if len(xs) > limit:
        xs = [*xs[:limit], f"{len(xs) - limit} more"]
    if len(xs) <= 1:
        return "".join(xs)
    return ", ".join(xs[:-1]) + " and " + xs[-1]


def span(values: Iterable[Any]) -> str:
    """``7`` or ``8-22``: the range of some numbers (tokens, epochs); ``?`` when none."""
    xs = sorted(v for v in values if isinstance(v, (int, float)))
    if not xs:
        return "?"
    return str(xs[0]) if xs[0] == xs[-1] else f"{xs[0]}-{xs[-1]}"
