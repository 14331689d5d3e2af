"""The commands as people run them: in a terminal, piped into ``head``, into a full disk,
with stdout closed, and stopped with Ctrl-C (issue 28).

Every run here is on the built-in sim target (no Docker). The terminal is a real
pseudo-terminal (``tests/support/pty_run.py``): rich's live progress only runs there,
which is why a crash that killed every run typed in a terminal went unseen by the tests
that pipe the output.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.pty_run import in_terminal

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
HARNESS = str(Path(sys.executable).with_name("harness"))
ETCD_LOGS = Path(__file__).resolve().parents[3] / "shared" / "histories" / "porcupine" / "jepsen"
QUICK = ["--workload", "cas-register", "--nemesis", "none", "--time-limit", "4", "--seed", "3"]


def _test_json(run_dir: Path) -> dict:
    return json.loads((run_dir / "test.json").read_text())


def test_make_run_in_a_terminal_is_valid_and_leaves_the_cursor_visible(tmp_path: Path) -> None:
    """The README's first command, typed in a terminal: it crashed at the progress display
    (``'_LazyConsole' object does not support the context manager protocol``, exit 1,
    the cursor hidden, no results)."""
    s = in_terminal(["make", "-s", "run", f"ARGS=-o {tmp_path}"], cwd=ROOT, timeout=240)
    assert s.code == 0, s.tail
    assert "verdict: " in s.text and "valid" in s.text.split("verdict: ")[-1], s.tail
    assert "Traceback" not in s.text and "lost sys.stderr" not in s.text
    assert b"\x1b[?25l" in s.output  # the live panel ran (it hides the cursor) ...
    assert s.cursor_visible()  # ... and gave it back
    assert (tmp_path / "latest" / "report.html").is_file()
    assert _test_json(tmp_path / "latest")["status"] == "finished"


def test_the_smoke_suites_sim_runs_in_a_terminal_meet_their_expectations(tmp_path: Path) -> None:
    """``harness suite run smoke`` in a terminal marked every run "crashed"."""
    s = in_terminal(
        [HARNESS, "suite", "run", "smoke", "--only", "sim-lock-*", "-o", str(tmp_path)],
        timeout=600,
    )
    assert s.code == 0, s.tail
    assert "crashed" not in s.text and "Traceback" not in s.text, s.tail
    assert s.cursor_visible()
    suite = json.loads(next(tmp_path.glob("suite-smoke/*/suite.json")).read_text())
    assert len(suite["outcomes"]) == 2 and all(o["met"] for o in suite["outcomes"]), suite


def test_a_suite_logged_to_a_file_keeps_every_path_whole(tmp_path: Path) -> None:
    """``harness suite run smoke > log``: every ``report:`` path was split mid-word."""
    deep = tmp_path / ("a-long-folder-name-" * 5)
    r = subprocess.run(
        [HARNESS, "suite", "run", "smoke", "--only", "sim-lock-fenced", "-o", str(deep)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    reports = [line for line in r.stdout.splitlines() if line.startswith("report: ")]
    assert reports and all(Path(line.removeprefix("report: ")).is_file() for line in reports)
    assert "suite results in " in r.stdout and "== smoke: sim-lock-fenced" in r.stderr


def test_ctrl_c_in_a_terminal_heals_checks_and_gives_the_cursor_back(tmp_path: Path) -> None:
    s = in_terminal(
        [HARNESS, "run", *QUICK[:-4], "--time-limit", "60", "-o", str(tmp_path)],
        keys=[(b"remaining", b"\x03")],  # once the live panel is up: the run is under way
        timeout=120,
    )
    assert s.code == 2, s.tail  # interrupted, no violation: unknown
    assert "interrupted by SIGINT" in s.text and "Traceback" not in s.text
    assert s.cursor_visible()
    assert _test_json(tmp_path / "latest")["status"] == "interrupted"


def test_check_and_serve_in_a_terminal(tmp_path: Path) -> None:
    log = ETCD_LOGS / "etcd_000.log"
    if not log.is_file():
        pytest.skip(f"no reference histories at {ETCD_LOGS}")
    s = in_terminal([HARNESS, "check", str(log)], timeout=60)
    assert s.code == 1 and "invalid" in s.text and "Traceback" not in s.text, s.tail
    served = in_terminal(
        [HARNESS, "serve", str(tmp_path), "--port", "0"],
        keys=[(b"Ctrl-C stops", b"\x03")],
        timeout=60,
    )
    assert "Traceback" not in served.text, served.tail
    assert served.code in (0, 2), served.tail


def test_results_go_to_stdout_and_progress_to_stderr(tmp_path: Path) -> None:
    """Everything went to stdout, progress included: ``harness run > log`` kept nothing
    on the screen and mixed the progress into the results."""
    r = subprocess.run(
        [HARNESS, "run", *QUICK, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    run_dir = (tmp_path / "latest").resolve()
    assert r.stdout.splitlines()[-3:] == [
        "verdict: valid",
        f"report: {run_dir / 'report.html'}",
        f"results in {run_dir}",
    ]
    assert "starting sim" in r.stderr and "starting sim" not in r.stdout
    assert "ops/s" in r.stderr and "ops/s" not in r.stdout


def test_a_pipe_closed_early_ends_quietly_with_the_verdicts_exit_code() -> None:
    """``harness check FILE... | head -1``: a BrokenPipeError traceback and exit 255."""
    logs = sorted(ETCD_LOGS.glob("etcd_0*.log"))[:40]
    if not logs:
        pytest.skip(f"no reference histories at {ETCD_LOGS}")
    script = f"{HARNESS} check {' '.join(map(str, logs))} | head -1; echo rc=${{PIPESTATUS[0]}}"
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert r.stderr == "", r.stderr
    first, rc = r.stdout.splitlines()
    assert first.startswith(str(logs[0])) and "invalid" in first
    whole = subprocess.run([HARNESS, "check", *map(str, logs)], capture_output=True, timeout=120)
    assert rc == f"rc={whole.returncode}"  # the verdict, every file checked


def test_a_closed_stdout_and_a_full_one() -> None:
    log = ETCD_LOGS / "etcd_000.log"
    if not log.is_file():
        pytest.skip(f"no reference histories at {ETCD_LOGS}")
    closed = subprocess.run(
        ["bash", "-c", f"{HARNESS} check {log} >&-"], capture_output=True, text=True, timeout=60
    )
    assert (closed.returncode, closed.stderr) == (1, ""), closed.stderr  # invalid, quietly
    with open("/dev/full", "w") as full:
        r = subprocess.run(
            [HARNESS, "check", str(log)], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert r.returncode == 255
    assert r.stderr.splitlines() == [
        "harness: could not write the output (stdout: No space left on device); exit 255"
    ]


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 5 MB tmpfs: a run's history fills it in seconds."""
    where = tmp_path / "disk"
    where.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=5m", "tmpfs", str(where)], check=True)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.mark.root
def test_a_full_disk_is_one_line_exit_255_and_a_checkable_history(small_disk: Path) -> None:
    """A run whose output directory filled up: exit 255, 104 lines, three tracebacks and
    test.json left "running" (before; now four lines, the last saying what happened)."""
    r = subprocess.run(
        [HARNESS, "run", *QUICK[:-4], "--time-limit", "120", "-o", str(small_disk)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 255, r.stderr
    assert r.stdout == ""  # no verdict: nothing was checked
    said = [line for line in r.stderr.splitlines() if not line.startswith("[")]  # progress
    # the start, "starting sim ...", the load the run reached before the disk filled, the crash
    assert len(said) == 4 and said[2].startswith("load: "), r.stderr
    assert said[-1].startswith("harness: crashed: the run stopped at ")
    assert "No space left on device" in said[-1] and "harness check" in said[-1]
    run_dir = (small_disk / "latest").resolve()
    test = _test_json(run_dir)
    assert test["status"] == "crashed" and "No space left" in test["crashed"]["error"]
    assert not (run_dir / ".reserve").exists()
    assert "Traceback" in (run_dir / "harness.log").read_text()  # where the details are
    copy = small_disk.parent / "copy"
    shutil.copytree(run_dir, copy)  # checked where results.json fits
    checked = subprocess.run(
        [HARNESS, "check", str(copy)], capture_output=True, text=True, timeout=120
    )
    assert checked.returncode == 2, checked.stdout  # what was recorded, never "valid"
    assert (
        "the harness crashed at"
        in json.loads((copy / "results.json").read_text())["interrupted"]["text"]
    )


def test_run_json_is_one_object_and_compare_json_parses(tmp_path: Path) -> None:
    r = subprocess.run(
        [HARNESS, "run", *QUICK, "-o", str(tmp_path), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)  # the whole of stdout: one object
    assert summary["verdict"] == "valid" and summary["exit_code"] == 0
    assert Path(summary["run_dir"]) == (tmp_path / "latest").resolve()
    assert summary["checkers"]["linearizability"]["valid"] is True
    assert "verdict: valid" in r.stderr  # the words, for the person watching
    matrix = subprocess.run(
        [HARNESS, "compare", str(tmp_path), "--json"], capture_output=True, text=True, timeout=60
    )
    assert matrix.returncode == 0, matrix.stderr
    cells = json.loads(matrix.stdout)["cells"]
    assert [(c["row"], c["column"], c["verdict"]) for c in cells] == [
        ("sim · cas-register", "none", "valid")
    ]


def test_piped_output_is_never_wrapped(tmp_path: Path) -> None:
    """Off a terminal, rich wrapped at 80 columns: every ``report:`` path of the smoke
    suite split mid-word, compare's cells 8 characters wide, ``--list`` names cut."""
    deep = tmp_path / ("a-long-folder-name-" * 6)
    r = subprocess.run(
        [HARNESS, "run", *QUICK, "-o", str(deep)], capture_output=True, text=True, timeout=120
    )
    run_dir = (deep / "latest").resolve()
    assert f"results in {run_dir}\n" in r.stdout and len(str(run_dir)) > 100, r.stdout
    table = subprocess.run(
        [HARNESS, "compare", str(deep)], capture_output=True, text=True, timeout=60
    ).stdout
    assert any("availability: " in line and "outside faults" in line for line in table.splitlines())
    listed = subprocess.run(
        [HARNESS, "suite", "run", "smoke", "--list"], capture_output=True, text=True, timeout=60
    ).stdout
    assert "sim-registry-paused-past-ttl" in listed and "…" not in listed


def test_harness_log_tells_the_run(tmp_path: Path) -> None:
    """harness.log held one line ("teardown complete") in 26 of 26 run directories."""
    short = ["--lease-ttl", "2", "--keepalive", "0.5", "--pause-at", "1.5", "--pause-for", "4"]
    short += ["--time-limit", "7", "--recovery-time", "1", "--work-time", "0.1"]
    r = subprocess.run(
        [HARNESS, "run", *short, "--acquire-wait", "1", "--seed", "7", "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    log = (tmp_path / "latest" / "harness.log").read_text()
    for said in (
        "run sim-lock-client-pause, seed 7: harness run --target sim",
        "starting sim",
        "workers ready; the workload starts at",
        "fault start-client-pause invoked at",
        "fault start-client-pause took effect at",  # with the pids it froze
        "'proof': 'state T in /proc'",
        "fault stop-client-pause took effect at",
        "teardown complete",
        "checker mutex: valid in",
        "verdict: valid (exit 0)",
    ):
        assert said in log, f"{said!r} not in harness.log:\n{log}"
    stamps = [line.split(" ", 1)[0] for line in log.splitlines() if line[:2] == "20"]
    assert stamps and all(s.endswith("Z") and "T" in s for s in stamps)  # UTC, zone marked
    test = _test_json(tmp_path / "latest")
    assert test["started"].endswith("+00:00") and test["ended_at"] >= test["started"]
