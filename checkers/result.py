"""Checker results and how they compose.

Validity is ``True``, ``False`` or ``"unknown"``. A checker that ran out of time or memory,
or that could not prove anything (no operation succeeded during a fault), says
``"unknown"``, never ``True``. Composition: invalid > unknown > valid.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

Validity = bool | Literal["unknown"]
UNKNOWN: Literal["unknown"] = "unknown"


@dataclass(frozen=True)
class CheckResult:
    """One checker's verdict, its plain-language summary and its details (JSON-able)."""

    checker: str
    valid: Validity
    summary: str = ""
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "checker": self.checker,
            "valid": self.valid,
            "summary": self.summary,
            **self.details,
        }


def worst(validities: Iterable[Validity]) -> Validity:
    """Compose validities: any False wins, then any unknown, else True (empty: True)."""
    seen_unknown = False
    for v in validities:
        if v is False:
            return False
        if v != True:  # noqa: E712 - "unknown" and anything odd
            seen_unknown = True
    return UNKNOWN if seen_unknown else True


def exit_code(valid: Validity) -> int:
    """Jepsen's exit codes: 0 valid, 1 invalid, 2 unknown."""
    if valid is True:
        return 0
    if valid is False:
        return 1
    return 2
