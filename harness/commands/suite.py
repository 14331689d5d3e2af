"""``harness suite run``: a suite file's runs, each with its expected outcome."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from harness.commands.args import (
    Parser,
    writable_dir,
)

if TYPE_CHECKING:
    pass


def cmd_suite(args: argparse.Namespace, console: Console) -> int:
    from harness.suite import run_suite

    if not args.list:
        writable_dir(args.out_dir)
    return run_suite(
        Path(args.file), console, only=args.only, out=args.out_dir, list_only=args.list
    )


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    st = sub.add_parser("suite", help="run a suite file: many runs, each with its expected outcome")
    st_sub = st.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser, required=True)
    sr = st_sub.add_parser(
        "run",
        help="run a suite (TOML), keep going after failures",
        description="Run every run of a suite file in order; write an "
        "index, the comparison matrix and JUnit XML; exit 1 only "
        "when an outcome differs from its expectation.",
    )
    sr.add_argument("file", help="suite file, e.g. suites/smoke.toml")
    sr.add_argument("--list", action="store_true", help="list the runs, run nothing")
    sr.add_argument("--only", default=None, help="only runs whose name matches (glob or part)")
    sr.add_argument("--out-dir", "-o", default="results", help="results folder")
    sr.set_defaults(fn=cmd_suite)
