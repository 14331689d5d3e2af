"""``harness junit-summary FILE...``: JUnit XML as a Markdown table for a CI summary."""

from __future__ import annotations

import argparse
import glob
from pathlib import Path
from typing import TYPE_CHECKING

from harness.commands.args import UsageError, path, path_option, writable_file

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_junit_summary(args: argparse.Namespace, term: Terminal) -> int:
    from core.errors import HarnessError
    from harness.junit_summary import markdown

    if args.out:  # before reading anything: the summary must have a place to go
        writable_file(args.out, "--out")
    paths = [Path(p) for pattern in args.files for p in sorted(glob.glob(pattern)) or [pattern]]
    try:
        text = markdown(paths)
    except HarnessError as e:
        raise UsageError(str(e)) from None
    if args.out:
        from core.writes import open_append

        with open_append(Path(args.out), text=True) as f:  # never through a link
            f.write(text + "\n")
    else:
        print(text)
    return 0


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    j = sub.add_parser(
        "junit-summary",
        help="JUnit XML as a Markdown table (a CI job's summary)",
        description="A Markdown table of the testcases of JUnit files (a suite's junit.xml, "
        "pytest's --junitxml): what each found, whether as expected, and for each one "
        "that was not, its one-sentence reason and report. In GitHub Actions: "
        '--out "$GITHUB_STEP_SUMMARY".',
    )
    j.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        type=path("FILE"),
        help="JUnit XML files or glob patterns",
    )
    path_option(j, "--out", "append to this file (default: print to standard output)")
    j.set_defaults(fn=cmd_junit_summary)
