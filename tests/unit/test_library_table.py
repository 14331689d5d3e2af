"""``scripts/library_table.py``: the README's table of lock libraries, from a suite's
results. The first kazoo run with a stale write accepted crashed it: mutex's
``stale_accepted`` is the list of those writes, not a count."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.names import ROOT


def _run(
    tmp_path: Path,
    stale: list[dict[str, object]],
    released: dict[str, object] | None = None,
    attribution: dict[str, object] | None = None,
) -> Path:
    run = tmp_path / "suite-libraries" / "t" / "kazoo-client-pause" / "r"
    run.mkdir(parents=True)
    test = {
        "options": {
            "target": "zookeeper",
            "nemesis": ["client-pause"],
            "lock": "kazoo",
            "work_time": 1 if released else 0.1,
        },
        "lock_library": {"library": "kazoo", "version": "2.11.0", "offers": "no fencing token"},
    }
    (run / "test.json").write_text(json.dumps(test))
    mutex = {"overlap_groups": [{"both_believed_s": 3.4}], "overlaps": [], "stale_accepted": stale}
    if released is not None:
        mutex["released_another"] = released
    results: dict[str, object] = {"checkers": {"mutex": mutex}}
    if attribution is not None:
        results["attribution"] = attribution
    (run / "results.json").write_text(json.dumps(results))
    (run / "events.jsonl").write_text('{"event": "lease-lost"}\n{"event": "lease-granted"}\n')
    outcomes = [{"name": "kazoo-client-pause", "valid": False, "run_dir": str(run)}]
    (run.parent.parent / "suite.json").write_text(json.dumps({"outcomes": outcomes}))
    return tmp_path / "suite-libraries"


def table(folder: Path) -> subprocess.CompletedProcess[str]:
    script = ROOT / "scripts" / "library_table.py"
    return subprocess.run(
        [sys.executable, str(script), str(folder)], capture_output=True, text=True, timeout=60
    )


def test_a_stale_write_accepted_is_counted_in_its_row(tmp_path: Path) -> None:
    out = table(_run(tmp_path, [{"writer": 2, "time": 14.086}]))
    assert out.returncode == 0, out.stderr
    (row,) = out.stdout.splitlines()[2:]
    assert row.startswith("| kazoo | 2.11.0 | zookeeper | client-pause | invalid |"), row
    assert "1 holder overtaken (believed on up to 3.4 s)" in row
    assert "1 stale write accepted, 1 loss the library said | not measured |" in row


def test_a_row_says_whose_doing_it_was_and_whether_a_release_freed_another_s_lock(
    tmp_path: Path,
) -> None:
    blamed = {"party": "library", "library": "kazoo", "version": "2.11.0", "evidence": "..."}
    out = table(_run(tmp_path, [], {"releases": "no", "kept": 1}, blamed))
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].endswith("| releases another's lock | what it offers |")
    (row,) = out.stdout.splitlines()[2:]
    assert "| client-pause (work 1 s) | invalid (library) |" in row
    assert "1 loss the library said | no | no fencing token |" in row


def test_no_results_is_one_line(tmp_path: Path) -> None:
    out = table(tmp_path)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.strip() == f"no suite.json with runs under {tmp_path}"
