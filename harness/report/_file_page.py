"""``render_file_report``: the report page of a history file, as porcupine's ``Visualize``
gives one for any history: ``harness check FILE --html OUT``.

What a run's report shows of its linearizability check, from the same sections: the
verdict banner (``_sections.banner``), the timeline per key with clients as lanes, opened
on the counterexample with the longest partial linearization drawn through its
linearization points (``_file_timeline``), the counterexample with the longest partial
linearizations step by step and the model's state (``_explain``). Then what was checked:
the file, its format and model, its keys; for a Jepsen store directory, Jepsen's own
verdict (``results.edn``) beside ours.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

from checkers.result import CheckResult, verdict_word
from core.formats.jepsen_store import JepsenVerdict
from core.history import History, MalformedHistory
from core.html import definitions, esc, table, tag
from core.short_text import DASH, ms
from harness.report._explain import explanations
from harness.report._file_timeline import file_timeline, positional
from harness.report._html import page
from harness.report._metrics import QUANTILES, OpStats, op_stats
from harness.report._out import write_page
from harness.report._page import SCRIPTS, timeline_figure
from harness.report._runs import RunInfo
from harness.report._sections import banner, banner_sentences
from harness.report._shrunk import shrunk_section
from harness.report._timeline import key_text

EVENTS_SCRIPT = "events.js"
_KEY_HEADERS = ("key", "operations", "clients", "")


class FileCheck(NamedTuple):
    """A history file checked for linearizability: what its report shows. ``path`` is what
    was named (the file, or a Jepsen store directory: then ``jepsen`` is its verdict)."""

    path: Path
    history: History
    format: str
    model: str
    result: CheckResult
    notes: tuple[str, ...] = ()
    jepsen: JepsenVerdict | None = None


def write_file_report(check: FileCheck, out: Path) -> Path:
    """Write the report page of ``check`` to ``out`` (atomically, never through a link)."""
    return write_page(out, render_file_report(check))


def render_file_report(check: FileCheck) -> str:
    """The report page of a checked history file, as text."""
    r = check.result
    results: dict[str, Any] = {
        "valid": r.valid,
        "verdict": verdict_word(r.valid),
        "ops": len(check.history),
        "checkers": {r.checker: r.to_dict()},
    }
    run = RunInfo(check.path, check.path.name, results=results)
    n = len(check.history)
    line = f"{check.path} · {check.format} · model {check.model} · {n} event{'s' * (n != 1)}"
    scripts: tuple[str, ...] = SCRIPTS
    data: dict[str, Any] = {"timeline": None}
    cx = results["checkers"][r.checker].get("counterexample") or {}
    try:
        timeline = file_timeline(check.history, results)
        data["timeline"] = timeline
        figure = timeline_figure(timeline)
        if timeline["unit"] == "event":  # order only: times in events, no time plots
            scripts = (SCRIPTS[0], EVENTS_SCRIPT, *SCRIPTS[1:])
        checked = _checked(check, op_stats(check.history, []))
        keys = _keys(check.history, cx.get("partition"))
    except MalformedHistory as e:
        figure = tag(
            "p", esc(f"The history is malformed, so no timeline is drawn: {e}"), id="timeline-error"
        )
        checked, keys = _checked(check, None), ""
    body = (
        banner(run, line)
        + "<main>"
        + (_jepsen(check.jepsen, r) if check.jepsen is not None else "")
        + shrunk_section(results)
        + figure
        + explanations(results, banner_sentences(run))
        + tag("h2", "What was checked")
        + checked
        + keys
        + "</main>"
        + '<div id="tooltip" hidden></div>'
    )
    title = f"{verdict_word(r.valid).upper()}: {check.path.name}"
    return page(title, body, styles=("base.css", "report.css"), scripts=scripts, data=data)


def _jepsen(jepsen: JepsenVerdict, ours: CheckResult) -> str:
    """Jepsen's verdict beside ours, and why they may differ."""
    said = jepsen.said
    if jepsen.checkers:
        said += " (" + ", ".join(f"{name}: {word}" for name, word in jepsen.checkers) + ")"
    words = (
        f"Ours: {verdict_word(ours.valid)}, for the linearizability of the store's history "
        f"alone; Jepsen's composes every checker its test ran."
    )
    return tag(
        "section",
        tag("h2", "Jepsen's verdict")
        + tag("p", tag("b", esc(said)), id="jepsen-said")
        + tag("p", esc(words), class_="muted"),
        id="jepsen",
    )


def _checked(check: FileCheck, stats: OpStats | None) -> str:
    """The file, its format, the model, the operations (``stats``; None: a malformed
    history) and the check's own numbers."""
    d = check.result.details
    items = [
        ("file", tag("code", esc(check.path))),
        ("format", esc(check.format)),
        ("model", esc(check.model)),
    ]
    if stats is not None:
        c = stats.counts
        said = (
            f"{sum(c.values())}: {c['ok']} ok, {c['fail']} fail, {c['info']} info, "
            f"{c['open']} never returned"
        )
        items.append(("client operations", esc(said)))
        if stats.latencies and not positional(check.history):
            quantiles = ", ".join(
                f"p{int(q * 100)} {ms(stats.latency_quantile(q))}" for q in QUANTILES
            )
            items.append(("latency of ok operations", esc(quantiles)))
    if "partitions" in d:
        checked = f"{d.get('partitions_checked', DASH)} of {d['partitions']}"
        items.append(("partitions checked", esc(checked)))
    if "verdict_s" in d:
        items.append(("time to the verdict", esc(ms(d["verdict_s"]))))
    if d.get("reason"):
        items.append(("why unknown", esc(d["reason"])))
    items += [("note", esc(note)) for note in check.notes]
    return definitions(items)


def _keys(history: History, culprit: Any) -> str:
    """Per key: its operations and clients, the counterexample's key marked; "" for a
    history of one key or none."""
    ops: Counter[str] = Counter()
    clients: dict[str, set[Any]] = {}
    for pair in history.pairs():
        key = pair.invoke.key
        if key is None or not pair.invoke.is_client:
            continue
        text = key_text(key)
        ops[text] += 1
        clients.setdefault(text, set()).add(pair.invoke.process)
    if len(ops) < 2:
        return ""
    mark = key_text(culprit) if culprit is not None else None
    rows = [
        [
            tag("code", esc(k)),
            esc(n),
            esc(len(clients[k])),
            tag("a", "the counterexample", href="#counterexample") if k == mark else "",
        ]
        for k, n in ops.items()
    ]
    return tag("h3", esc(f"Keys ({len(ops)})")) + table(_KEY_HEADERS, rows, "keys")
