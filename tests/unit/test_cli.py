"""The command line: exit codes and one-line errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import EXIT_BAD_ARGS, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def recorded_run(capsys: pytest.CaptureFixture[str], out_dir: Path, *argv: str) -> dict:
    """``harness run ARGV -o OUT_DIR``, which must end valid (exit 0): its test.json."""
    code, out, err = run(capsys, "run", *argv, "-o", str(out_dir))
    assert code == 0, out + err
    test: dict = json.loads((out_dir / "latest" / "test.json").read_text())
    return test


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["run", "--target", "nope"], "invalid choice: 'nope'"),
        (["run", "--workload", "queue"], "invalid choice"),
        (["run", "--nemesis", "flood"], "unknown nemesis 'flood'"),
        (["run", "--keepalive", "20"], "not shorter than --lease-ttl"),
        (["run", "--fencing", "maybe"], "expected on or off"),
        (["run", "--target", "sim", "--nemesis", "partition"], "need a real cluster"),
        (["run", "--target", "sim", "--nodes", "3"], "sim runs 1 node(s) (sim), not 3: leave"),
        (["check", "/no/such/file"], "no such file"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_input_is_one_line_and_exit_254(
    capsys: pytest.CaptureFixture[str], argv: list[str], needle: str
) -> None:
    code, out, err = run(capsys, *argv)
    assert code == EXIT_BAD_ARGS
    assert needle in err
    assert "Traceback" not in err + out


def test_a_malformed_history_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    bad = tmp_path / "h.edn"
    bad.write_text("[{:process 0, :type :invoke, :f :read, :value nil}\n {:process")
    code, _, err = run(capsys, "check", str(bad))
    assert code == EXIT_BAD_ARGS
    assert str(bad) in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_every_command_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["--help"],
        ["run", "--help"],
        ["check", "--help"],
        ["report", "--help"],
        ["images", "build", "--help"],
        ["clusters", "--help"],
    ):
        code, out, _ = run(capsys, *argv)
        assert code == 0 and "usage: harness" in out


ETCD_LOGS = Path(__file__).resolve().parents[3] / "shared" / "histories" / "porcupine" / "jepsen"


@pytest.mark.skipif(not ETCD_LOGS.is_dir(), reason=f"reference histories not at {ETCD_LOGS}")
def test_check_prints_a_verdict_per_file_and_exits_with_the_worst(
    capsys: pytest.CaptureFixture[str],
) -> None:
    files = [str(ETCD_LOGS / "etcd_002.log"), str(ETCD_LOGS / "etcd_000.log")]
    code, out, _ = run(capsys, "check", "--json", *files)
    assert code == 1  # one invalid file
    lines = [json.loads(line) for line in out.splitlines()]
    assert [(d["file"], d["valid"], d["model"]) for d in lines] == [
        (files[0], True, "etcd"),
        (files[1], False, "etcd"),
    ]
    for d in lines:  # time to the verdict, then the counterexample's, apart
        assert d["check_ms"] > 0 and d["explain_ms"] >= 0
    assert lines[0]["explanation"] == [] and lines[1]["explanation"]
    code, out, _ = run(capsys, "check", files[1])
    assert code == 1
    first, *rest = out.splitlines()
    assert first.startswith(f"{files[1]}: invalid (") and "ms, " in first
    assert rest[0].startswith("    ") and rest[-1].startswith("total: 1 file(s)")
