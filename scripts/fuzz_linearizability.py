#!/usr/bin/env python3
"""Fuzz the linearizability checker against the plain WGL search and brute force.

For each of COUNT random histories (simulated clients, some results corrupted, some
operations of unknown outcome), the optimized checker's verdict must equal the plain
Wing & Gong search's, and, for small ones, brute force's; simulated histories without
corruption must be valid; a partition the unproduced-state refutation refutes must be one
the plain search finds invalid. Each reduction is also run alone on a share of the cases.
Disagreements are printed with the seed that reproduces them; the exit code is 1 if any.

    .venv/bin/python scripts/fuzz_linearizability.py --count 20000
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checkers.linear import bits as bits_module
from checkers.linear import unproduced
from checkers.linear.brute import brute_check
from checkers.linear.models import MODELS
from checkers.linear.plain import plain_check
from checkers.linear.prepare import problems
from checkers.linear.schedule import Budget, run_searches
from checkers.linear.search import REDUCTIONS, Search
from checkers.linear.simulate import SIMULATED, simulate
from checkers.linearizability import check

CHECK_SECONDS = 10.0


def one_case(seed: int, max_ops: int) -> list[str]:
    """The disagreements found on the history made from ``seed`` (empty when none)."""
    rng = random.Random(seed)
    model = rng.choice(SIMULATED)
    corrupt = rng.choice((0.0, 0.02, 0.1, 0.3))
    history = simulate(
        model,
        rng.randint(1, max_ops),
        processes=rng.randint(1, 7),
        keys=rng.choice((1, 1, 2, 3)),
        values=rng.randint(2, 5),
        p_info=rng.choice((0.0, 0.05, 0.2, 0.4)),
        corrupt=corrupt,
        seed=seed,
    )
    m = MODELS[model]
    probs = problems(history, m)
    got = check(history, model, time_limit=CHECK_SECONDS).valid
    out = []
    if got == "unknown":
        return [f"seed {seed} {model}: no verdict within {CHECK_SECONDS} s (slow, not wrong)"]
    plain = [plain_check(p, m, 200_000) for p in probs]
    expected = False if False in plain else ("unknown" if "unknown" in plain else True)
    for p, v in zip(probs, plain, strict=True):  # the refutation runs on big partitions only
        if v is not False and unproduced.verdict(p, m) is not None:
            out.append(f"seed {seed} {model}: unproduced-state refutation, plain search {v}")
    if expected != "unknown" and got != expected:
        out.append(f"seed {seed} {model}: optimized {got}, plain {expected}")
    if corrupt == 0.0 and got is not True:
        out.append(f"seed {seed} {model}: simulated linearizable history judged {got}")
    if len(history) <= 24:
        brute = all(brute_check(p, m) for p in probs)
        if got != brute:
            out.append(f"seed {seed} {model}: optimized {got}, brute force {brute}")
    if expected != "unknown" and rng.random() < 0.3:
        for r in sorted(REDUCTIONS):
            for subset in (frozenset({r}), REDUCTIONS - {r}):
                searches = [Search(p, m, subset) for p in probs]
                budget = Budget(time.perf_counter() + CHECK_SECONDS)
                verdicts = [x.valid for x in run_searches(searches, budget)]
                if "unknown" in verdicts and False not in verdicts:
                    continue  # too slow without the other reductions: not a disagreement
                v = all(x is True for x in verdicts)
                if v != expected:
                    out.append(f"seed {seed} {model}: reductions {sorted(subset)} gave {v}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--count", type=int, default=1000, help="histories to try")
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    ap.add_argument("--max-ops", type=int, default=30, help="operations per history, at most")
    ap.add_argument(
        "--big-mode",
        action="store_true",
        help="use the big-partition mode (lean frames, computed masks) on every partition",
    )
    args = ap.parse_args()
    if args.big_mode:
        bits_module.LEAN = bits_module.TABLE_BITS = 0
    started = time.perf_counter()
    failures = slow = 0
    for seed in range(args.seed, args.seed + args.count):
        for line in one_case(seed, args.max_ops):
            if "slow, not wrong" in line:
                slow += 1
            else:
                failures += 1
            print(line, flush=True)
        done = seed - args.seed + 1
        if done % 1000 == 0:
            print(f"{done} histories, {failures} disagreements", file=sys.stderr, flush=True)
    took = time.perf_counter() - started
    print(f"{args.count} histories in {took:.1f} s: {failures} disagreements, {slow} too slow")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
