"""Checker results and how they compose.

Validity is ``True``, ``False`` or ``"unknown"``. A checker that ran out of time or memory,
or that could not prove anything (no operation succeeded during a fault), says
``"unknown"``, never ``True``. Composition: invalid > unknown > valid.

A result can also be *not applicable*: the checker has nothing to judge in this run (the
fencing checker on a lock that grants no tokens). It says so in its summary, keeps
``"unknown"`` as its validity, and is left out of the run's verdict (``overall``), which
then rests on the checkers that could judge; a run where none could is unknown.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import msgspec

Validity = bool | Literal["unknown"]
UNKNOWN: Literal["unknown"] = "unknown"
INTERRUPTED = "interrupted"
"""The verdict word of a run cut short (a signal, a killed harness) whose checks found no
violation in what was recorded: its validity is unknown, its exit code 2 (Jepsen has no
code for it). A cut-short run with a violation is invalid, as any other."""


class CheckResult(msgspec.Struct, frozen=True):
    """One checker's verdict, its plain-language summary and its details (JSON-able)."""

    checker: str
    valid: Validity
    summary: str = ""
    details: dict[str, Any] = msgspec.field(default_factory=dict)
    applicable: bool = True
    """False when the checker had nothing to judge; the run's verdict leaves it out."""

    def to_dict(self) -> dict[str, Any]:
        out = {"checker": self.checker, "valid": self.valid, "summary": self.summary}
        if not self.applicable:
            out["applicable"] = False
        return {**out, **self.details}


def worst(validities: Iterable[Validity]) -> Validity:
    """Compose validities: any False wins, then any unknown, else True (empty: True)."""
    seen_unknown = False
    for v in validities:
        if v is False:
            return False
        if v != True:  # noqa: E712 - "unknown" and anything odd
            seen_unknown = True
    return UNKNOWN if seen_unknown else True


def overall(results: Iterable[CheckResult]) -> Validity:
    """A run's verdict: the worst of its applicable results; unknown when none applies."""
    judged = [r.valid for r in results if r.applicable]
    return worst(judged) if judged else UNKNOWN


def verdict_word(valid: Validity) -> str:
    """``valid``, ``invalid`` or ``unknown``."""
    return "valid" if valid is True else "invalid" if valid is False else "unknown"


def exit_code(valid: Validity) -> int:
    """Jepsen's exit codes: 0 valid, 1 invalid, 2 unknown."""
    if valid is True:
        return 0
    if valid is False:
        return 1
    return 2
