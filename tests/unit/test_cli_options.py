"""Issue 16's "Options" examples and issue 15's option items, through the real command
line in-process: every bad value is one line on stderr and exit 254, never a traceback and
never a run; suite files go through the same validation and give the same run.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run

from core.errors import HarnessError
from core.options import FIELDS, RunOptions
from harness.cli import EXIT_BAD_ARGS, build_parser
from harness.commands.run import options_from
from harness.suite import SuiteError, load_suite
from harness.validate import check_options, check_run, decide

SECONDS = [
    "--rate",
    "--time-limit",
    "--recovery-time",
    "--op-timeout",
    "--pause-at",
    "--pause-for",
    "--keepalive",
    "--lease-ttl",
    "--work-time",
    "--acquire-wait",
    "--nemesis-interval",
]


def assert_one_line_254(code: int, out: str, err: str, needle: str) -> None:
    assert code == EXIT_BAD_ARGS, (code, out, err)
    assert "Traceback" not in out + err
    assert len(err.strip().splitlines()) == 1, err
    assert needle in err, err


@pytest.mark.parametrize("flag", SECONDS)
@pytest.mark.parametrize("value", ["nan", "inf", "1e308", "-1", "abc"])
def test_number_options_are_finite_and_in_range(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, value: str
) -> None:
    out_dir = tmp_path / "never-created"
    code, out, err = run(capsys, "run", flag, value, "-o", str(out_dir))
    assert_one_line_254(code, out, err, f"argument {flag}:")
    assert not out_dir.exists()  # refused before anything is written
    assert "see `harness run --help`" in err


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--locks", "0"], "--locks: must be at least 1"),
        (["--locks", "-1"], "--locks: must be at least 1"),
        (["--keys", "0"], "--keys: must be at least 1"),
        (["--nodes", "0"], "--nodes must be at least 1"),
        (["--concurrency", "0"], "--concurrency: must be at least 1"),
        (["--seed", "-5"], "--seed: must be at least 0"),
        (["--seed", "1e999"], "--seed: expected an integer"),
        (["--seed", str(2**64)], "--seed: must be at least 0 and at most"),
        (
            ["--sim-bug", "bogus"],
            "unknown sim bug 'bogus' for --sim-bug: choose from lock-ignores-lease",
        ),
        (["--target", "etcd", "--sim-bug", "token-reuse"], "sim target only"),
        (["--nemesis", ""], "--nemesis needs at least one of none, client-pause"),
        (["--nemesis", "kill,,pause"], "unknown nemesis '' for --nemesis"),
        (["--nemesis", "kill,kill"], "names a fault twice"),
        (["--persistence", "sometimes"], "invalid choice: 'sometimes' (choose from 'fsync'"),
        (["--persistence", "aof-always"], "sim has no persistence option"),
        (["--image", "mine:1"], "sim runs as a local process, not in Docker: leave out --image"),
        (["--read-mode", "stale"], "sim has no read modes"),
        (["--target", "etcd", "--read-mode", "stale"], "choose from linearizable, serializable"),
        (["--target", "etcd", "--lock", "nope"], "choose from lease-lock, recipe"),
        (["--target", "nope"], "invalid choice: 'nope'"),
        (["--name", "../../../../tmp/x"], "is not one folder name"),
        (["--name", "/abs"], "is not one folder name"),
        (["--name", ".."], "is not one folder name"),
        (["--name", "x" * 101], "at most 100"),
        (["-o", "/etc/passwd"], "--out-dir /etc/passwd: cannot write there"),
        (["-o", "/proc/x"], "--out-dir /proc/x: cannot write there"),
        (["--keepalive", "nan"], "--keepalive: must be a finite number"),
    ],
)
def test_bad_run_options_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert_one_line_254(*run(capsys, "run", *argv), needle)


def test_an_unwritable_out_dir_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):  # root writes anywhere: a file stands in
            locked = tmp_path / "file"
            locked.write_text("")
        assert_one_line_254(*run(capsys, "run", "-o", str(locked / "sub")), "cannot write there")
    finally:
        (tmp_path / "ro").chmod(0o700)


def test_argparse_errors_are_one_line_not_the_usage(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "run", "--no-such-option")
    assert_one_line_254(code, out, err, "see `harness run --help`")
    assert "usage:" not in err


def test_the_option_reference_lists_every_enumeration(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The per-value tables moved from ``run --help`` to ``harness docs options``."""
    code, out, _ = run(capsys, "docs", "options")
    assert code == 0
    text = " ".join(out.split())
    for needle in (
        "lock-ignores-lease",
        "epoch-reuse",
        "aof-everysec",
        "lease-lock",
        "serializable",
        "majorities-ring",
        "bridge",
        "holder",
        "n1,n3",
        "partition: one, leader, holder",
        "--accept-unavailable",
        "holder;partition=leader",
    ):
        assert needle in text, needle


# -- issue 15: faults that never happen, op timeouts that test nothing --------------------


def test_an_interval_with_no_room_for_one_fault_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, err = run(
        capsys, "run", "--nemesis", "pause", "--nemesis-interval", "10", "--time-limit", "10"
    )
    assert_one_line_254(
        code,
        out,
        err,
        "--nemesis-interval 10 leaves no room to start and "
        "stop each fault inside --time-limit 10: use --nemesis-interval 8 or "
        "less, or --time-limit 12.5 or more",
    )


def test_the_first_fault_starts_well_inside_the_time_limit() -> None:
    opts = check_options(RunOptions.of(nemesis=["pause"], nemesis_interval=10, time_limit=12.5))
    assert opts.first_fault_at() == 2.5
    long = RunOptions.of(nemesis=["kill"], nemesis_interval=5, time_limit=60)
    assert long.first_fault_at() == 5


def test_a_client_pause_given_that_ends_after_the_run_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Only a pause the user wrote is refused; the default one fits (test_option_defaults)."""
    assert_one_line_254(
        *run(capsys, "run", "--time-limit", "20", "--pause-at", "12", "--pause-for", "14"),
        "does not end inside --time-limit 20",
    )


def test_the_op_timeout_follows_the_pause_and_the_work_and_says_why() -> None:
    default = check_options(RunOptions.of())
    assert default.op_timeout == pytest.approx(14 + 0.3 + 5)
    assert "client pause 14 s + work time 0.3 s" in default.op_timeout_reason
    assert default.to_dict()["op_timeout_reason"] == default.op_timeout_reason
    work = check_options(
        RunOptions.of(target="zookeeper", work_time=20, nemesis=["partition"], time_limit=60)
    )
    assert work.op_timeout == 25 and "work time 20 s" in work.op_timeout_reason
    quiet = check_options(RunOptions.of(workload="cas-register"))
    assert quiet.op_timeout == 10 and quiet.faults.nemesis == ("none",)


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--op-timeout", "10"],
            "--op-timeout 10 is not longer than the client pause 14 s + work time 0.3 s",
        ),
        (
            ["--nemesis", "none", "--work-time", "20", "--op-timeout", "10"],
            "not longer than the work time 20 s",
        ),
    ],
)
def test_an_explicit_op_timeout_shorter_than_an_op_is_refused(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    assert_one_line_254(*run(capsys, "run", *argv), needle)


def _cli(*argv: str) -> RunOptions:
    args: argparse.Namespace = build_parser().parse_args(["run", *argv])
    return options_from(args)


def test_accept_unavailable_on_the_command_line() -> None:
    assert _cli("--accept-unavailable").accept_unavailable is True
    assert _cli().accept_unavailable is False


# -- suites: the same validation, the same run ----------------------------------------


def _suite(tmp_path: Path, body: str, suite_name: str = "t") -> Path:
    p = tmp_path / "s.toml"
    p.write_text(f"[suite]\nname = {suite_name!r}\n[[run]]\nname = 'r'\n{body}\n")
    return p


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("rate = nan", "--rate must be a finite number"),
        ("time_limit = inf", "--time-limit must be a finite number"),
        ("time_limit = 1e308", "--time-limit must be at least 0.01"),
        ("locks = 0", "--locks must be at least 1"),
        ("keys = 1.5", "--keys must be an integer"),
        ("seed = -1", "--seed must be at least 0"),
        ("pause_for = true", "--pause-for must be a number"),
        ("time_limit = '10'", "--time-limit must be a number"),
        ("nemesis = ''", "--nemesis needs at least one"),
        ("nemesis = []", "--nemesis needs at least one"),
        ("sim_bugs = ['bogus']", "unknown sim bug 'bogus'"),
        ("target = 'nope'", "unknown target 'nope'"),
        ("op_timeout = 3", "--op-timeout 3 is not longer than the client pause 14 s"),
        (
            "nemesis = ['kill']\nnemesis_target = 'bogus'\ntime_limit = 60",
            "not a target of the kill fault",
        ),
    ],
)
def test_suite_files_get_the_same_validation(tmp_path: Path, body: str, needle: str) -> None:
    with pytest.raises(SuiteError) as e:
        load_suite(_suite(tmp_path, body))
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_suite_and_run_names_are_one_folder_name(tmp_path: Path) -> None:
    with pytest.raises(SuiteError, match="is not one folder name"):
        load_suite(_suite(tmp_path, "", suite_name="../../etc"))
    run_name = tmp_path / "r.toml"
    run_name.write_text("[[run]]\nname = '../../x'\n")
    with pytest.raises(SuiteError, match="is not one folder name"):
        load_suite(run_name)


def test_suite_run_of_a_folder_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert_one_line_254(
        *run(capsys, "suite", "run", str(tmp_path)), "is a folder: pass a suite file"
    )


def test_a_suite_and_the_command_line_give_the_same_run(tmp_path: Path) -> None:
    for workload in ("cas-register", "lock", "election"):
        suite = load_suite(_suite(tmp_path, f"workload = {workload!r}\nseed = 3"))
        from_suite = suite.runs[0].options.to_dict()
        from_cli = _cli("--workload", workload, "--seed", "3").to_dict()
        for d in (from_suite, from_cli):
            d.pop("name")
        assert from_suite == from_cli, workload
    assert from_suite["nemesis"] == ["client-pause"]


def test_every_suite_in_the_repository_loads() -> None:
    suites = sorted(Path(__file__).resolve().parents[2].glob("suites/*.toml"))
    assert suites
    for path in suites:
        assert load_suite(path).runs, path


# -- compare: odd runs and unwritable outputs -----------------------------------------


@pytest.mark.parametrize(
    ("test_json", "needle"),
    [
        (b"[]", "test.json: not a JSON object"),
        (b"garbage", "test.json: not readable JSON"),
        (b"\xff\xfe{}", "test.json: not readable JSON (UnicodeDecodeError)"),
        (b'{"options": 5}', "test.json: 'options' must be a table, not an integer"),
        (b'{"options": {"target": 5}}', "test.json: 'options': target must be str, not 5"),
        (b'{"options": {"nemesis": [1]}}', "'options': nemesis must be a list of fault names"),
        (b'{"name": ["x"]}', "test.json: 'name' must be a string, not a list"),
    ],
)
def test_compare_on_a_run_whose_test_json_is_odd_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, test_json: bytes, needle: str
) -> None:
    run_dir = tmp_path / "t" / "20260101T000000"
    run_dir.mkdir(parents=True)
    (run_dir / "test.json").write_bytes(test_json)
    assert_one_line_254(*run(capsys, "compare", str(run_dir)), needle)


@pytest.mark.parametrize("flag", ["--html", "--junit"])
@pytest.mark.parametrize("where", ["/proc/x.html", "/nonexistent/dir/out", "DIR"])
def test_compare_to_an_unwritable_place_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str, where: str
) -> None:
    target = str(tmp_path) if where == "DIR" else where
    assert_one_line_254(
        *run(capsys, "compare", str(tmp_path), flag, target), f"{flag} {target}: cannot write there"
    )


def test_an_op_timeout_set_in_code_is_kept_as_given() -> None:
    opts = RunOptions.of(op_timeout=30)
    assert opts.op_timeout == 30 and opts.op_timeout_given and opts.op_timeout_reason == "given"


def test_suite_run_into_an_unwritable_place_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    suite = Path(__file__).resolve().parents[2] / "suites" / "sim.toml"
    assert_one_line_254(
        *run(capsys, "suite", "run", str(suite), "-o", "/etc/passwd"),
        "--out-dir /etc/passwd: cannot write there",
    )


def test_a_register_run_may_have_a_short_op_timeout() -> None:
    opts = check_options(RunOptions.of(workload="cas-register", op_timeout=1))
    assert opts.op_timeout == 1


# -- any value of any option: a run, or one line -----------------------------------------

_FIELDS = list(FIELDS)
_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.sampled_from(
        [
            "sim",
            "etcd",
            "lock",
            "cas-register",
            "kill",
            "holder",
            "n1",
            "one",
            "client-pause",
            "partition=leader",
            "..",
            "a/b",
            "aof-always",
        ]
    ),
    st.lists(st.text(max_size=6), max_size=3),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
)


@settings(max_examples=int(os.environ.get("OPTIONS_FUZZ_EXAMPLES", "400")), deadline=None)
@given(st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=6))
def test_any_suite_values_give_a_run_or_one_line(values: dict[str, object]) -> None:
    try:
        check_run(RunOptions.from_mapping(values))
    except HarnessError as e:
        assert "\n" not in str(e) and str(e)


def _run_flags() -> list[str]:
    """Every ``run`` option that takes a value, but the paths (files it would read)."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    paths = ("--nodes-file", "--ssh-key", "--ssh-debs", "--ssh-known-hosts", "--out-dir")
    return [
        a.option_strings[0]
        for a in sub.choices["run"]._actions
        if a.option_strings and a.nargs != 0 and a.option_strings[0] not in paths
    ]


_FLAGS = _run_flags()


@settings(max_examples=int(os.environ.get("OPTIONS_FUZZ_EXAMPLES", "150")), deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(_FLAGS),
            st.one_of(
                st.text(max_size=10),
                st.floats(allow_nan=True, allow_infinity=True).map(str),
                st.integers(min_value=-(2**70), max_value=2**70).map(str),
            ),
        ),
        max_size=4,
    )
)
def test_any_command_line_values_give_a_run_or_one_line(pairs: list[tuple[str, str]]) -> None:
    import contextlib
    import io

    from harness.cli import UsageError

    argv = [x for flag, value in pairs for x in (flag, value)]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            _cli(*argv)
        except SystemExit as e:
            assert e.code == EXIT_BAD_ARGS
            assert len(err.getvalue().strip().splitlines()) == 1, err.getvalue()
        except (HarnessError, UsageError) as e:
            assert "\n" not in str(e) and str(e)


def test_a_copy_of_options_keeps_following_the_pause() -> None:
    """A copy (``with_``) once froze the followed op timeout as if given: with a
    longer pause it was then refused though nobody had asked for one."""
    from core.option_checks import OptionError
    from core.options import RunOptions

    opts = decide(RunOptions.of())
    assert not opts.op_timeout_given and opts.op_timeout == 19.3
    longer = check_options(opts.with_(pause_for=30.0, time_limit=60.0))
    assert not longer.op_timeout_given and longer.op_timeout == 35.3
    assert RunOptions.of(op_timeout=10.0).op_timeout_given  # asked for in code: kept
    with pytest.raises(OptionError, match="decided by the options"):
        RunOptions.from_mapping({"op_timeout_given": True})
