"""Issue 29, item 5: ordinary values that gave tracebacks or were accepted as nonsense,
each through the real command line. Every one is one line on stderr saying what is wrong
and what to do, exit 254 (a run stopped early: 2), never "crashed": paths bounded as the
file system bounds them, numbers in a sane range (durations at least a millisecond),
output places checked before any work, unreadable inputs refused, deep TOML refused,
test.json fields of the wrong type named."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cli import run

from core.errors import HarnessError
from core.option_checks import MS, NUMBERS
from core.options import flag_of
from core.store import TEST_FILE
from harness.cli import build_parser
from harness.commands.run import options_from
from tests.support.synthetic import cas_register_run
from workloads.workload_registry import WORKLOADS

assert WORKLOADS  # imported for what it does: the workloads' records handed in, their numbers

LONG = "a" * 5000
LONG_NAME = "d/" + "b" * 300


def one_line_254(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """The command's stderr, after asserting it is one line and exit 254."""
    code, out, err = run(capsys, *argv)
    assert code == 254, (argv[:3], code, out[-300:], err[-300:])
    assert len(err.strip().splitlines()) == 1, err[-600:]
    assert "crashed" not in err and "Traceback" not in err, err[-600:]
    return err


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return cas_register_run(tmp_path / "runs" / "20260101T000001", ops=60, faults=0)


PATH_ARGS = [
    ["check", "{}"],
    ["check", "--html", "{}", "RUN"],
    ["check", "--out", "{}", "RUN"],
    ["serve", "{}"],
    ["report", "{}"],
    ["compare", "{}"],
    ["compare", "--html", "{}", "RUN"],
    ["compare", "--junit", "{}", "RUN"],
    ["suite", "run", "{}"],
    ["suite", "run", "--out-dir", "{}", "smoke"],
    ["run", "--replay", "{}"],
    ["run", "-o", "{}"],
    ["run", "--nodes-file", "{}", "--ssh"],
    ["junit-summary", "{}"],
]


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (LONG, "a path of 5000 bytes, longer than the 4096 a path may have"),
        (LONG_NAME, "has a name of 300 bytes, longer than the 255"),
        ("", "an empty path names nothing"),
    ],
)
@pytest.mark.parametrize("argv", PATH_ARGS, ids=lambda a: " ".join(a))
def test_every_path_argument_is_bounded_before_it_is_opened(
    capsys: pytest.CaptureFixture[str], run_dir: Path, argv: list[str], value: str, said: str
) -> None:
    args = [value if a == "{}" else str(run_dir) if a == "RUN" else a for a in argv]
    assert said in one_line_254(capsys, *args)


def test_serve_of_an_empty_name_serves_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """``serve ''`` served the current directory."""
    err = one_line_254(capsys, "serve", "")
    assert "an empty path names nothing" in err


@pytest.mark.parametrize("host", ["", "a b", "h" * 5000], ids=["empty", "space", "long"])
def test_serve_host_it_cannot_listen_on_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, host: str
) -> None:
    err = one_line_254(capsys, "serve", "--host", host, "--port", "0", str(tmp_path))
    assert "--host" in err and len(err) < 400


@pytest.mark.parametrize(
    "flag",
    [
        "--rate",
        "--time-limit",
        "--keepalive",
        "--compact-every",
        "--recovery-time",
        "--op-timeout",
        "--lease-ttl",
        "--pause-for",
        "--work-time",
    ],
)
def test_a_denormal_number_is_refused_not_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str
) -> None:
    """``--rate 1e-320`` crashed; ``--time-limit``, ``--keepalive``, ``--compact-every``
    1e-320 were accepted: every duration is at least a millisecond (0 where 0 is none)."""
    err = one_line_254(capsys, "run", flag, "1e-320", "-o", str(tmp_path / "never"))
    assert f"argument {flag}:" in err and "at least 0.0" in err
    assert not (tmp_path / "never").exists()


def test_check_time_limit_is_at_least_a_millisecond(
    capsys: pytest.CaptureFixture[str], run_dir: Path
) -> None:
    err = one_line_254(capsys, "check", "--time-limit", "1e-320", str(run_dir))
    assert "give seconds, at least 0.001" in err


@pytest.mark.parametrize("flag", ["--compact-every", "--recovery-time", "--work-time"])
def test_zero_is_still_none_where_it_means_none(flag: str) -> None:
    args = build_parser("run").parse_args(["run", flag, "0"])
    assert getattr(args, flag.removeprefix("--").replace("-", "_")) == 0


@pytest.mark.parametrize("name", sorted(NUMBERS))
@pytest.mark.parametrize("edge", ["low", "high"])
def test_an_edge_value_alone_is_refused_only_for_itself(name: str, edge: str) -> None:
    """Defaults the user did not set never cause a refusal: each number option alone at
    the edge of its range either runs, or is refused naming that option."""
    bound = NUMBERS[name]
    value = bound.low if edge == "low" else bound.high
    if edge == "low" and bound.open_low:
        value = bound.low + MS
    value = int(value) if bound.integer else float(value)
    flag = flag_of(name)
    argv = ["run", flag, str(value)] if name != "nodes" else ["run", "--nodes", str(value)]
    if name.startswith("ssh_"):
        pytest.skip("an SSH option needs hosts")
    args = build_parser("run").parse_args(argv)
    try:
        options_from(args)
    except HarnessError as e:
        assert flag in str(e), (flag, value, str(e))


def test_check_of_proc_self_mem_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    err = one_line_254(capsys, "check", "/proc/self/mem")
    assert "/proc/self/mem: cannot read it" in err


@pytest.mark.parametrize("kind", ["fifo", "proc", "folder"])
@pytest.mark.parametrize(
    ("argv", "said"), [(["suite", "run"], "suite"), (["junit-summary"], "JUnit XML file")]
)
def test_an_input_that_is_no_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, kind: str, argv: list[str], said: str
) -> None:
    """A suite file or a JUnit file that is a FIFO (which blocked), /proc/self/mem or a
    folder."""
    path = {"fifo": tmp_path / "in", "proc": Path("/proc/self/mem"), "folder": tmp_path}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    started = time.monotonic()
    err = one_line_254(capsys, *argv, str(path))
    assert time.monotonic() - started < 10  # a FIFO is not waited on
    assert f"{path}" in err and said in err


@pytest.mark.parametrize("depth", [5000, 100, 33])
def test_deep_toml_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, depth: int
) -> None:
    """A suite nested 5,000 deep was a 3,000-line RecursionError."""
    path = tmp_path / "deep.toml"
    path.write_text("[a]\nx = " + "[" * depth + "]" * depth + "\n")
    err = one_line_254(capsys, "suite", "run", str(path))
    assert "nested more than 32 arrays or tables deep" in err


def test_toml_as_deep_as_allowed_is_read_on(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "ok.toml"
    path.write_text("[a]\nx = " + "[" * 30 + "]" * 30 + "\n[[run]]\nname = 'r'\n")
    code, _, err = run(capsys, "suite", "run", "--list", str(path))
    assert code == 0 and "nested" not in err, err


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "--html", "/dev/full", "RUN"],
        ["compare", "--junit", "/dev/full", "RUN"],
        ["check", "--html", "/dev/full", "RUN"],
        ["check", "--out", "/dev/full", "RUN"],
        ["check", "--html", "NOWHERE/x.html", "RUN"],
        ["check", "--out", "/proc/self", "RUN"],
    ],
    ids=lambda a: " ".join(a[:3]),
)
def test_output_places_are_checked_before_any_work(
    capsys: pytest.CaptureFixture[str], run_dir: Path, tmp_path: Path, argv: list[str]
) -> None:
    nowhere = str(tmp_path / "missing")
    args = [str(run_dir) if a == "RUN" else a.replace("NOWHERE", nowhere) for a in argv]
    err = one_line_254(capsys, *args)
    assert argv[1] in err
    assert not (run_dir / "results.json").exists()  # nothing was checked


WRONG = [
    ("options", "x", "'options' must be a table, not a string"),
    ("faults", [], "'faults' must be a table, not a list"),
    ("seed", "x", "'seed' must be an integer or null, not a string"),
    ("linearizable_locks", 1, "'linearizable_locks' must be true or false, not an integer"),
    ("service_rules", {}, "'service_rules' must be a list, not a table"),
    ("workload_start_ns", "x", "'workload_start_ns' must be an integer, not a string"),
    ("status", 5, "'status' must be a string, not an integer"),
    ("options.time_limit", "x", "'options': time_limit must be a number"),
    ("options.nemesis", "x", "'options': nemesis must be a list of fault names"),
    ("options.fencing", "yes", "'options': fencing must be bool"),
    ("options.extra", "x", "'options': extra must be a table of options"),
]


@pytest.mark.parametrize(("field", "value", "said"), WRONG, ids=[w[0] for w in WRONG])
@pytest.mark.parametrize("command", ["check", "report", "compare", "replay"])
def test_test_json_field_of_the_wrong_type_is_one_line(
    capsys: pytest.CaptureFixture[str],
    run_dir: Path,
    tmp_path: Path,
    command: str,
    field: str,
    value: object,
    said: str,
) -> None:
    """test.json with ``"options": "x"`` was a 24-line AttributeError in check and report."""
    test = json.loads((run_dir / TEST_FILE).read_text())
    if field.startswith("options."):
        test["options"][field.removeprefix("options.")] = value
    else:
        test[field] = value
    (run_dir / TEST_FILE).write_text(json.dumps(test))
    argv = (
        ["run", "--replay", str(run_dir), "-o", str(tmp_path / "out")]
        if command == "replay"
        else [command, str(run_dir)]
    )
    err = one_line_254(capsys, *argv)
    assert f"{run_dir / TEST_FILE}: {said}" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("lease_ttl", "ten", "lease_ttl must be a number, not 'ten'"),
        ("fencing", "yes", "fencing must be bool, not 'yes'"),
        ("recipe", 5, "recipe must be str, not 5"),
    ],
)
def test_a_workloads_recorded_option_of_the_wrong_type_is_one_line_in_a_fresh_process(
    run_dir: Path, option: str, value: object, said: str
) -> None:
    """A workload's option edited by hand in test.json (``"recipe": 5``) was checked only
    when something else had imported the workloads' registry first: ``harness check RUN``
    on its own read it as valid. The installed command, in a process of its own."""
    test = json.loads((run_dir / TEST_FILE).read_text())
    test["options"][option] = value
    (run_dir / TEST_FILE).write_text(json.dumps(test))
    harness = Path(sys.executable).parent / "harness"
    done = subprocess.run(
        [str(harness), "check", str(run_dir)], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 254, (done.returncode, done.stdout[-300:], done.stderr[-300:])
    assert f"{run_dir / TEST_FILE}: 'options': {said}" in done.stderr, done.stderr


def catches_sigterm(pid: int) -> bool:
    """Whether process ``pid`` has a handler for SIGTERM (``/proc``'s SigCgt mask)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signal.SIGTERM - 1) & 1)
    return False


@pytest.mark.parametrize("after", [0.0, 0.3, 1.0])
def test_sigterm_in_the_first_instant_of_a_run_is_interrupted(tmp_path: Path, after: float) -> None:
    """SIGTERM in the first 0.3 s of ``harness run`` gave 254 ("no history.jsonl") or
    killed it: from the moment the interpreter runs the harness's first line (its handler
    caught, seen in /proc) it is exit 2, said like Ctrl-C."""
    harness = Path(sys.executable).parent / "harness"
    child = subprocess.Popen(
        [str(harness), "run", "--time-limit", "3", "--nemesis", "none", "-o", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not catches_sigterm(child.pid) and time.monotonic() < deadline:
        time.sleep(0.001)
    time.sleep(after)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 2, (child.returncode, err[-800:])
    assert "interrupted by SIGTERM" in err, err[-800:]
    assert "crashed" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--target", "x" * 100_000],
        ["run", "--nemesis", "x" * 100_000],
        ["run", "--sim-bug", "x" * 100_000],
        ["suite", "run", "--only", "x" * 100_000, "smoke"],
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_a_huge_value_is_echoed_cut_short(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    """A refusal echoing a 100,000-character value stays a line one can read."""
    err = one_line_254(capsys, *argv, "-o", str(tmp_path / "never"))
    assert "... (10000" in err and len(err) < 1000, err[:300]


@pytest.mark.parametrize(
    ("key", "value", "said"),
    [
        ("out_dir", "o" * 5000, "--out-dir: a path of 5000 bytes"),
        ("out_dir", "a\u0000b", "--out-dir: 'a\\x00b' holds a NUL byte"),
        ("ssh_key", "k" * 300, "--ssh-key: 'kkkk"),
        ("ssh_debs", "", "--ssh-debs: an empty path names nothing"),
    ],
)
def test_a_suite_path_option_is_bounded_too(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, key: str, value: str, said: str
) -> None:
    path = tmp_path / "s.toml"
    path.write_text(f"[[run]]\nname = 'r'\n{key} = {json.dumps(value)}\n")
    assert said in one_line_254(capsys, "suite", "run", "--list", str(path))


@pytest.mark.parametrize(
    ("out", "said"),
    [
        ("/dev/full", "--out /dev/full: a character device"),
        ("/proc/self/x", "--out /proc/self/x: cannot write there"),
        ("DIR", "cannot write there (Is a directory)"),
    ],
)
def test_junit_summary_out_is_checked_before_reading(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, out: str, said: str
) -> None:
    junit = tmp_path / "j.xml"
    junit.write_text('<testsuite name="s"><testcase name="a" classname="c"/></testsuite>')
    out = str(tmp_path) if out == "DIR" else out
    assert said in one_line_254(capsys, "junit-summary", "--out", out, str(junit))


@pytest.mark.parametrize(
    ("results", "said"),
    [
        ({"valid": True, "verdict": 5, "checkers": {}}, "'verdict' must be a string"),
        ({"valid": True, "verdict": "valid", "checkers": "x"}, "'checkers' must be a table"),
        ({"valid": True, "verdict": "valid", "checkers": {"mutex": 1}}, "checker 'mutex'"),
    ],
)
def test_results_json_of_the_wrong_type_is_one_line_in_compare_and_empty_in_the_index(
    capsys: pytest.CaptureFixture[str], run_dir: Path, results: dict[str, object], said: str
) -> None:
    """compare crashed (AttributeError) on a results.json whose checkers were a string;
    the results index (``harness serve``) failed its request."""
    from harness.report import write_index
    from harness.report._runs import load_run

    (run_dir / "results.json").write_text(json.dumps(results))
    assert f"{run_dir / 'results.json'}: {said}" in one_line_254(capsys, "compare", str(run_dir))
    assert load_run(run_dir).results is None  # listed as not checked
    assert write_index(run_dir.parent).is_file()


@pytest.mark.parametrize("name", ["x" * 5000, "../../README", "/etc/passwd"])
def test_docs_takes_names_never_paths(capsys: pytest.CaptureFixture[str], name: str) -> None:
    """``harness docs`` of a 5,000-character name crashed (File name too long)."""
    assert "unknown document" in one_line_254(capsys, "docs", name)
