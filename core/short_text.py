"""Numbers as short text, the same in the report, the index, the matrix, JUnit and the
sections each workload declares for the report (``Workload.sections``)."""

from __future__ import annotations

DASH = "\u2013"  # an en dash: "no value"


def seconds(ns: int | float | None, digits: int = 3) -> str:
    """A run-clock time or a duration given in ns, in seconds."""
    return DASH if ns is None else f"{ns / 1e9:.{digits}f} s"


def secs(s: float | None, digits: int = 3) -> str:
    """A duration given in seconds."""
    return DASH if s is None else f"{s:.{digits}f} s"


def ms(s: float | None) -> str:
    """A duration given in seconds, in milliseconds."""
    if s is None:
        return DASH
    return f"{s * 1000:.1f} ms" if s < 0.1 else f"{s * 1000:.0f} ms"


def pct(x: float | None) -> str:
    """A fraction as a percentage."""
    return DASH if x is None else f"{x * 100:.1f}%"
