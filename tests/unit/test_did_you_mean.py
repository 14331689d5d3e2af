"""Issue 28, "did you mean": a misspelt name is one line naming the nearest, exit 254
(``difflib``); a name near none still lists the choices.

Reproduced first: ``harness run --target etdc`` printed argparse's "invalid choice" with
the whole list and no suggestion, and so did every other name.
"""

from __future__ import annotations

import pytest
from test_cli import run
from test_cli_options import assert_one_line_254


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["run", "--target", "etdc"], "harness: unknown target 'etdc'; did you mean 'etcd'?"),
        (["rn"], "harness: unknown command 'rn'; did you mean 'run'?"),
        (["suite", "rnu", "smoke"], "harness: unknown command 'rnu'; did you mean 'run'?"),
        (
            ["run", "--workload", "lokc"],
            "harness: unknown workload 'lokc'; did you mean 'lock'?",
        ),
        (
            ["run", "--nemesis", "kill,parition"],
            "harness: unknown nemesis 'parition' for --nemesis; did you mean 'partition'?",
        ),
        (
            ["run", "--target", "etcd", "--lock", "recipie"],
            "harness: etcd has no lock implementation 'recipie'; did you mean 'recipe'?",
        ),
        (
            ["run", "--sim-bug", "stale-rea", "--workload", "cas-register"],
            "harness: unknown sim bug 'stale-rea' for --sim-bug; did you mean 'stale-read'?",
        ),
        (["suite", "run", "smok"], "harness: unknown suite 'smok'; did you mean 'smoke'?"),
        (["docs", "sssh"], "harness: unknown document 'sssh'; did you mean 'ssh'?"),
        (
            ["docs", "options", "falts"],
            "harness: unknown topic 'falts' of `harness docs options`; did you mean 'faults'?",
        ),
        (
            ["check", "--model", "regster", "x.jsonl"],
            "harness: unknown model 'regster'; did you mean 'register'?",
        ),
        (
            ["run", "--taget", "etcd"],
            "harness: unknown option '--taget' of `harness run`; did you mean '--target'?",
        ),
    ],
)
def test_a_misspelt_name_gets_the_nearest(
    capsys: pytest.CaptureFixture[str], argv: list[str], line: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert_one_line_254(code, out, err, line)
    assert err == line + "\n"


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--target", "nope"], "invalid choice: 'nope' (choose from 'sim', 'etcd'"),
        (["run", "--nemesis", "flood"], "unknown nemesis 'flood' for --nemesis: choose from"),
        (["run", "--no-such-option"], "unrecognized arguments: --no-such-option"),
        (["docs", "nothing-like-it"], "unknown document 'nothing-like-it': choose from"),
    ],
)
def test_a_name_near_none_lists_the_choices(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert_one_line_254(*run(capsys, *argv), needle)
