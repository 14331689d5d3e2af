#!/usr/bin/env python3
"""Dense single-key histories: this tree's check time beside a baseline tree's, one run.

The rows of issue 36: ``scripts/gen_history.py --keys 1 --concurrency 10`` at 20,000 and
50,000 operations (the register model, seed 1; cached under ``--cache``). Each tree checks
each history in a fresh process of its own interpreter (``TREE/.venv/bin/python``: its own
compiled search), ``--reps`` times after one unmeasured check; the time is porcupine's
measure, to the verdict without a counterexample (``check(..., explain=False)``'s
``verdict_s``), reading excluded. The trees take turns within a round and the minimum over
``--rounds`` rounds is kept (the machine is shared: a minimum is the least disturbed run).

The floors: at most porcupine's time on this kind of machine (188 ms and 668 ms) and at
least 1.2x and 1.7x faster than the baseline (main at af2c204). The baseline tree is made
with ``git worktree add /tmp/af2c204 af2c204`` and its own ``make setup``.

    .venv/bin/python scripts/bench_dense.py --baseline /tmp/af2c204
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]


class Row(NamedTuple):
    """One dense case: operations, porcupine's time (ms) and the least speed-up asked of
    this tree over the baseline."""

    ops: int
    porcupine_ms: float
    speedup: float


ROWS = {"dense-20k": Row(20_000, 188.0, 1.2), "dense-50k": Row(50_000, 668.0, 1.7)}

CHILD = """
import json, sys
sys.path.insert(0, sys.argv[1])
from checkers.linearizability import check
from core import compiled
from core.formats import read_history
history, model = read_history(sys.argv[2])
best = float("inf")
for i in range(int(sys.argv[3]) + 1):
    result = check(history, model or "register", explain=False)
    if i:
        best = min(best, result.details["verdict_s"])
print(json.dumps({"s": best, "valid": result.valid, "compiled": compiled.active(),
                  "path": result.details.get("path", "general")}))
"""


def generated(name: str, row: Row, cache: Path) -> Path:
    """The row's history file, generated on first use."""
    path = cache / name / "history.jsonl"
    if not path.exists():
        argv = [sys.executable, str(ROOT / "scripts" / "gen_history.py"), str(path),
                "--ops", str(row.ops), "--keys", "1", "--concurrency", "10"]  # fmt: skip
        subprocess.run(argv, check=True, capture_output=True)
    return path


def timed(tree: Path, path: Path, reps: int) -> dict[str, Any]:
    """``tree``'s best time to the verdict of ``path`` (its own interpreter and build)."""
    python = tree / ".venv" / "bin" / "python"
    proc = subprocess.run(
        [str(python), "-c", CHILD, str(tree), str(path), str(reps)],
        capture_output=True,
        text=True,
        cwd=tree,
    )
    if proc.returncode:
        raise SystemExit(f"{tree}: the check failed: {proc.stderr.strip()[-300:]}")
    return dict(json.loads(proc.stdout.splitlines()[-1]))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", type=Path, required=True, help="the baseline tree")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the trees taking turns")
    ap.add_argument("--reps", type=int, default=3, help="checks per process")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/harness-bench-histories"))
    args = ap.parse_args()
    trees = {"this": ROOT, "baseline": args.baseline.resolve()}
    for name, tree in trees.items():
        if not (tree / ".venv" / "bin" / "python").exists():
            ap.error(f"{name} tree {tree} has no .venv: run make setup in it")
    paths = {name: generated(name, row, args.cache) for name, row in ROWS.items()}
    best: dict[tuple[str, str], dict[str, Any]] = {}
    for _ in range(args.rounds):
        for name in ROWS:
            for tree_name, tree in trees.items():
                got = timed(tree, paths[name], args.reps)
                kept = best.get((name, tree_name))
                if kept is None or got["s"] < kept["s"]:
                    best[name, tree_name] = got
    print(f"{'case':10} {'ops':>7} {'verdict':>8} {'this':>9} {'baseline':>10} {'speed-up':>9} "
          f"{'floor':>6} {'porcupine':>10}  this path, baseline path")  # fmt: skip
    failed = 0
    for name, row in ROWS.items():
        ours, base = best[name, "this"], best[name, "baseline"]
        speedup = base["s"] / ours["s"]
        ok = ours["s"] * 1000 <= row.porcupine_ms and speedup >= row.speedup
        ok = ok and ours["valid"] is True and base["valid"] is True
        failed += not ok
        print(
            f"{name:10} {row.ops:7} {ours['valid']!s:>8} {ours['s'] * 1000:6.1f} ms "
            f"{base['s'] * 1000:7.1f} ms {speedup:8.1f}x {row.speedup:5.1f}x "
            f"{row.porcupine_ms:7.0f} ms  {ours['path']}, {base['path']}"
            + ("" if ok else "  BELOW THE FLOOR")
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
