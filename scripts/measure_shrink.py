#!/usr/bin/env python3
"""How far ``harness check --shrink`` shrinks the invalid reference histories, and whether
what it writes is still invalid, no larger than the input and made within the budget.

For every file of ``../shared/histories/MANIFEST.tsv`` whose verdict is not-linearizable,
``harness check FILE --shrink OUT --time-limit S`` by the command's own path
(``harness.checkcmd.check_path``), then ``harness check OUT`` the same way: one line per
file (its operations, the shrunk ones, whether minimal, the shrink's seconds), then the
totals. Exit 1 when any shrunk history is missing, valid, larger than its input or made
past the time limit.

With ``--sim``, sim runs instead: each bug the linearizability checker sees (a stale
read; a write forgotten on restart, under kills) for a few seeds, ``harness run`` in a
temporary folder, and the shrunk counterexample its results.json carries: one line per run
(the run's operations, the shrunk ones, whether minimal), exit 1 when a run has none.

    .venv/bin/python scripts/measure_shrink.py              # 60 s per file
    .venv/bin/python scripts/measure_shrink.py --time-limit 10
    .venv/bin/python scripts/measure_shrink.py --sim --seeds 3
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "histories"
SIM_BUGS = {  # bug: the run's own options beside it
    "stale-read": ["--workload", "cas-register"],
    "forget-on-restart": ["--workload", "cas-register", "--nemesis", "kill"],
}


def invalid_histories() -> list[Path]:
    """The reference histories their authors say are not linearizable."""
    with open(SHARED / "MANIFEST.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [SHARED / r["file"] for r in rows if r["expected_verdict"] == "not-linearizable"]


def sim_runs(seeds: int) -> int:
    """Each sim bug for ``seeds`` seeds: the shrunk counterexample of its run."""
    bad = 0
    print("bug\tseed\toperations\tshrunk\tminimal")
    with tempfile.TemporaryDirectory() as tmp:
        for bug, options in SIM_BUGS.items():
            for seed in range(1, seeds + 1):
                argv = [str(ROOT / ".venv" / "bin" / "harness"), "run", "--sim-bug", bug]
                argv += [*options, "--time-limit", "10", "--seed", str(seed), "-o", tmp]
                subprocess.run(argv, capture_output=True, check=False, timeout=300)
                found = sorted(Path(tmp).glob(f"*bug-{bug}/*/results.json"))[-1:]
                results = json.loads(found[0].read_text()) if found else {}
                lin = (results.get("checkers") or {}).get("linearizability") or {}
                shrunk = lin.get("shrunk") or {}
                bad += not shrunk
                print(
                    f"{bug}\t{seed}\t{shrunk.get('of')}\t{shrunk.get('operations')}\t"
                    f"{shrunk.get('minimal')}",
                    flush=True,
                )
                for f in found:
                    f.unlink()  # the next seed's is the only one left
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per file")
    ap.add_argument("--sim", action="store_true", help="sim runs with bugs instead")
    ap.add_argument("--seeds", type=int, default=3, help="seeds per sim bug")
    args = ap.parse_args()
    if args.sim:
        return sim_runs(args.seeds)
    sys.path.insert(0, str(ROOT))
    from harness.checkcmd import check_path

    bad = 0
    sizes: list[tuple[int, int]] = []
    print("file\toperations\tshrunk\tminimal\tseconds")
    with tempfile.TemporaryDirectory() as tmp:
        for path in invalid_histories():
            out = Path(tmp) / path.name
            started = time.perf_counter()
            first = check_path(
                path,
                model=None,
                time_limit=args.time_limit,
                memory_limit=None,
                out=None,
                oom=[b""],
                shrink=out,
            )
            seconds = time.perf_counter() - started
            shrunk = (first["details"].get("shrunk") or {}) if out.exists() else {}
            again = (
                check_path(out, model=None, time_limit=None, memory_limit=None, out=None, oom=[b""])
                if out.exists()
                else {"valid": None, "ops": 0}
            )
            fine = (
                again["valid"] is False
                and again["ops"] <= first["ops"]
                and seconds <= args.time_limit
            )
            bad += not fine
            n, k = shrunk.get("key_operations", 0), shrunk.get("operations", 0)
            sizes.append((shrunk.get("of", 0), k))
            name = path.relative_to(SHARED)
            flag = "" if fine else f"\tFAILED: again {again['valid']}, {first.get('shrunk')}"
            print(
                f"{name}\t{shrunk.get('of')} ({n} of its key)\t{k}\t"
                f"{shrunk.get('minimal')}\t{seconds:.3f}{flag}",
                flush=True,
            )
    ks = sorted(k for _, k in sizes)
    print(
        f"{len(sizes) - bad}/{len(sizes)} shrunk, still invalid, no larger, within "
        f"{args.time_limit:g} s; shrunk operations: min {ks[0]}, median {ks[len(ks) // 2]}, "
        f"max {ks[-1]}; input operations {sum(n for n, _ in sizes):,} -> {sum(ks):,}"
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
