"""Sweep the sim target: many seeds under each fault must be valid, every sim bug caught.

    .venv/bin/python scripts/sim_sweep.py                    # 20 runs per fault, 3 per bug
    .venv/bin/python scripts/sim_sweep.py --runs 2 --bug-runs 1 --out /tmp/sweep
    .venv/bin/python scripts/sim_sweep.py --faults kill --bugs forget-on-restart

Each run is ``harness run --target sim`` with short timings (10 s of operations, 2 s of
recovery), one after another (the machine is shared; a run takes 15-25 s). Fault runs
cycle through the workloads that fault applies to, seed 1, 2, 3...; every one must be
valid (exit 0). Each sim bug runs in the scenario that exposes it and must be invalid
(exit 1). Prints one line per run and the counts; exits 0 when every run met its
expectation, 1 otherwise (a run's results directory says why).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

HARNESS = "import sys; from harness.cli import main; sys.exit(main())"
VERDICTS = {0: "valid", 1: "invalid", 2: "unknown", 254: "bad-input", 255: "crash"}
COMMON = ("--time-limit", "10", "--recovery-time", "2", "--lease-ttl", "2", "--keepalive", "0.5")
FAULTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # fault -> (its options, the workloads it applies to)
    "kill": (
        ("--nemesis", "kill", "--nemesis-interval", "2"),
        ("lock", "cas-register", "election"),
    ),
    "pause": (
        ("--nemesis", "pause", "--nemesis-interval", "2"),
        ("lock", "cas-register", "election"),
    ),
    "client-pause": (
        ("--nemesis", "client-pause", "--pause-at", "3", "--pause-for", "4"),
        ("lock", "election", "cas-register"),
    ),
}
BUGS: dict[str, tuple[str, ...]] = {
    # bug -> the scenario that exposes it (must be invalid)
    "lock-ignores-lease": ("--workload", "lock", "--nemesis", "none"),
    "token-reuse": ("--workload", "lock", "--nemesis", "none"),
    "stale-read": ("--workload", "cas-register", "--nemesis", "none"),
    "epoch-reuse": ("--workload", "election", "--nemesis", "none"),
    # a holder's work spans a restart and it renews rarely: the empty server grants again
    "forget-on-restart": (
        "--workload",
        "lock",
        "--nemesis",
        "kill",
        "--nemesis-interval",
        "2",
        "--lease-ttl",
        "10",
        "--keepalive",
        "5",
        "--work-time",
        "4",
        "--op-timeout",
        "8",
    ),
}


@dataclass(frozen=True)
class Run:
    """One planned run: its group (a fault, or a bug), what it is, its options, the
    verdict it must have."""

    group: str
    label: str
    args: tuple[str, ...]
    expect: str


def plan(faults: Sequence[str], runs: int, bugs: Sequence[str], bug_runs: int) -> list[Run]:
    """The runs of a sweep, in order: faults (seeds 1..runs), then bugs (seeds 1..bug_runs)."""
    out = []
    for fault in faults:
        options, workloads = FAULTS[fault]
        for i in range(runs):
            w = workloads[i % len(workloads)]
            out.append(
                Run(
                    fault,
                    f"{fault} {w} seed {i + 1}",
                    (*COMMON, "--workload", w, *options, "--seed", str(i + 1)),
                    "valid",
                )
            )
    for bug in bugs:
        for i in range(bug_runs):
            out.append(
                Run(
                    f"bug {bug}",
                    f"bug {bug} seed {i + 1}",
                    (*COMMON, *BUGS[bug], "--sim-bug", bug, "--seed", str(i + 1)),
                    "invalid",
                )
            )
    return out


def run_one(run: Run, out: Path) -> str:
    """Do one run (``harness run --target sim``); its verdict."""
    cmd = [
        sys.executable,
        "-c",
        HARNESS,
        "run",
        "--target",
        "sim",
        *run.args,
        "--out-dir",
        str(out),
    ]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return VERDICTS.get(proc.returncode, f"exit {proc.returncode}")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="runs per fault (default: 20)")
    parser.add_argument("--bug-runs", type=int, default=3, help="runs per bug (default: 3)")
    parser.add_argument("--faults", nargs="*", default=list(FAULTS), choices=list(FAULTS))
    parser.add_argument("--bugs", nargs="*", default=list(BUGS), choices=list(BUGS))
    parser.add_argument(
        "--out", type=Path, default=Path("results/sim-sweep"), help="results folder of the runs"
    )
    args = parser.parse_args(argv)
    runs = plan(args.faults, args.runs, args.bugs, args.bug_runs)
    tally: Counter[tuple[str, str]] = Counter()
    missed = []
    for i, run in enumerate(runs, 1):
        t0 = time.monotonic()
        verdict = run_one(run, args.out)
        tally[(run.group, verdict)] += 1
        mark = "ok" if verdict == run.expect else f"EXPECTED {run.expect}"
        if verdict != run.expect:
            missed.append(run.label)
        print(
            f"[{i}/{len(runs)}] {run.label}: {verdict} ({time.monotonic() - t0:.0f} s) {mark}",
            flush=True,
        )
    print("\ncounts:")
    for group in dict.fromkeys(r.group for r in runs):
        counts = ", ".join(f"{n} {v}" for (g, v), n in sorted(tally.items()) if g == group)
        print(f"  {group}: {counts}")
    print(
        f"{len(runs) - len(missed)} of {len(runs)} runs as expected"
        + (f"; not: {', '.join(missed)}" if missed else "")
    )
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
