#!/usr/bin/env python3
"""What the final check saves by starting from the live check's cuts (issue 33).

For a run directory of a workload checked for linearizability (cas-register), the live
check is played again over its history (each op added in order, a turn every 200 ms of
the run's time, as ``harness.live_check`` does during a run), then the run's
linearizability check is timed, ``--rounds`` times each, on the whole history (what
``harness check RUN`` does) and from the cuts the live check left (what the check that
ends the run does); each figure is the median of its rounds.

    .venv/bin/harness run --workload cas-register --keys 1 --concurrency 24 --rate 3000 \\
        --nemesis none --time-limit 15 --recovery-time 0 --seed 4 -o /tmp/runs
    .venv/bin/python scripts/bench_resume.py /tmp/runs/latest
"""

from __future__ import annotations

import argparse
import statistics
import time
from dataclasses import replace
from pathlib import Path

from checkers import linearizability
from checkers.record import RunRecord
from core.run_clock import RunClock
from harness.analysis import load_record
from harness.live_check import LiveCheck

TURN_NS = 200_000_000


def _median_ms(record: RunRecord, rounds: int) -> tuple[float, str]:
    """The median time of the record's linearizability check, and its summary."""
    times, summary = [], ""
    for _ in range(rounds):
        started = time.perf_counter()
        summary = linearizability.check_record(record).summary
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a run directory")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    record = load_record(args.run.resolve())
    live = LiveCheck(record.option("model", linearizability.DEFAULT_MODEL), RunClock())
    turn = None
    for op in record.history:
        if turn is None or op.time - turn > TURN_NS:
            live.check_now()
            turn = op.time
        live.add(op)
    live.check_now()
    cut = sum(len(c.ops) for c in live.cuts.values())
    print(f"{len(record.history)} events; the live check's cuts cover {cut} of them")
    whole, said = _median_ms(record, args.rounds)
    resumed, said_resumed = _median_ms(replace(record, proven=live.cuts), args.rounds)
    print(f"whole history: {whole:.1f} ms (median of {args.rounds}): {said}")
    print(f"from the cuts: {resumed:.1f} ms (median of {args.rounds}): {said_resumed}")


if __name__ == "__main__":
    main()
