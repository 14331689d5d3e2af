"""Sweep the herd effect on one target: N waiters for each recipe, one run after another.

    .venv/bin/python scripts/herd_sweep.py --target etcd           # N = 5, 10, 20, 40
    .venv/bin/python scripts/herd_sweep.py --target sim --waiters 5,10 --out /tmp/herd
    flock /work/docker.lock .venv/bin/python scripts/herd_sweep.py --target zookeeper

Each run is ``harness run --workload herd --recipe R --concurrency N`` without faults,
short work (50 ms) and a wait long enough for a queue of 40 (``COMMON``). Prints the table
of notifications, failed attempts and requests per handoff, request rate and handoff
latency per run (the same as ``harness compare`` of the runs prints under its matrix),
and writes ``herd.html`` (the plot and the table) in the output folder. The recipes a
target lacks are refused by the run and left out. Exits 0 when every run was valid, 1
otherwise (a run's results directory says why).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

HARNESS = "import sys; from harness.cli import main; sys.exit(main())"
COMMON = (
    "--nemesis",
    "none",
    "--work-time",
    "0.05",
    "--acquire-wait",
    "15",
    "--lease-ttl",
    "5",
    "--keepalive",
    "1",
    "--recovery-time",
    "1",
)
REFUSED = 254


def run_one(target: str, recipe: str, waiters: int, time_limit: float, out: Path) -> int:
    """One run; its exit code."""
    argv = [
        *("--target", target, "--workload", "herd", "--recipe", recipe),
        *("--concurrency", str(waiters), "--time-limit", f"{time_limit:g}"),
        *COMMON,
        *("--name", f"herd-{target}-{recipe}-{waiters}", "-o", str(out)),
    ]
    done = subprocess.run(
        [sys.executable, "-c", HARNESS, "run", *argv], capture_output=True, text=True
    )
    last = (done.stdout.strip().splitlines() or [""])[-1]
    print(f"{target} {recipe} N={waiters}: exit {done.returncode} {last}", flush=True)
    if done.returncode == REFUSED:
        print(f"  refused: {done.stderr.strip()}", flush=True)
    return done.returncode


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--target", default="sim")
    p.add_argument("--waiters", default="5,10,20,40", help="comma-separated N")
    p.add_argument("--recipes", default="naive,queue")
    p.add_argument("--time-limit", type=float, default=20.0, help="seconds per run")
    p.add_argument("--out", type=Path, default=Path("results/herd-sweep"))
    args = p.parse_args(argv)
    from harness.report import across_markdown, across_page, find_run_dirs, load_run, write_page

    out = args.out / args.target
    codes = [
        run_one(args.target, recipe, int(n), args.time_limit, out)
        for recipe in args.recipes.split(",")
        for n in args.waiters.split(",")
    ]
    runs = [load_run(d) for d in find_run_dirs([out])]
    print(across_markdown(runs))
    html = write_page(out / "herd.html", across_page(runs, "Herd effect"))
    print(f"plot and table: {html}")
    return 0 if all(c in (0, REFUSED) for c in codes) else 1


if __name__ == "__main__":
    sys.exit(main())
