"""The results index: one static page listing every run below a results folder.

Newest first, each run with its verdict, the sentence saying why, target, workload,
faults, date, and links to its report and files. Links are relative, so the folder can be
moved, archived by CI or served by ``harness serve`` as it is.
"""

from __future__ import annotations

from pathlib import Path

from checkers.result import INTERRUPTED
from core.html import esc, table, tag
from core.short_text import DASH
from core.store import HISTORY_FILE, RESULTS_FILE, TEST_FILE
from core.writes import write_text
from harness.report._html import page, word_badge
from harness.report._page import REPORT_FILE
from harness.report._runs import RunInfo, find_run_dirs, load_run
from harness.report._verdict import checker_verdicts, first_sentence, headline

INDEX_FILE = "index.html"
_FILES = (TEST_FILE, HISTORY_FILE, RESULTS_FILE, "resource.jsonl", "events.jsonl", "harness.log")
_HEADERS = ("verdict", "run", "target", "workload", "faults", "date", "events", "why", "files")


def write_index(results_root: Path) -> Path:
    """Write ``results_root/index.html`` listing every run below it; return its path.
    A run without ``report.html`` links to its folder instead (``harness report RUN_DIR``
    writes one). Written whole, never through a link (``core.writes``)."""
    results_root = Path(results_root)
    return write_text(results_root / INDEX_FILE, render_index(results_root))


def render_index(results_root: Path, *, reports_on_demand: bool = False) -> str:
    """The index page as text. ``reports_on_demand``: link every run's ``report.html``
    even when it does not exist yet (``harness serve`` writes it when asked for)."""
    root = Path(results_root).resolve()
    runs = [load_run(d) for d in find_run_dirs([root])]
    runs.sort(key=lambda r: (r.date.timestamp() if r.date else 0.0, str(r.path)), reverse=True)
    words = ("invalid", INTERRUPTED, "unknown", "valid")
    counts = {w: sum(r.verdict == w for r in runs) for w in words}
    summary = ", ".join(f"{n} {w}" for w, n in counts.items() if n) or "no run yet"
    rows = [_row(r, root, reports_on_demand) for r in runs]
    body = (
        tag(
            "header",
            tag("h1", "Test results")
            + tag("p", esc(f"{len(runs)} runs in {root}: {summary}."), class_="muted"),
            class_="page",
        )
        + "<main>"
        + tag(
            "div",
            '<input id="filter" type="search" placeholder="filter: invalid etcd '
            'partition…" autofocus>' + tag("span", "", id="shown", class_="muted"),
            class_="filter",
        )
        + _table(rows)
        + "</main>"
    )
    return page("Test results", body, styles=("base.css", "index.css"), scripts=("index.js",))


def _table(rows: list[tuple[str, list[str]]]) -> str:
    """The runs table; each row carries its verdict as a class."""
    return table(
        _HEADERS, [cells for _, cells in rows], id_="runs", row_classes=[cls for cls, _ in rows]
    )


def _row(run: RunInfo, root: Path, on_demand: bool) -> tuple[str, list[str]]:
    rel = _relative(run.path, root)
    has_report = on_demand or (run.path / REPORT_FILE).exists()
    link = tag("a", esc(run.name), href=f"{rel}/{REPORT_FILE}" if has_report else f"{rel}/")
    files = " ".join(tag("a", esc(f), href=f"{rel}/{f}") for f in _FILES if (run.path / f).exists())
    return run.verdict.replace(" ", "-"), [
        word_badge(run.verdict),
        link + tag("div", esc(rel), class_="muted"),
        esc(run.target_label),
        esc(run.workload),
        esc(run.fault_label),
        esc(run.when or DASH),
        esc(run.ops if run.ops is not None else DASH),
        tag("div", _why(run), class_="why"),
        files,
    ]


WHY_CHARS = 180
"""The longest "why" shown whole; a longer one is cut at a word, its whole text on hover."""


def _why(run: RunInfo) -> str:
    """Why the run got its verdict, for the index: the deciding checker (the verdict
    column already says pass or fail) and its sentence's first clause, cut short when
    long (the whole first sentence on hover; the report has the rest)."""
    verdicts = checker_verdicts(run.results)
    if verdicts and run.verdict != INTERRUPTED:
        who, text = verdicts[0].checker, verdicts[0].sentence
    else:
        who, text = "", headline(run.results)
    lead, rest = first_sentence(text)
    if run.interrupted is not None and run.verdict != INTERRUPTED:
        lead = f"{lead} ({run.interrupted})"
    shown = lead if len(lead) <= WHY_CHARS else lead[:WHY_CHARS].rsplit(" ", 1)[0] + " …"
    if rest and shown == lead:
        shown += " …"
    return (tag("b", esc(who)) + " " if who else "") + tag(
        "span", esc(shown), title=lead if shown != lead else None
    )


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root).as_posix()
    except ValueError:
        return path.resolve().as_uri()
