"""Every README example is a test (issue 30): each ``harness run`` the README shows with
its exit code is a ``readme-`` run of the nightly suite with the same options and that
outcome, and each row of the README's tables of outcomes (a ``what happens`` and a
``verdict`` column) names in its ``nightly`` column the nightly runs it describes, whose
expected outcome and violation are the row's. Both ways: a nightly run no example or row
names fails too. Tables of numbers measured by a script (the herd sweep's) are not
outcomes a run must have; a row measured once and in no suite says so (``-``, and "not in
a suite" in its text).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.cli import build_parser
from harness.commands.run import options_from
from harness.suite import SuiteRun, load_suite

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
NIGHTLY = ROOT / "suites" / "nightly.toml"
EXAMPLE_PREFIX = "readme-"
"""The nightly runs that are the README's commands, one each."""
EXITS = {"0": "valid", "1": "invalid", "2": "unknown"}
NOT_COMPARED = frozenset(
    {"name", "seed", "out_dir", "given", "adapted", "op_timeout_reason", "op_timeout_given"}
)
"""What a suite's run and a command line may differ in and still be the same run: its
name and folder, the seed (each night's own), and the record of which values were written
out rather than decided (a suite writes out what its defaults would otherwise change)."""
OUTCOME_COMMENT = re.compile(r"#\s*exit (\d)(?:; now and then (\d))?")


@dataclass(frozen=True)
class Example:
    """A ``harness run`` the README shows with its outcome(s)."""

    line: int
    argv: tuple[str, ...]
    outcomes: frozenset[str]


@dataclass(frozen=True)
class Row:
    """A row of a README table of outcomes."""

    line: int
    text: str
    outcomes: frozenset[str]
    violation: str | None
    runs: tuple[str, ...]


def examples(text: str) -> list[Example]:
    """The ``harness run`` commands of the README's ``sh`` blocks that say their exit code
    (``# exit 1``; ``# exit 0; now and then 1``: either), continuation lines joined."""
    found: list[Example] = []
    in_block, command, start = False, "", 0
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("```"):
            in_block, command = line.strip() == "```sh", ""
            continue
        if not in_block:
            continue
        if not command:
            start = n
        command += line.rstrip().removesuffix("\\") + " "
        if line.rstrip().endswith("\\"):
            continue
        code, _, comment = command.partition("#")
        words, command = shlex.split(code), ""
        said = OUTCOME_COMMENT.search("#" + comment)
        if len(words) < 2 or not words[0].endswith("harness") or words[1] != "run" or not said:
            continue
        outcomes = frozenset(EXITS[d] for d in said.groups() if d is not None)
        found.append(Example(start, tuple(words[2:]), outcomes))
    return found


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def rows(text: str) -> tuple[list[Row], list[str]]:
    """The rows of the README's tables of outcomes, and the problems of their shape (a
    table of outcomes without a ``nightly`` column)."""
    found: list[Row] = []
    problems: list[str] = []
    header: list[str] | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("|"):
            header = None
            continue
        cells = _cells(line)
        if header is None:
            header = cells
            if {"what happens", "verdict"} <= set(cells) and "nightly" not in cells:
                problems.append(f"README.md:{n}: a table of outcomes without a nightly column")
            continue
        if set(cells) == {"---"} or not {"verdict", "nightly"} <= set(header):
            continue
        verdict, named = cells[header.index("verdict")], cells[header.index("nightly")]
        words = re.match(r"(valid|invalid|unknown)(?:, or (valid|invalid|unknown))?", verdict)
        if words is None:
            problems.append(f"README.md:{n}: verdict {verdict!r} is not an outcome")
            continue
        anomaly = re.search(r"\(([a-z ]+?)(?:[,:;)]|$)", verdict)
        found.append(
            Row(
                n,
                cells[0],
                frozenset(w for w in words.groups() if w),
                anomaly.group(1).replace(" ", "-") if anomaly else None,
                tuple(re.findall(r"`([^`]+)`", named)),
            )
        )
    return found, problems


def _compared(options: Any) -> dict[str, Any]:
    return {k: v for k, v in options.to_dict().items() if k not in NOT_COMPARED}


def run_options(argv: tuple[str, ...]) -> Any:
    """The options ``harness run ARGV`` runs with (checked and decided, as it would)."""
    return options_from(build_parser("run").parse_args(["run", *argv]))


def problems(text: str, suite: Mapping[str, SuiteRun]) -> list[str]:
    """Where the README's examples and outcome rows and the nightly suite differ, one line
    each (none: in step)."""
    found: list[str] = []
    named: set[str] = set()
    for ex in examples(text):
        mine = _compared(run_options(ex.argv))
        same = [
            r
            for name, r in suite.items()
            if name.startswith(EXAMPLE_PREFIX) and _compared(r.options) == mine
        ]
        if not same:
            found.append(
                f"README.md:{ex.line}: harness run {shlex.join(ex.argv)} is no "
                f"{EXAMPLE_PREFIX} run of the nightly suite (the same options)"
            )
            continue
        named.update(r.name for r in same)
        for r in same:
            if frozenset(r.expected) != ex.outcomes:
                found.append(
                    f"README.md:{ex.line}: says {' or '.join(sorted(ex.outcomes))}, the "
                    f"nightly run {r.name} expects {r.expect}"
                )
    table, shape = rows(text)
    found += shape
    for row in table:
        if not row.runs and "not in a suite" not in row.text + text.splitlines()[row.line - 1]:
            found.append(f"README.md:{row.line}: {row.text!r} names no nightly run")
        for name in row.runs:
            named.add(name)
            run = suite.get(name)
            if run is None:
                found.append(f"README.md:{row.line}: names {name}, no run of the nightly suite")
                continue
            if frozenset(run.expected) != row.outcomes:
                found.append(
                    f"README.md:{row.line}: says {' or '.join(sorted(row.outcomes))}, the "
                    f"nightly run {name} expects {run.expect}"
                )
            if row.violation and run.violation not in (None, row.violation):
                found.append(
                    f"README.md:{row.line}: names {row.violation}, the nightly run {name} "
                    f"looks for {run.violation}"
                )
    for name in suite:
        if name not in named:
            found.append(f"nightly run {name} is neither a README example nor in its tables")
    return found


@pytest.fixture(scope="module")
def nightly() -> dict[str, SuiteRun]:
    return {r.name: r for r in load_suite(NIGHTLY).runs}


def test_the_readme_and_the_nightly_suite_are_in_step(nightly: dict[str, SuiteRun]) -> None:
    text = README.read_text(encoding="utf-8")
    assert len(examples(text)) >= 5 and len(rows(text)[0]) >= 20  # the parser finds them
    assert problems(text, nightly) == []


def test_a_readme_example_the_suite_lacks_is_found(nightly: dict[str, SuiteRun]) -> None:
    text = README.read_text(encoding="utf-8").replace(
        ".venv/bin/harness run --fencing off    # exit 1",
        ".venv/bin/harness run --fencing off --lease-ttl 7    # exit 1",
    )
    assert any("--lease-ttl 7 is no readme- run" in p for p in problems(text, nightly))


def test_an_outcome_that_differs_is_found(nightly: dict[str, SuiteRun]) -> None:
    text = README.read_text(encoding="utf-8").replace(
        "| invalid (two holders) | `redlock-clock-jump` |", "| valid | `redlock-clock-jump` |"
    )
    assert any(
        "says valid, the nightly run redlock-clock-jump" in p for p in problems(text, nightly)
    )
    text = README.read_text(encoding="utf-8").replace(
        "--pause-at 8 --pause-for 10 --fencing off      # exit 1",
        "--pause-at 8 --pause-for 10 --fencing off      # exit 0",
    )
    assert any("says valid, the nightly run readme-" in p for p in problems(text, nightly))


def test_a_suite_run_the_readme_lacks_is_found(nightly: dict[str, SuiteRun]) -> None:
    text = README.read_text(encoding="utf-8").replace(", `redis-kill-aof-always` |", " |")
    assert problems(text, nightly) == [
        "nightly run redis-kill-aof-always is neither a README example nor in its tables"
    ]


def test_a_table_of_outcomes_must_name_its_runs() -> None:
    text = "| run | what happens | verdict |\n| --- | --- | --- |\n| a | b | valid |\n"
    assert rows(text)[1] == ["README.md:1: a table of outcomes without a nightly column"]
    text = (
        "| run | what happens | verdict | nightly |\n| --- | --- | --- | --- |\n"
        "| a | b | valid | |\n"
    )
    assert problems(text, {}) == ["README.md:3: 'a' names no nightly run"]
