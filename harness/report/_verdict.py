"""Verdicts in words: what a reader must see first, pass or fail and why.

Works on the plain result dicts of ``results.json``, whatever the checker: an invalid
result is said by its first named anomaly's sentence (``checkers.anomalies``) and explained
by its ``violations`` (mutual exclusion) or its counterexample's ``sentences``
(linearizability); anything else by its summary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from checkers.anomalies import KEY
from checkers.result import INTERRUPTED, Validity
from harness.report._runs import NOT_APPLICABLE, verdict_word


@dataclass(frozen=True, slots=True)
class CheckerVerdict:
    """One checker's verdict: ``sentence`` says it in one line (for an invalid result, the
    explanation of its first violation), ``explanation`` holds the paragraphs explaining
    each violation (empty for a valid result), ``context`` the checker's own summary line
    when the sentence does not already say it (counts: holdings, writes, overlaps)."""

    checker: str
    valid: Validity
    sentence: str
    explanation: tuple[str, ...]
    context: str = ""
    applicable: bool = True
    """False for a checker that had nothing to judge (left out of the run's verdict)."""

    @property
    def word(self) -> str:
        return verdict_word(self.valid) if self.applicable else NOT_APPLICABLE


def checker_verdicts(results: dict[str, Any] | None) -> list[CheckerVerdict]:
    """Every checker's verdict, the failing ones first (then unknown, then valid)."""
    if not results:
        return []
    out = [_verdict(name, r) for name, r in (results.get("checkers") or {}).items()]
    order = {"invalid": 0, "unknown": 1, "valid": 2}
    return sorted(out, key=lambda v: order.get(v.word, 3))


def headline(results: dict[str, Any] | None) -> str:
    """One sentence for the whole run: the verdict and the first reason for it."""
    if results is None:
        return "Not checked: this run has no results.json; run `harness check RUN_DIR`."
    valid = results.get("valid")
    verdicts = checker_verdicts(results)
    stop = results.get("interrupted")
    if isinstance(stop, dict) and results.get("verdict") == INTERRUPTED:
        text = str(stop.get("text") or INTERRUPTED)
        return f"{text[:1].upper()}{text[1:]}: no violation in what was recorded."
    if valid is True:
        return f"Valid: {verdicts[0].checker}: {verdicts[0].sentence}" if verdicts else "Valid."
    if not verdicts:
        return f"{verdict_word(valid).capitalize()}: no checker result was recorded."
    first = verdicts[0]
    lead = "Invalid" if valid is False else "Unknown"
    return f"{lead}: {first.checker}: {first.sentence}"


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def first_sentence(text: str) -> tuple[str, str]:
    """The first sentence and the rest (a period inside a number ends nothing)."""
    parts = _SENTENCE_END.split(text, maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _verdict(name: str, r: dict[str, Any]) -> CheckerVerdict:
    valid: Validity = r.get("valid", "unknown")
    if r.get("applicable") is False:
        return CheckerVerdict(
            name, valid, str(r.get("summary") or NOT_APPLICABLE), (), applicable=False
        )
    summary = str(r.get("summary") or "").strip()
    paragraphs = summary.split("\n\n")
    head = paragraphs[0]
    if valid is False:
        explanation = _explanation(r)
        named = r.get(KEY) or []
        if named:  # the named anomaly first; the summary's counts under it
            sentence = str(named[0].get("sentence", ""))
            if head == sentence:
                head = paragraphs[1] if len(paragraphs) > 1 else ""
            context = "" if sentence.startswith(head) else head
            return CheckerVerdict(name, valid, sentence, tuple(explanation or [sentence]), context)
        if explanation:
            context = "" if head and explanation[0].startswith(head) else head
            return CheckerVerdict(name, valid, explanation[0], tuple(explanation), context)
    reason = r.get("reason")
    if valid not in (True, False) and reason and str(reason) not in head:
        head = f"{head} ({reason})" if head else str(reason)
    return CheckerVerdict(name, valid, head or verdict_word(valid), ())


def _explanation(r: dict[str, Any]) -> list[str]:
    violations = r.get("violations")
    if violations:
        return [str(v) for v in violations]
    cx = r.get("counterexample")
    if isinstance(cx, dict) and cx.get("sentences"):
        return [" ".join(str(s) for s in cx["sentences"])]
    return []
