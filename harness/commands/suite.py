"""``harness suite run|plan|list``: a suite's runs (or one shard of them), each with its
expected outcome; the split of a suite into shards; the suites shipped with the package."""

from __future__ import annotations

import argparse
from pathlib import Path
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
        suite_file(args.file),
        term,
        only=args.only,
        out=args.out_dir,
        list_only=args.list,
        shard=args.shard,
        durations=Path(args.durations) if args.durations else None,
    )


def cmd_plan(args: argparse.Namespace, term: Terminal) -> int:
    import json

    from harness.packaged import suite_file
    from harness.provenance import suite_digest
    from harness.shard import plan_answer, recorded_durations, split
    from harness.suite import load_suite, select

    path = suite_file(args.file)
    suite = load_suite(path)
    recorded = recorded_durations(Path(args.durations)) if args.durations else {}
    shards = split(select(suite, args.only), args.shards, recorded)
    answer = plan_answer(suite.name, suite_digest(path), shards)
    if args.format == "github":
        print(json.dumps(answer["matrix"], separators=(",", ":")))
    elif args.format == "json":
        print(json.dumps(answer, indent=2))
    else:
        from rich.table import Table

        table = Table("shard", "expected s", "runs", title=f"{suite.name} in {args.shards}")
        for s in shards:
            table.add_row(s.label, f"{s.expected_s:.0f}", " ".join(s.runs))
        term.out.print(table)
    return 0


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


def _shard(text: str) -> tuple[int, int]:
    from harness.shard import parse_shard

    return parse_shard(text)


def _count(text: str) -> int:
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a number of shards: give a whole number, 1 or more"
        )
    return int(text)


def _durations(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--durations",
        metavar="SUITE_JSON",
        type=path("--durations"),
        default=None,
        help="an earlier result's suite.json: weigh each run by its recorded seconds "
        "(default: estimated from its time limit); give every shard the same file",
    )


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
    sr.add_argument(
        "--shard",
        metavar="I/N",
        type=_shard,
        default=None,
        help="run only shard I of N (balanced by expected duration; the same split on "
        "every machine); put the shards together with `harness merge` (default: the "
        "whole suite)",
    )
    _durations(sr)
    sr.set_defaults(fn=cmd_suite)
    sp = st_sub.add_parser(
        "plan",
        help="split a suite into N shards: a GitHub matrix or an Indexed Job's indexes",
        description="Split a suite into N shards of about equal expected duration, as "
        "`suite run --shard I/N` runs them: as a table, as the value of a workflow's "
        "strategy.matrix (--format github), or as JSON with each shard's runs and a "
        "Kubernetes Indexed Job's completions and indexes (--format json).",
    )
    describe(
        sp.add_argument("file", metavar="SUITE", type=path("SUITE"), help="a suite"),
        offers=_suite_names,
        files=True,
    )
    sp.add_argument(
        "--shards",
        type=_count,
        required=True,
        metavar="N",
        help="how many shards (no default: required)",
    )
    sp.add_argument(
        "--format",
        choices=("table", "github", "json"),
        default="table",
        help="table, github (one line of JSON for strategy.matrix) or json",
    )
    sp.add_argument(
        "--only",
        default=None,
        help="only runs whose name matches, as `suite run --only` (default: all)",
    )
    _durations(sp)
    sp.set_defaults(fn=cmd_plan)
    sl = st_sub.add_parser(
        "list",
        help="the suites shipped with the harness",
        description="The suites shipped with the harness: their names (for `harness suite "
        "run NAME`), what each is for, and where the file is.",
    )
    sl.set_defaults(fn=cmd_list)
