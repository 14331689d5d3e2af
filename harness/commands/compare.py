"""``harness compare``: a matrix of targets x faults over several runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness.commands.args import (
    path,
    path_option,
    writable_file,
)

if TYPE_CHECKING:
    from harness.report import Matrix
    from harness.terminal import Terminal


def cmd_compare(args: argparse.Namespace, term: Terminal) -> int:
    from harness.report import compare, write_matrix_html

    for flag, out in (("--html", args.html), ("--junit", args.junit)):
        if out is not None:
            writable_file(out, flag)
    matrix = compare([Path(p) for p in args.paths])
    if args.json:
        term.answer(matrix.to_dict())
    else:
        _print_matrix(matrix, term)
    said = term.err if args.json else term.out  # stdout holds the JSON alone
    if args.html:
        said.print(f"matrix: {write_matrix_html(matrix, Path(args.html))}")
    if args.junit:
        from harness.report import write_junit

        said.print(f"junit: {write_junit([Path(p) for p in args.paths], Path(args.junit))}")
    return 0


def _print_matrix(matrix: Matrix, term: Terminal) -> None:
    """The matrix as a table, and under it the tables a workload shows across runs
    (``Workload.across``: the herd effect's) when runs measured them."""
    from harness.report import across_markdown, render_matrix_table

    term.out.print(render_matrix_table(matrix))
    across = across_markdown(m.run for c in matrix.cells.values() for m in c.runs)
    if across:
        term.out.print(across, markup=False, soft_wrap=True)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    cp = sub.add_parser(
        "compare",
        help="a matrix of targets x faults over several runs",
        description="Compare runs (or folders of runs, e.g. a suite's): "
        "violations, stale writes, danger window, handover delay, "
        "latency quantiles and availability per target and fault.",
    )
    cp.add_argument("paths", nargs="+", metavar="PATH", type=path("PATH"))
    path_option(cp, "--html", "also write the matrix as an HTML file (default: none)")
    path_option(cp, "--junit", "also write JUnit XML of these runs (default: none)")
    cp.add_argument(
        "--json",
        action="store_true",
        help="print the matrix as one JSON object instead of the table",
    )
    cp.set_defaults(fn=cmd_compare)
