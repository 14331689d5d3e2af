"""``harness report``: a run's report (re)written; a Jepsen store directory's written."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness.commands.args import UsageError, path

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_report(args: argparse.Namespace, term: Terminal) -> int:
    from core.formats.jepsen_store import is_store

    path = Path(args.run_dir)
    if is_store(path):
        from harness.checkcmd import report_store
        from harness.commands.check import known_model

        known_model(args.model)
        return report_store(path, args.model)
    if args.model is not None:
        raise UsageError(
            f"--model is for a Jepsen store directory (history.edn); {args.run_dir} is "
            "checked by the checkers its run recorded: leave --model out"
        )
    from harness.analysis import report_run
    from harness.report import write_report

    code = report_run(args.run_dir, term.out)
    term.out.print(f"report: {write_report(path)}")
    return code


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    rp = sub.add_parser(
        "report",
        help="(re)write a run's report",
        description="Check a run directory again and (re)write its report.html. A Jepsen "
        "store directory (history.edn, results.edn) gets its history.edn checked for "
        "linearizability and a report.html written into it, Jepsen's own verdict "
        "beside ours.",
    )
    rp.add_argument("run_dir", metavar="DIR", type=path("DIR"))
    rp.add_argument(
        "--model",
        default=None,
        help="a Jepsen store's linearizability model: register, cas-register, etcd, kv, "
        "mutex, multi-register (default: implied by history.edn, as for an EDN file)",
    )
    rp.set_defaults(fn=cmd_report)
