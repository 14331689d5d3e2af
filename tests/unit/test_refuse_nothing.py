"""Issue 28, "Refuse what does nothing": an option the user wrote that would change
nothing is refused in one line naming what would (a warning where the unfenced outcome
is the point).

Reproduced first, each ran to "valid" without a word: ``--ssh-user bob`` without
``--ssh`` (a Docker or sim run), ``--sim-bug stale-read --workload lock``, ``--nemesis
none --nemesis-target leader``; ``--fencing on`` with Redis's token-less locks said
nothing either.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli import run
from test_cli_options import _cli, _suite, assert_one_line_254

from clusters.target_registry import TARGETS
from harness.suite import SuiteError, load_suite
from workloads.common.lock_options import LockOptions


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--ssh-user", "bob"],
            "--ssh-user does nothing without --ssh, which runs the target on real hosts: "
            "add --ssh --nodes host1,host2,... or leave it out",
        ),
        (["--ssh-key", "k", "--target", "etcd"], "--ssh-key does nothing without --ssh"),
        (["--ssh-no-strict"], "--ssh-no-strict does nothing without --ssh"),
        (["--ssh-install", "apt"], "--ssh-install does nothing without --ssh"),
        (
            ["--sim-bug", "stale-read", "--workload", "lock"],
            "--sim-bug stale-read does nothing to the lock workload: it affects "
            "cas-register, version-cas, unique-key, unique-ids; use --workload cas-register",
        ),
        (
            ["--workload", "cas-register", "--sim-bug", "token-reuse"],
            "--sim-bug token-reuse does nothing to the cas-register workload",
        ),
        (
            ["--sim-bug", "forget-on-restart"],
            "--sim-bug forget-on-restart does nothing without the kill fault: add --nemesis kill",
        ),
        (
            ["--nemesis", "none", "--nemesis-target", "leader"],
            "--nemesis-target leader does nothing with --nemesis none: name the faults it aims",
        ),
        (
            ["--workload", "cas-register", "--nemesis-target", "leader"],
            "does nothing with the cas-register workload's default, no fault",
        ),
    ],
)
def test_an_option_that_does_nothing_is_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert_one_line_254(*run(capsys, "run", *argv), needle)


def test_a_bug_the_workload_meets_is_accepted() -> None:
    assert _cli("--sim-bug", "stale-read", "--workload", "cas-register").backend.sim_bugs
    assert _cli("--sim-bug", "forget-on-restart", "--nemesis", "kill").backend.sim_bugs
    assert _cli("--sim-bug", "epoch-reuse", "--workload", "election").backend.sim_bugs


def test_the_bug_table_names_registered_workloads_and_faults() -> None:
    from nemesis.fault_registry import FAULTS
    from workloads.workload_registry import WORKLOADS

    for target in TARGETS.values():
        for bug in target.bugs.values():
            assert set(bug.workloads) <= set(WORKLOADS) and bug.fault in (None, *FAULTS)


def test_the_default_ssh_values_written_out_are_not_refused() -> None:
    """A value equal to the default changes nothing either way (a replay's recorded
    options hold them all)."""
    assert _cli("--ssh-port", "22").ssh.port == 22


def test_suites_are_refused_alike(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="--ssh-user does nothing without --ssh"):
        load_suite(_suite(tmp_path, "ssh_user = 'bob'"))


UNFENCED_BY_DEFAULT = [
    n
    for n, t in TARGETS.items()
    if next(iter(t.offers["lock"].variants)) in t.offers["lock"].unfenced
]
"""The targets whose default lock gives no token (etcd's, ZooKeeper's and PostgreSQL's do:
only some of their libraries give none)."""


@pytest.mark.parametrize("target", UNFENCED_BY_DEFAULT)
def test_fencing_on_with_a_lock_without_tokens_is_a_warning(
    capsys: pytest.CaptureFixture[str], target: str
) -> None:
    opts = _cli("--target", target, "--fencing", "on")
    assert opts.record(LockOptions).fencing  # the run goes on: the unfenced outcome is the point
    err = capsys.readouterr().err
    assert err.startswith("harness: warning: --fencing on fences nothing with the ")
    assert "it hands out no fencing token" in err and len(err.splitlines()) == 1
    _cli("--target", target)  # left to its default: nothing said
    assert capsys.readouterr().err == ""
    _cli("--target", "etcd", "--fencing", "on")  # a lock with tokens: nothing said
    assert capsys.readouterr().err == ""


def test_options_beside_replay_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert_one_line_254(
        *run(capsys, "run", "--replay", str(tmp_path), "--time-limit", "3"),
        "--time-limit does nothing with --replay",
    )
    assert_one_line_254(
        *run(capsys, "run", "--replay", str(tmp_path), "--sim-bug", "stale-read"),
        "--sim-bug does nothing with --replay",
    )
