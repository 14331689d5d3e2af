#!/usr/bin/env python3
"""Measure the unique-values fast path (``checkers.linear.unique``) against the search.

Issue 10 asked whether a precedence-graph check (networkx) beats the search where every
written value is unique, and to measure before keeping it. Per size: a simulated
single-key register history with unique written values (writes, reads and
compare-and-sets; ``--corrupt`` makes some reads see another written value), checked by
the search alone and by the fast path, with both verdicts.

    .venv/bin/python scripts/measure_graph_path.py [--sizes 1000,10000,100000]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checkers.linear import unique
from checkers.linear.models import get_model
from checkers.linear.prepare import problems
from checkers.linear.schedule import Budget, run_searches
from checkers.linear.search import Search
from checkers.linear.simulate import simulate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--corrupt", default="0,0.01")
    ap.add_argument("--time-limit", type=float, default=120.0, help="for the search, s")
    args = ap.parse_args()
    model = get_model("register")
    print(f"{'ops':>8} {'corrupt':>8} {'search ms':>10} {'fast ms':>10}  verdicts")
    for n in map(int, args.sizes.split(",")):
        for corrupt in map(float, args.corrupt.split(",")):
            history = simulate(
                "register", n, processes=10, keys=1, values=0, p_info=0.02, corrupt=corrupt, seed=n
            )
            (problem,) = problems(history, model)
            started = time.perf_counter()
            fast = unique.verdict(problem, model)
            fast_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            (searched,) = run_searches(
                [Search(problem, model)], Budget(time.perf_counter() + args.time_limit)
            )
            search_ms = (time.perf_counter() - started) * 1000
            verdict = "n/a" if fast is None else fast.valid
            agree = searched.valid == "unknown" or verdict == "n/a" or searched.valid == verdict
            print(
                f"{n:8} {corrupt:8} {search_ms:10.1f} {fast_ms:10.1f}  search "
                f"{searched.valid}, fast path {verdict}{'' if agree else '  DISAGREE'}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
