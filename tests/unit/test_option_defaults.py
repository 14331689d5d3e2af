"""Issue 28, "Defaults fit the run": a default the user never wrote never refuses a run.

Reproduced first: ``harness run --time-limit 20`` (and ``--workload herd --time-limit
20``) was refused, exit 254, by the *default* client pause (at 12 s for 14 s), and
``--target etcd --time-limit 10`` by the same; so was ``--nemesis pause --time-limit 10``
by the default interval and ``--lease-ttl 2`` by the default keepalive. Now those
defaults adapt to the options given (test.json says how, in ``adapted``), and a refusal
names the options the user wrote. Suites follow the same rule.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import run
from test_cli_options import _cli, _suite, assert_one_line_254

from core.options import RunOptions
from harness.suite import SuiteError, load_suite
from harness.validate import check_options
from workloads.common.lock_options import LockOptions


@pytest.mark.parametrize(
    "argv", [("--time-limit", "20"), ("--workload", "herd", "--time-limit", "20")]
)
def test_the_default_pause_fits_a_shorter_run(argv: tuple[str, ...]) -> None:
    opts = _cli(*argv)
    assert (opts.faults.pause_at, opts.faults.pause_for, opts.time_limit) == (3.4, 14, 20)
    assert opts.faults.pause_at + opts.faults.pause_for <= opts.time_limit
    assert (
        opts.faults.pause_for > opts.record(LockOptions).lease_ttl
    )  # the scenario still shows its point
    (why,) = opts.adapted
    assert why.startswith("pause_at 3.4 s (not given)") and "time_limit 20 s" in why
    recorded = opts.to_dict()
    assert recorded["adapted"] == [why] and "time_limit" in recorded["given"]


def test_a_short_run_with_a_short_lease_gets_a_shorter_pause() -> None:
    opts = _cli("--time-limit", "8", "--lease-ttl", "2")
    assert (opts.faults.pause_at, opts.faults.pause_for) == (2.7, 3.2)
    assert opts.record(LockOptions).lease_ttl < opts.faults.pause_for and 2.7 + 3.2 <= 8
    assert [w.split(" ")[0] for w in opts.adapted] == ["pause_for", "pause_at", "keepalive"]


def test_a_longer_lease_gets_a_pause_that_outlasts_it_and_a_longer_run() -> None:
    opts = _cli("--lease-ttl", "20")
    assert (opts.faults.pause_at, opts.faults.pause_for, opts.time_limit) == (12, 28, 54)
    assert "1.4 times lease_ttl 20 s" in opts.adapted[0]
    assert opts.op_timeout == 28 + 0.3 + 5  # the op timeout follows the adapted pause


def test_a_pause_given_makes_the_default_run_longer() -> None:
    opts = _cli("--pause-for", "30")
    assert (opts.faults.pause_at, opts.faults.pause_for, opts.time_limit) == (12, 30, 57)
    assert opts.adapted[0].startswith("time_limit 57 s (not given)")


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--target", "etcd", "--time-limit", "10"],
            "harness: --time-limit 10 is too short for a client pause longer than the lease "
            "TTL (10 s): raise --time-limit to at least 16\n",
        ),
        (
            ["--lease-ttl", "12", "--time-limit", "10"],
            "raise --time-limit to at least 18.8 or give a shorter --lease-ttl",
        ),
        (
            ["--time-limit", "15", "--pause-for", "14"],
            "--time-limit 15 is too short for --pause-for 14",
        ),
        (["--time-limit", "10", "--pause-at", "5"], "the client pause at --pause-at 5 for 14 s"),
        (
            ["--time-limit", "20", "--pause-at", "12", "--pause-for", "14"],
            "does not end inside --time-limit 20",
        ),
    ],
)
def test_a_refusal_names_what_the_user_wrote(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, "run", *argv)
    assert_one_line_254(code, out, err, needle)


def test_the_default_interval_fits_a_short_run_and_a_given_one_a_longer_run() -> None:
    short = _cli("--nemesis", "pause", "--time-limit", "10")
    assert short.faults.nemesis_interval == 2.857 and "10/35 of it" in short.adapted[0]
    longer = _cli("--nemesis", "pause,kill", "--nemesis-interval", "20")
    assert longer.time_limit == 70 and longer.adapted[0].startswith("time_limit 70 s")
    check_options(longer)  # and it fits


def test_the_default_keepalive_follows_a_short_lease() -> None:
    opts = _cli("--lease-ttl", "2")
    assert opts.record(LockOptions).keepalive == 0.6 and opts.adapted[0].startswith(
        "keepalive 0.6 s"
    )


def test_a_keepalive_given_is_still_refused_when_it_outlasts_the_lease(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(capsys, "run", "--lease-ttl", "2", "--keepalive", "3")
    assert_one_line_254(code, out, err, "--keepalive 3.0 is not shorter than --lease-ttl 2.0")


@pytest.mark.parametrize(("workload", "option"), [("watch", "watchers"), ("registry", "instances")])
def test_the_clients_of_a_role_leave_room_for_the_others(workload: str, option: str) -> None:
    opts = _cli("--workload", workload, "--concurrency", "2")
    assert opts.get(option) == 1 and opts.adapted[0].startswith(f"{option} 1 (not given)")


def test_one_client_is_refused_naming_concurrency(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", "--workload", "watch", "--concurrency", "1")
    assert_one_line_254(
        code, out, err, "--concurrency 1 leaves no writer beside the watchers: the watch"
    )


def test_nothing_is_adapted_when_the_defaults_fit() -> None:
    opts = _cli()
    assert opts.adapted == () and opts.given == ()
    assert (opts.faults.pause_at, opts.faults.pause_for, opts.time_limit) == (12, 14, 35)


def test_suites_follow_the_same_rule(tmp_path: Path) -> None:
    fits = load_suite(_suite(tmp_path, "time_limit = 20"))
    opts = fits.runs[0].options
    assert opts.faults.pause_at == 3.4 and opts.given == ("time_limit",)
    with pytest.raises(SuiteError, match="does not end inside --time-limit 20"):
        load_suite(_suite(tmp_path, "time_limit = 20\npause_at = 12\npause_for = 14"))
    with pytest.raises(SuiteError, match="raise --time-limit to at least 16"):
        load_suite(_suite(tmp_path, "time_limit = 10\nworkload = 'herd'"))


def test_every_shipped_suite_run_is_what_it_was() -> None:
    """No suite in the repository relied on a default refusing or on the old defaults:
    none of their runs adapts anything."""
    for path in sorted(Path(__file__).resolve().parents[2].glob("suites/*.toml")):
        for r in load_suite(path).runs:
            assert r.options.adapted == (), (path.name, r.name, r.options.adapted)


def test_the_given_and_adapted_fields_are_the_options_own() -> None:
    assert "given" in RunOptions().to_dict() and "adapted" in RunOptions().to_dict()
    with pytest.raises(Exception, match="adapted is decided by the options, not set"):
        RunOptions.from_mapping({"adapted": ["x"]})


@pytest.mark.slow
def test_a_short_run_the_defaults_refused_runs_and_test_json_says_why(tmp_path: Path) -> None:
    """Through the real command: ``--time-limit 6 --lease-ttl 1`` was refused by the
    default pause; now the pause fits, the run is valid (fencing on) and test.json says
    what was adapted."""
    from test_run_sim import harness

    argv = ["--time-limit", "6", "--lease-ttl", "1", "--recovery-time", "1", "--seed", "3"]
    r = harness("run", *argv, out=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    test = json.loads(next(tmp_path.glob("*/*/test.json")).read_text())
    options = test["options"]
    assert (options["pause_at"], options["pause_for"], options["keepalive"]) == (2.0, 2.4, 0.3)
    assert [w.split(" ")[0] for w in options["adapted"]] == ["pause_for", "pause_at", "keepalive"]
    assert options["given"] == ["lease_ttl", "out_dir", "recovery_time", "seed", "time_limit"]
