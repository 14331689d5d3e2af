"""The comparison matrix as a self-contained page (``harness compare … --html OUT``)."""

from __future__ import annotations

import os
from pathlib import Path

from core.html import esc, tag
from core.short_text import DASH
from core.writes import write_text
from harness.report._compare import Cell, Matrix
from harness.report._declared import across_html
from harness.report._html import page
from harness.report._metrics import AVAILABLE_MEANS

_LINKED_RUNS = 6  # runs linked by name in a cell; more are counted


def write_matrix_html(matrix: Matrix, path: Path) -> Path:
    """Write the matrix page to ``path`` and return it. Runs link to their report (or
    folder) relative to the page. Written whole, never through a link (``core.writes``)."""
    path = Path(path)
    return write_text(path, render_matrix_html(matrix, path.parent))


def render_matrix_html(matrix: Matrix, base: Path) -> str:
    """The page as text; links are relative to the folder ``base``."""
    head = tag(
        "tr",
        tag("th", "target · workload \\ faults")
        + "".join(tag("th", esc(c)) for c in matrix.columns),
    )
    rows = []
    for r in matrix.rows:
        cells = [tag("th", esc(r), class_="row")]
        for c in matrix.columns:
            cell = matrix.cell(r, c)
            cells.append(_cell(cell, base) if cell else tag("td", DASH, class_="empty"))
        rows.append(tag("tr", "".join(cells)))
    body = (
        tag(
            "header",
            tag("h1", "Comparison: targets \u00d7 faults")
            + tag(
                "p",
                esc(
                    f"{matrix.runs} runs. Latency of ok operations; availability is "
                    f"{AVAILABLE_MEANS}, outside fault windows and during them."
                ),
                class_="muted",
            ),
            class_="page",
        )
        + "<main>"
        + tag("table", tag("thead", head) + tag("tbody", "".join(rows)), class_="matrix")
        + across_html(m.run for c in matrix.cells.values() for m in c.runs)
        + "</main>"
    )
    return page("Comparison", body, styles=("base.css", "index.css"))


def _cell(cell: Cell, base: Path) -> str:
    lines = []
    for label, value in cell.lines():
        if label == "verdict":
            lines.append(tag("b", esc(value)))
        else:
            lines.append(tag("span", esc(label + ": "), class_="muted") + esc(value))
    links = [
        tag("a", esc(m.run.path.name), href=_href(m.run.path, base))
        for m in cell.runs[:_LINKED_RUNS]
    ]
    if len(cell.runs) > _LINKED_RUNS:
        links.append(esc(f"and {len(cell.runs) - _LINKED_RUNS} more"))
    lines.append(tag("span", "runs: " + ", ".join(links), class_="runs"))
    return tag("td", "<br>".join(lines), class_=cell.verdict.replace(" ", "-"))


def _href(run_dir: Path, base: Path) -> str:
    target = run_dir / "report.html" if (run_dir / "report.html").exists() else run_dir
    try:
        return os.path.relpath(target, base.resolve())
    except ValueError:
        return target.resolve().as_uri()
