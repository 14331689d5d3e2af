"""A bounded run of the input fuzzer (scripts/fuzz_inputs.py): thousands of mutated
histories and run directories, checked in-process; any traceback, hang, verdict on an
input that cannot be a history, error of more than one line, or write outside a run
directory through a planted link fails the test."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from fuzz_inputs import FILE_MUTATIONS, FINDINGS, all_seeds, fuzz

INPUTS = 2500


def test_thousands_of_mutated_inputs_get_clean_errors_or_verdicts(tmp_path: Path) -> None:
    seeds = all_seeds(tmp_path / "seeds", [], shared_limit=4)
    started = time.perf_counter()
    report = fuzz(seeds, INPUTS, seed=16, time_limit=10, hang=30)
    assert time.perf_counter() - started < 120  # about 40 s on a quiet 2-core machine
    assert report.findings == [], "\n".join(report.findings[:20])
    outcomes = report.outcomes()
    assert sum(outcomes.values()) == INPUTS and not set(outcomes) & set(FINDINGS)
    # every mutation was tried, and most inputs were refused in one line
    assert {m for m, _ in report.counts} == {*FILE_MUTATIONS, "special", "link"}
    assert outcomes["error"] > INPUTS * 0.7 and outcomes["verdict"] > 0
