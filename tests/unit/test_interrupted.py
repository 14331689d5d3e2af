"""An interrupted run is a verdict of its own: results.json, the console line, the exit
code, the report's banner and the results index agree (the signals themselves are sent
to real runs in tests/integration/test_interrupt.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.store import TEST_FILE, read_json, write_json
from harness.analysis import check_run, exit_code_of, verdict_line
from harness.report import write_index
from harness.report._page import render_report
from tests.support.synthetic import cas_register_run


def interrupted(run_dir: Path, status: str = "interrupted", **stop: Any) -> Path:
    test = read_json(run_dir / TEST_FILE)
    test["status"] = status
    if stop:
        test["interrupted"] = stop
    write_json(run_dir / TEST_FILE, test)
    return run_dir


def test_no_violation_in_a_cut_short_run_is_interrupted_never_valid(tmp_path: Path) -> None:
    run_dir = cas_register_run(tmp_path / "cas" / "20260101T000001", faults=2)
    assert check_run(run_dir)["valid"] is True  # the same records, finished: valid
    interrupted(run_dir, signal="SIGTERM", at_s=12.8)
    r = check_run(run_dir)
    assert (r["verdict"], r["valid"], r["checked_valid"]) == ("interrupted", "unknown", True)
    assert r["interrupted"]["text"].startswith("interrupted by SIGTERM at 12.8 s of ")
    assert exit_code_of(r) == 2
    line = verdict_line(r)
    assert "interrupted by SIGTERM at 12.8 s" in line and "valid" not in line
    header = render_report(run_dir).split("</header>", 1)[0]
    assert "INTERRUPTED" in header and 'class="verdict interrupted"' in header
    assert "The run was interrupted by SIGTERM at 12.8 s" in header
    index = write_index(tmp_path).read_text()
    assert '<tr class="interrupted">' in index and "badge interrupted" in index
    assert "1 interrupted." in index
    assert "Interrupted by SIGTERM at 12.8 s of 20 s: no violation in what was recorded." in index


def test_a_violation_in_a_cut_short_run_is_still_invalid(tmp_path: Path) -> None:
    run_dir = cas_register_run(tmp_path / "stale" / "20260101T000002", faults=0, stale_read=True)
    r = check_run(interrupted(run_dir, signal="SIGINT", at_s=3.0))
    assert (r["verdict"], r["valid"], exit_code_of(r)) == ("invalid", False, 1)
    assert "interrupted by SIGINT at 3.0 s of 20 s; the violation is in what was recorded)" in (
        verdict_line(r)
    )
    header = render_report(run_dir).split("</header>", 1)[0]
    assert "FAIL" in header and "The run was interrupted by SIGINT" in header


@pytest.mark.parametrize(
    ("status", "text"),
    [
        ("running", "the harness stopped before the run finished (killed or crashed)"),
        ("interrupted", "interrupted by a signal"),
    ],
)
def test_a_harness_that_died_mid_run_or_an_old_record_is_interrupted(
    tmp_path: Path, status: str, text: str
) -> None:
    """``running`` is what a killed harness leaves; an interruption without its details
    (older runs wrote a bare string) still counts."""
    run_dir = cas_register_run(tmp_path / "cas" / "20260101T000003", faults=2)
    r = check_run(interrupted(run_dir, status))
    assert r["verdict"] == "interrupted" and exit_code_of(r) == 2
    assert r["interrupted"]["text"] == text


def test_ctrl_c_outside_a_run_is_unknown_not_a_shell_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Ctrl-C while checking (no run of its own to report): exit 2, as unknown."""
    from harness import checkcmd, cli

    def interrupted_check(*args: Any, **kwargs: Any) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(checkcmd, "check_paths", interrupted_check)
    history = tmp_path / "h.jsonl"
    history.write_text("")
    assert cli.main(["check", str(history)]) == 2
    assert "interrupted before a verdict: unknown (exit 2)" in capsys.readouterr().err
