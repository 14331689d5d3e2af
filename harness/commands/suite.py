"""``harness suite run|list``: a suite's runs, each with its expected outcome; the suites
shipped with the package."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.commands.args import Parser, describe, path, writable_dir

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_suite(args: argparse.Namespace, term: Terminal) -> int:
    from harness.packaged import suite_file
    from harness.suite import run_suite

    if not args.list:
        writable_dir(args.out_dir)
    return run_suite(
        suite_file(args.file), term, only=args.only, out=args.out_dir, list_only=args.list
    )


def cmd_list(args: argparse.Namespace, term: Terminal) -> int:
    from rich.table import Table

    from harness.packaged import suite_file, suite_names, suite_summary

    table = Table("suite", "runs", "what it is for", title="suites shipped with the harness")
    for name in suite_names():
        path = suite_file(name)
        table.add_row(
            name, str(path.read_text(encoding="utf-8").count("[[run]]")), suite_summary(path)
        )
    term.out.print(table)
    if suite_names():
        where = suite_file(suite_names()[0]).parent
        term.out.print(f"in {where}; run one with `harness suite run NAME`", soft_wrap=True)
    return 0


def _suite_names() -> tuple[str, ...]:
    from harness.packaged import suite_names

    return suite_names()


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    st = sub.add_parser("suite", help="run a suite: many runs, each with its expected outcome")
    st_sub = st.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser, required=True)
    sr = st_sub.add_parser(
        "run",
        help="run a suite (TOML), keep going after failures",
        description="Run every run of a suite in order; write an "
        "index, the comparison matrix and JUnit XML; exit 1 only "
        "when an outcome differs from its expectation.",
    )
    describe(
        sr.add_argument(
            "file",
            metavar="SUITE",
            type=path("SUITE"),
            help="a shipped suite by name (smoke, locks...: `harness suite list`) or a suite "
            "file, e.g. suites/smoke.toml",
        ),
        offers=_suite_names,
        files=True,
    )
    sr.add_argument("--list", action="store_true", help="list the runs, run nothing")
    sr.add_argument(
        "--only", default=None, help="only runs whose name matches (glob or part; default: all)"
    )
    sr.add_argument(
        "--out-dir", "-o", default="results", type=path("--out-dir"), help="results folder"
    )
    sr.add_argument(
        "--json",
        action="store_true",
        help="print the outcomes (or with --list the runs) as one JSON object on stdout",
    )
    sr.set_defaults(fn=cmd_suite)
    sl = st_sub.add_parser(
        "list",
        help="the suites shipped with the harness",
        description="The suites shipped with the harness: their names (for `harness suite "
        "run NAME`), what each is for, and where the file is.",
    )
    sl.set_defaults(fn=cmd_list)
