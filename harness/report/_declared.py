"""What the workloads declare for the report, loaded through their registry: the sections
of a run's page (``Workload.sections``) and the tables across runs (``Workload.across``).

The report names no workload: it asks the registry for the run's workload (by the name its
test.json records, an older name too) and imports what it declares only to draw it
(``workloads.section``). A run of a workload the registry no longer has gets no section.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from checkers.record import RunRecord
from checkers.windows import FaultWindow
from clusters.spec import Lazy
from core.html import tag
from harness.report._html import page
from harness.report._runs import RunInfo
from workloads.section import Across, Measured, RunView, Section
from workloads.workload_registry import OLD_NAMES, WORKLOADS


def run_sections(run: RunInfo, record: RunRecord, windows: Sequence[FaultWindow] | None) -> str:
    """The sections the run's workload declares, in its order ('' for each that has
    nothing of this run); ``windows`` None: the history is malformed."""
    name = run.workload
    workload = WORKLOADS.get(OLD_NAMES.get(name, name))
    if workload is None:
        return ""
    view = RunView(record, run.results or {}, windows)
    drawn: Iterable[Section] = (Lazy(path).load() for path in workload.sections)
    return "".join(section(view) for section in drawn)


def _across() -> list[Across]:
    """What every workload that declares one shows over many runs, in registry order."""
    return [Lazy(w.across).load() for w in WORKLOADS.values() if w.across is not None]


def _measured(runs: Iterable[RunInfo]) -> list[Measured]:
    return [Measured(r.target_label, r.verdict, r.checkers) for r in runs]


def across_markdown(runs: Iterable[RunInfo]) -> str:
    """Each workload's tables over ``runs`` as Markdown under its title ('' when no run
    measured any): ``harness compare``'s lines under its matrix, a sweep's output."""
    measured = _measured(runs)
    parts = ((a.title, a.markdown(measured)) for a in _across())
    return "\n\n".join(f"{title}:\n{text}" for title, text in parts if text)


def across_html(runs: Iterable[RunInfo]) -> str:
    """Each workload's section over ``runs``, for a page over many runs ('' for none)."""
    measured = _measured(runs)
    return "".join(a.html(measured) for a in _across())


def across_page(runs: Iterable[RunInfo], title: str = "Across runs") -> str:
    """A page of its own for ``across_html`` (a sweep's page)."""
    body = across_html(runs) or tag("p", "No run measured anything a workload shows.")
    return page(title, body, styles=("base.css",))
