"""The report's plain sections: the verdict banner, the configuration and the numbers.

The banner is what a reader sees first: pass or fail in one word, the sentence that
explains the anomaly, and each checker's verdict in a sentence.
"""

from __future__ import annotations

import shlex
from typing import Any

from checkers.attribution import attribution_line
from checkers.windows import FaultWindow
from core.html import definitions, esc, tag
from core.short_text import DASH, ms, pct
from harness.report._html import word_badge
from harness.report._metrics import AVAILABLE_MEANS, QUANTILES, OpStats
from harness.report._runs import INTERRUPTED, RunInfo
from harness.report._verdict import CheckerVerdict, checker_verdicts, first_sentence, headline
from nemesis.fault_registry import FAULTS
from workloads.workload_registry import WORKLOADS

_WORDS = {True: "PASS", False: "FAIL"}


def banner(run: RunInfo, line: str | None = None) -> str:
    """The verdict, why, and each checker's verdict in a sentence, and each record file
    changed since the run (``changed_since_run``); under them ``line`` (what was
    checked: the run's configuration in one line by default)."""
    valid = run.valid
    word = _WORDS[valid] if isinstance(valid, bool) else "NO VERDICT"
    verdicts = checker_verdicts(run.results)
    items = "".join(_checker_item(v) for v in verdicts)
    if not verdicts:
        items = tag("li", esc(headline(run.results)), class_="sentence")
    if run.interrupted is not None:
        word = "INTERRUPTED" if run.verdict == INTERRUPTED else word
        items = _interrupted_item(run) + items
    blamed = (run.results or {}).get("attribution")
    if isinstance(blamed, dict):  # whose doing the first violation was (checkers.attribution)
        said = f" Its documentation: {blamed['promise']}." if blamed.get("promise") else ""
        items += tag("li", esc(f"Whose: {attribution_line(blamed)}.{said}"), class_="context")
    for changed in (run.results or {}).get("changed_since_run") or ():
        items += tag("li", esc(f"Not as the run left it: {changed}."), class_="context")
    more = sum(max(0, len(v.explanation) - 1) for v in verdicts)
    if more:
        items += tag(
            "li", esc(f"… and {more} more violation(s), explained below."), class_="context"
        )
    cls = "verdict " + run.verdict.replace(" ", "-")
    return tag(
        "header",
        tag("div", f"{esc(word)} {word_badge(run.verdict)}", class_="verdict-word", id="verdict")
        + tag("ul", items, class_="checkers")
        + tag("p", esc(one_line_config(run) if line is None else line), class_="config-line"),
        class_=cls,
    )


def banner_sentences(run: RunInfo) -> frozenset[str]:
    """What the banner says, each checker's sentence and context: the sections below
    do not say it again."""
    return frozenset(
        text for v in checker_verdicts(run.results) for text in (v.sentence, v.context) if text
    )


def _interrupted_item(run: RunInfo) -> str:
    """How the run was cut short, and what that means for its verdict."""
    what = (
        "no violation in what was recorded, but the run did not finish: it proves less "
        "than it set out to"
        if run.verdict == INTERRUPTED
        else "the violation is in what was recorded"
    )
    return tag("li", esc(f"The run was {run.interrupted}: {what}."), class_="sentence interrupted")


def _checker_item(v: CheckerVerdict) -> str:
    """A checker's verdict: badge, name, its sentence; its summary line under it."""
    cls = "sentence failed" if v.valid is False else "sentence"
    lead, rest = first_sentence(v.sentence)
    name = tag("b", esc(v.checker))
    text = f"{word_badge(v.word)} {name}: {tag('span', esc(lead), class_='lead')}"
    if rest:
        text += " " + tag("span", esc(rest), class_="rest")
    if v.context:
        text += tag("div", esc(v.context), class_="context")
    return tag("li", text, class_=cls)


def one_line_config(run: RunInfo) -> str:
    """``sim · lock · client-pause · seed 42 · 2026-01-02 10:00:00 UTC · name``."""
    parts = [run.target_label, run.workload, run.fault_label]
    if run.seed is not None:
        parts.append(f"seed {run.seed}")
    if run.when:
        parts.append(run.when)
    parts.append(run.name)
    return " · ".join(parts)


def _fault_options(name: str) -> tuple[str, ...]:
    """The options that shape a fault (none for one the registry lacks)."""
    fault = FAULTS.get(name)
    return fault.options if fault is not None else ()


def _workload_options(name: str) -> tuple[str, ...]:
    """The options that shape a workload's runs (none for one the registry lacks)."""
    workload = WORKLOADS.get(name)
    return workload.options if workload is not None else ()


def configuration(run: RunInfo) -> str:
    """Target, versions, workload, faults and their parameters, seed, the command."""
    o = run.options
    items: list[tuple[str, str]] = [
        ("target", esc(run.target_label)),
        (
            "versions",
            esc(", ".join(f"{k} {v}" for k, v in (run.test.get("versions") or {}).items()) or DASH),
        ),
        ("nodes", esc(", ".join(map(str, run.test.get("nodes") or ())) or DASH)),
        ("workload", esc(run.workload) + _params(o, _workload_options(run.workload))),
        (
            "faults",
            esc(run.fault_label) + "".join(_params(o, _fault_options(f)) for f in run.faults),
        ),
        ("seed", esc(run.seed)),
        (
            "clients",
            esc(o.get("concurrency", DASH))
            + _params(o, ("time_limit", "recovery_time", "op_timeout", "rate")),
        ),
        ("status", esc(run.test.get("status", DASH))),
    ]
    if o.get("sim_bugs"):
        items.append(("injected bugs", esc(", ".join(o["sim_bugs"]))))
    if run.test.get("command"):  # every option, the seed included: it runs the same again
        items.append(("command", tag("code", esc(str(run.test["command"])))))
    elif run.test.get("argv"):
        items.append(("command", tag("code", esc(shlex.join(map(str, run.test["argv"]))))))
    if run.test.get("replay_of"):
        items.append(("replay of", tag("code", esc(run.test["replay_of"]))))
    items.append(("run directory", tag("code", esc(run.path))))
    return definitions(items)


def numbers(stats: OpStats, windows: list[FaultWindow]) -> str:
    """Operation counts, latency quantiles, availability in and out of faults."""
    c = stats.counts
    total = sum(c.values())
    quantiles = ", ".join(f"p{int(q * 100)} {ms(stats.latency_quantile(q))}" for q in QUANTILES)
    items = [
        (
            "client operations",
            esc(
                f"{total}: {c.get('ok', 0)} ok, {c.get('fail', 0)} fail"
                + (f" ({stats.refused} of them refused by design)" if stats.refused else "")
                + f", {c.get('info', 0)} info, {c.get('open', 0)} never returned"
            ),
        ),
        ("latency of ok operations", esc(quantiles)),
        ("availability outside faults", esc(pct(stats.availability_clear))),
        ("availability during faults", esc(pct(stats.availability_in_fault))),
        ("available means", esc(AVAILABLE_MEANS)),
        (
            "fault windows",
            esc(
                "; ".join(
                    w.describe() + ("" if w.ok else " (not shown to take effect)") for w in windows
                )
                or "none"
            ),
        ),
    ]
    return definitions(items)


def _params(options: dict[str, Any], names: tuple[str, ...]) -> str:
    shown = [
        f"{n.replace('_', '-')} {_value(options[n])}" for n in names if options.get(n) is not None
    ]
    return tag("span", esc(" · " + ", ".join(shown)), class_="params") if shown else ""


def _value(v: Any) -> str:
    if v is True:
        return "on"
    if v is False:
        return "off"
    return str(v)
