"""A run that cannot go on as asked (a refusal once the cluster is there, a cluster that
never comes up) is the user's one line, exit 254, as before the run began: not a crash
of the harness. test.json says so, and a check of what was left never says valid."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli import run

from core.cluster import ClusterError


class _Refusing:
    """A cluster whose start refuses, as the SSH backend refuses clock faults on hosts."""

    def __init__(self, *_: Any) -> None: ...

    def start(self, run_dir: Path) -> None:
        raise ClusterError("Refusing clock faults on n1: its clock is this machine's")

    def stop(self) -> None: ...

    def collect_logs(self, out: Path) -> None: ...


def test_a_refusal_inside_the_run_is_one_line_254_and_said_in_test_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from harness import orchestrate

    monkeypatch.setattr(orchestrate.run_target, "make_cluster", _Refusing)
    code, out, err = run(
        capsys, "run", "--nemesis", "none", "--time-limit", "5", "-o", str(tmp_path)
    )
    assert code == 254, out + err
    assert err.strip().splitlines()[-1] == (
        "harness: Refusing clock faults on n1: its clock is this machine's"
    )
    assert "crashed" not in err and "Traceback" not in err
    test = json.loads((tmp_path / "latest" / "test.json").read_text())
    assert test["status"] == "failed" and "Refusing clock faults" in test["failed"]["error"]
    code, out, _ = run(capsys, "check", str(tmp_path / "latest"))
    assert code != 0 and "valid (" not in out.replace("unknown (", "")
