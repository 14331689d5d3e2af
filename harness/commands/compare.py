"""``harness compare``: a matrix of targets x faults over several runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from harness.commands.args import (
    writable_file,
)

if TYPE_CHECKING:
    pass


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from harness.report import compare, render_matrix_table, write_matrix_html

    for flag, out in (("--html", args.html), ("--junit", args.junit)):
        if out is not None:
            writable_file(out, flag)
    matrix = compare([Path(p) for p in args.paths])
    console.print(render_matrix_table(matrix))
    from harness.report._herd import herd_points, markdown_tables

    herd = herd_points(m.run for c in matrix.cells.values() for m in c.runs)
    if herd:
        console.print(
            "Herd effect, per target:\n" + markdown_tables(herd), markup=False, soft_wrap=True
        )
    if args.html:
        console.print(f"matrix: {write_matrix_html(matrix, Path(args.html))}")
    if args.junit:
        from harness.report import write_junit

        console.print(f"junit: {write_junit([Path(p) for p in args.paths], Path(args.junit))}")
    return 0


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    cp = sub.add_parser(
        "compare",
        help="a matrix of targets x faults over several runs",
        description="Compare runs (or folders of runs, e.g. a suite's): "
        "violations, stale writes, danger window, handover delay, "
        "latency quantiles and availability per target and fault.",
    )
    cp.add_argument("paths", nargs="+", metavar="PATH")
    cp.add_argument(
        "--html", default=None, help="also write the matrix as an HTML file (default: none)"
    )
    cp.add_argument(
        "--junit", default=None, help="also write JUnit XML of these runs (default: none)"
    )
    cp.set_defaults(fn=cmd_compare)
