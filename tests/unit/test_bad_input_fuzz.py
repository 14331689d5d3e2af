"""A bounded run of the input fuzzer (scripts/fuzz_inputs.py): hundreds of mutated
histories and run directories, checked in-process; any traceback, checker crash, hang,
overrun of the time limit, verdict on an input that cannot be a history, error of more
than one line or not naming its file (and line), or change outside the output root fails
the test. The long round is by hand: ``scripts/fuzz_inputs.py --count 100000``."""

from __future__ import annotations

import subprocess
import sys
import time
from ast import literal_eval
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from fuzz_inputs import (
    FILE_MUTATIONS,
    FINDINGS,
    RARE,
    Answer,
    Mutant,
    Seed,
    _judge,
    all_seeds,
    fuzz,
)

ROOT = Path(__file__).resolve().parents[2]
INPUTS = 600
BY_HAND = ("--count", "60", "--seed", "3", "--shared-limit", "1", "--rare", "0")


def test_hundreds_of_mutated_inputs_get_clean_errors_or_verdicts(tmp_path: Path) -> None:
    seeds = all_seeds(tmp_path / "seeds", [], shared_limit=4)
    started = time.perf_counter()
    report = fuzz(seeds, INPUTS, seed=29, time_limit=10, hang=30, rare=0.01)
    assert time.perf_counter() - started < 60  # about 15 s on a quiet 2-core machine
    assert report.findings == [], "\n".join(report.findings[:20])
    outcomes = report.outcomes()
    assert sum(outcomes.values()) == INPUTS and not set(outcomes) & set(FINDINGS)
    # every mutation was tried, the huge ones too, and most inputs were refused in one line
    tried = {m for m, _ in report.counts}
    assert tried == {*FILE_MUTATIONS, "special", "link", "run-link", "missing"}, tried
    assert tried >= RARE
    assert outcomes["error"] > INPUTS * 0.7 and outcomes["verdict"] > 0
    assert set(outcomes) == {"error", "verdict"}


def test_the_long_round_by_hand_prints_counts_per_class_and_outcome() -> None:
    """What ``--count N --seed S`` prints: the counts per mutation class (with its slowest
    input) and per outcome, then the findings; exit 0 without a finding."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fuzz_inputs.py"), *BY_HAND],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    assert lines[0].endswith("60 inputs, seed 3") and lines[1].startswith("60 inputs in")
    assert lines[2] == "per mutation class (slowest input in s):"
    rows = [line for line in lines if line.startswith("  ") and "{" in line]
    assert sum(sum(literal_eval(r[r.index("{") : r.index("}") + 1]).values()) for r in rows) == 60
    assert any(line.startswith("per outcome: {") for line in lines)
    assert lines[-1] == "findings: 0"


RUN = Seed("synthetic-lock", Path("run"), "dir")
FILE = Seed("tiny.jsonl", Path("tiny.jsonl"), "jsonl")


@pytest.mark.parametrize(
    ("mutant", "answer", "took", "outcome"),
    [
        # a tampered run: valid only saying which record changed, never on a broken log
        (Mutant(RUN, "fewer-lines", False, record="history.jsonl", evidence=True),
         Answer(valid=True), 0.1, "valid-without-evidence"),
        (Mutant(RUN, "fewer-lines", False, record="history.jsonl", evidence=True),
         Answer(valid=True, changed=True), 0.1, "verdict"),
        (Mutant(RUN, "missing", False, record="resource.jsonl", evidence=True),
         Answer(valid=True, changed=True), 0.1, "valid-without-evidence"),
        (Mutant(RUN, "missing", False, record="resource.jsonl", evidence=True),
         Answer(valid="unknown"), 0.1, "verdict"),
        # an error names the file, and for a semantic mutation its line
        (Mutant(FILE, "pairing-f", True), Answer(message="tiny.jsonl:4: process 1's ok"),
         0.1, "error"),
        (Mutant(FILE, "pairing-f", True), Answer(message="tiny.jsonl: process 1's ok"),
         0.1, "unnamed-line"),
        (Mutant(FILE, "truncate", False), Answer(message="line 3: cut"), 0.1, "unnamed-file"),
        (Mutant(FILE, "truncate", False), Answer(message="tiny.jsonl:3\nmore"), 0.1,
         "long-message"),
        # the limit kept, no crash, no verdict on what cannot be a history
        (Mutant(FILE, "huge-history", False), Answer(valid="unknown"), 12.5, "overrun"),
        (Mutant(FILE, "truncate", False), Answer(valid=True, crashed=True), 0.1, "crashed"),
        (Mutant(FILE, "empty", True), Answer(valid=True), 0.1, "verdict-on-bad-input"),
    ],
)  # fmt: skip
def test_the_oracles(mutant: Mutant, answer: Answer, took: float, outcome: str) -> None:
    """What each answer is called: the findings are what the fuzzer fails on."""
    path = Path("/w/input") / ("run" if mutant.seed.fmt == "dir" else "tiny.jsonl")
    assert _judge(mutant, path, answer, took, 10.0) == outcome
