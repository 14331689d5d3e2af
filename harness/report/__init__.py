"""Reports of runs: a self-contained HTML page per run, an index of all runs, a comparison
matrix of targets and faults, JUnit XML for CI, and a small server to browse results.

- ``write_report(run_dir)``: ``run_dir/report.html`` (verdict, counterexample, timeline);
- ``write_file_report(check, out)``: the page of a checked history file (a ``FileCheck``),
  ``harness check FILE --html OUT``; ``report_targets`` says where each page goes;
- ``write_index(results_root)``: ``results_root/index.html`` listing every run;
- ``serve(results_root, host, port)``: browse the results, the index regenerated on ``/``;
- ``compare(paths)``: a ``Matrix`` of targets by faults, shown by ``render_matrix_table``
  (terminal) and ``write_matrix_html`` (a page);
- ``write_junit(runs, path)``: one JUnit testcase per run (``Case``), failing when its
  verdict differs from the expected one;
- for the commands beside the report (check, suite, compare): a run's verdict in one
  sentence (``headline``), the pages rendered for an answer (``render_report``,
  ``render_file_report``, ``write_page``, ``REPORT_FILE``), what the workloads show across
  runs (``across_markdown``, ``across_page``: ``Workload.across``); the runs below a folder
  (``find_run_dirs``, ``load_run``), for the scripts. Nothing outside this package imports
  its private modules (``tests/unit/test_report_surface.py``).

Imports are lazy: importing this package loads nothing but this file.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.report._compare import Matrix, compare, render_matrix_table
    from harness.report._declared import across_markdown, across_page
    from harness.report._file_page import FileCheck, render_file_report, write_file_report
    from harness.report._index import write_index
    from harness.report._junit import Case, write_junit
    from harness.report._matrix_page import write_matrix_html
    from harness.report._out import report_targets, write_page
    from harness.report._page import REPORT_FILE, render_report, write_report
    from harness.report._runs import find_run_dirs, load_run
    from harness.report._serve import serve
    from harness.report._verdict import headline

__all__ = [
    "Case",
    "FileCheck",
    "Matrix",
    "REPORT_FILE",
    "across_markdown",
    "across_page",
    "compare",
    "find_run_dirs",
    "headline",
    "load_run",
    "render_file_report",
    "render_matrix_table",
    "render_report",
    "report_targets",
    "serve",
    "write_file_report",
    "write_index",
    "write_junit",
    "write_matrix_html",
    "write_page",
    "write_report",
]

_HOMES = {
    "write_report": "harness.report._page",
    "render_report": "harness.report._page",
    "REPORT_FILE": "harness.report._page",
    "write_file_report": "harness.report._file_page",
    "render_file_report": "harness.report._file_page",
    "FileCheck": "harness.report._file_page",
    "report_targets": "harness.report._out",
    "write_page": "harness.report._out",
    "write_index": "harness.report._index",
    "write_matrix_html": "harness.report._matrix_page",
    "compare": "harness.report._compare",
    "Matrix": "harness.report._compare",
    "render_matrix_table": "harness.report._compare",
    "write_junit": "harness.report._junit",
    "Case": "harness.report._junit",
    "serve": "harness.report._serve",
    "headline": "harness.report._verdict",
    "across_markdown": "harness.report._declared",
    "across_page": "harness.report._declared",
    "find_run_dirs": "harness.report._runs",
    "load_run": "harness.report._runs",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'harness.report' has no attribute {name!r}")
    return getattr(import_module(home), name)
