"""``harness merge DIR... --out DIR``: the results of a suite's shards as one suite
result (``harness.merge``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness.commands.args import path, writable_dir

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_merge(args: argparse.Namespace, term: Terminal) -> int:
    from harness.merge import merge

    writable_dir(args.out, "--out")
    return merge([Path(d) for d in args.dirs], Path(args.out), term)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    m = sub.add_parser(
        "merge",
        help="put the results of a suite's shards together into one suite result",
        description="Merge the results of `harness suite run NAME --shard I/N`, I = 1 to N "
        "(each from its own machine), into one suite result: every run's directory "
        "copied, suite.json, junit.xml, index.html, matrix.html and summary.md (the job "
        "summary). Refuses shards of different suites, suite files or commits, and says "
        "which shard is missing. Exit 0 when every run met its expectation, else 1.",
    )
    m.add_argument(
        "dirs",
        nargs="+",
        metavar="DIR",
        type=path("DIR"),
        help="each shard's results folder (its -o, or the suite-NAME/STAMP folder in it)",
    )
    m.add_argument(
        "--out",
        "-o",
        required=True,
        type=path("--out"),
        help="the folder of the merged result (no default: required; new or empty)",
    )
    m.set_defaults(fn=cmd_merge)
