"""Issue 16's run directories: special files, bad bytes, unreadable records and read-only
directories are one line each (exit 254), never a hang, a traceback or a verdict; check
writes results.json only where it can, or under --out, and says where."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from test_bad_input_files import op_line
from test_checks import run_dir
from test_cli import run

from harness.cli import EXIT_BAD_ARGS

needs_non_root = pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return run_dir(tmp_path / "run", fencing=True)


def check_one_line(capsys: pytest.CaptureFixture[str], d: Path, words: str) -> None:
    code, out, err = run(capsys, "check", str(d))
    assert code == EXIT_BAD_ARGS, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and words in lines[0], err
    assert "Traceback" not in out + err and "valid" not in out.replace("verdict none", "")


def test_a_good_run_directory_checks_valid(capsys: pytest.CaptureFixture[str], good: Path) -> None:
    code, out, _ = run(capsys, "check", str(good))
    assert code == 0 and f"results: {good / 'results.json'}" in out


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("history.jsonl", "FIFO"),
        ("test.json", "FIFO"),
        ("events.jsonl", "FIFO"),
        ("resource.jsonl", "FIFO"),
    ],
)
def test_a_fifo_in_a_run_directory_is_refused_not_waited_for(
    capsys: pytest.CaptureFixture[str], good: Path, name: str, kind: str
) -> None:
    (good / name).unlink()
    os.mkfifo(good / name)
    check_one_line(capsys, good, f"{good / name}: a {kind} (named pipe), not a regular file")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom", "/dev/null"])
def test_a_device_as_history_is_refused(
    capsys: pytest.CaptureFixture[str], good: Path, device: str
) -> None:
    (good / "history.jsonl").unlink()
    (good / "history.jsonl").symlink_to(device)
    check_one_line(capsys, good, "a character device, not a regular file")


def test_a_directory_as_history_is_refused(capsys: pytest.CaptureFixture[str], good: Path) -> None:
    (good / "history.jsonl").unlink()
    (good / "history.jsonl").mkdir()
    check_one_line(capsys, good, f"{good / 'history.jsonl'}: a directory, not a regular file")


@pytest.mark.parametrize("name", ["test.json", "events.jsonl", "resource.jsonl", "history.jsonl"])
def test_invalid_utf8_in_a_record_is_one_line(
    capsys: pytest.CaptureFixture[str], good: Path, name: str
) -> None:
    p = good / name
    data = p.read_bytes()
    cut = data.index(b'"', 3)
    p.write_bytes(data[:cut] + b"\xff\xfe" + data[cut:])
    line = data[:cut].count(b"\n") + 1
    check_one_line(capsys, good, f"{p}:{line}: not UTF-8 (byte 0xff")


def test_a_test_json_that_is_no_object_is_one_line(
    capsys: pytest.CaptureFixture[str], good: Path
) -> None:
    (good / "test.json").write_text("[1, 2]\n")
    check_one_line(capsys, good, "test.json: not a JSON object")
    (good / "test.json").write_text("[" * 100_000)
    check_one_line(capsys, good, "test.json")


def test_a_time_beyond_a_run_in_its_history_is_refused(
    capsys: pytest.CaptureFixture[str], good: Path
) -> None:
    """Issue 16: one time of 10**41 made `check --time-limit 2 DIR` run 560 s to 24 GB."""
    for time in ("1" + "0" * 41, "1e308", str(10**18)):
        (good / "history.jsonl").write_text(op_line(time=time))
        check_one_line(capsys, good, f"{good / 'history.jsonl'}:1: time ")


@needs_non_root
def test_an_unreadable_record_is_one_line(capsys: pytest.CaptureFixture[str], good: Path) -> None:
    (good / "events.jsonl").chmod(0)
    check_one_line(capsys, good, "events.jsonl: cannot open it (Permission denied)")


def test_results_go_where_they_can_and_the_output_says_where(
    capsys: pytest.CaptureFixture[str], good: Path, tmp_path: Path
) -> None:
    (good / "results.json").unlink(missing_ok=True)
    out_dir = tmp_path / "elsewhere"
    code, out, _ = run(capsys, "check", "--out", str(out_dir), str(good))
    written = out_dir / good.resolve().parent.name / good.resolve().name / "results.json"
    assert code == 0 and f"results: {written}" in out and written.is_file()
    assert not (good / "results.json").exists()
    if os.geteuid() == 0:
        return  # root writes into a read-only directory
    good.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        code, out, err = run(capsys, "check", str(good))
    finally:
        good.chmod(0o755)
    assert code == 0 and "Traceback" not in err
    assert "results not written to" in out and "pass --out DIR" in out


def test_results_that_cannot_be_written_are_said_not_a_crash(
    capsys: pytest.CaptureFixture[str], good: Path, tmp_path: Path
) -> None:
    """Issue 16: check wrote results.json into the directory it checked, or crashed.
    Issue 29: an --out where nothing can be written is refused before any checking."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, _, err = run(capsys, "check", "--out", str(blocker), str(good))
    assert code == 254 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert f"--out {blocker}: cannot write there" in err
    assert not (good / "results.json").exists()


def test_unreadable_records_are_one_line_even_as_root(
    capsys: pytest.CaptureFixture[str], good: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16: unreadable files gave PermissionError tracebacks (root reads anything: the
    refusal is made by a stand-in for os.open)."""
    from core.formats import files

    real_open = os.open

    def refuse(path: os.PathLike[str] | str, flags: int, *args: int) -> int:
        if Path(path).name == "resource.jsonl":
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(files.os, "open", refuse)
    check_one_line(capsys, good, "resource.jsonl: cannot open it (Permission denied)")


def test_a_read_only_run_directory_is_checked_and_said_even_as_root(
    capsys: pytest.CaptureFixture[str], good: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16: check wrote results.json into the directory it checks (PermissionError)."""
    from core import store  # harness.checkcmd imports its write_json when it writes

    def read_only(path: Path, data: object, **where: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(store, "write_json", read_only)
    code, out, err = run(capsys, "check", str(good))
    assert code == 0 and not err
    assert (
        f"results not written to {good / 'results.json'} (Permission denied); pass --out DIR "
        "to keep them" in out
    )


def test_a_killed_runs_cut_short_history_is_checked_and_said(
    capsys: pytest.CaptureFixture[str], good: Path
) -> None:
    history = good / "history.jsonl"
    lines = history.read_text().splitlines()
    history.write_text("\n".join(lines) + "\n" + '{"index":99,"time":5,"pro')
    code, out, _ = run(capsys, "check", str(good))
    assert code == 0
    assert f"note: {history}:{len(lines) + 1}: the last line is cut short (a killed run?)" in out
    assert json.loads((good / "results.json").read_text())["notes"] == [
        f"{history}:{len(lines) + 1}: the last line is cut short (a killed run?) and was left out"
    ]
