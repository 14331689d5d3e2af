"""``harness report``: a run's report (re)written."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_report(args: argparse.Namespace, term: Terminal) -> int:
    from harness.analysis import report_run
    from harness.report import write_report

    code = report_run(args.run_dir, term.out)
    term.out.print(f"report: {write_report(Path(args.run_dir))}")
    return code


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    rp = sub.add_parser("report", help="(re)write a run's report")
    rp.add_argument("run_dir")
    rp.set_defaults(fn=cmd_report)
