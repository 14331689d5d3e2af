#!/usr/bin/env python3
"""Benchmark the linearizability checker on the reference histories and on big ones.

Per reference file: the time from a read history to a verdict (reading excluded; the
minimum of --reps runs; porcupine's measure: ``check(..., explain=False)``), the time with
the counterexample built (``+explain``), the peak memory the check allocates (tracemalloc, one extra
run), and porcupine's time from MANIFEST.tsv. Then totals per family and the floors:

- all etcd logs in under 36 ms of checking in total (porcupine: 363 ms);
- kv c50-ok under 80 ms, kv c50-bad under 10 ms.

``--big N[,N...]`` also generates linearizable histories of N operations (``--model``,
register by default) over ``--keys`` keys (``scripts/gen_history.py``), writes them as
JSONL, and checks each in a fresh process: check time and peak memory (how far the
machine's available memory falls while that process reads and checks, its forked workers
included; floor for 1,000,000 ops: under 30 s and 2 GiB; run it on an otherwise idle
machine), and time per operation, which should stay about flat.

    .venv/bin/python scripts/bench_linearizability.py
    .venv/bin/python scripts/bench_linearizability.py --big 250000,500000,1000000

What a user waits for, start-up and reading included (whole ``harness check`` processes
per reference set, the generated many-key and one-key cases, a profile per phase), is
``scripts/bench_process.py``'s.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checkers.linearizability import check  # noqa: E402
from core import compiled  # noqa: E402
from core.formats import read_history  # noqa: E402

SHARED = ROOT.parent / "shared" / "histories"
FLOORS_MS = {"etcd total": 36.0, "porcupine/kv/c50-ok.txt": 80.0, "porcupine/kv/c50-bad.txt": 10.0}
EXPECTED = {"linearizable": True, "not-linearizable": False}


def time_check(history: Any, model: str, reps: int) -> tuple[float, float, Any]:
    """The minimum wall times of ``reps`` checks (seconds): to the verdict (porcupine's
    measure: no counterexample built), and with the counterexample; the last result."""
    best = explained = float("inf")
    result = None
    for _ in range(reps):
        # The previous result is freed here (by reference counting), not when the new one
        # replaces it: that would put its deallocation inside the timed region. No
        # gc.collect(): it empties CPython's free lists, which a process checking file
        # after file (``harness check``) keeps warm.
        result = None
        started = time.perf_counter()
        result = check(history, model, time_limit=120, explain=False)
        best = min(best, time.perf_counter() - started)
        result = None
        started = time.perf_counter()
        result = check(history, model, time_limit=120)
        explained = min(explained, time.perf_counter() - started)
    return best, explained, result


def peak_kib(history: Any, model: str) -> float:
    tracemalloc.start()
    check(history, model, time_limit=120)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1024


def references(reps: int, only: str | None) -> bool:
    with open(SHARED / "MANIFEST.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    rows = [r for r in rows if r["file"].endswith((".log", ".txt", ".edn"))]
    if only:
        rows = [r for r in rows if only in r["file"]]
    totals: dict[str, list[float]] = {}
    wrong = 0
    print(
        f"{'file':48} {'events':>6} {'verdict':>8} {'ms':>9} {'+explain':>9} {'porc ms':>9} "
        f"{'peak KiB':>9}"
    )
    for r in rows:
        history, model = read_history(SHARED / r["file"])
        took, explained, result = time_check(history, model, reps)
        expected = EXPECTED.get(r["expected_verdict"], True)
        ok = result.valid is expected
        wrong += not ok
        family = "etcd" if "/jepsen/" in r["file"] else r["file"].split("/")[1]
        porcupine = float(r["porcupine_ms_min"] or "nan")
        t = totals.setdefault(family, [0.0, 0.0, 0.0])
        t[0] += took * 1000
        t[1] += porcupine if porcupine == porcupine else 0.0
        t[2] += explained * 1000
        mark = "" if ok else "  WRONG"
        print(
            f"{r['file']:48} {len(history):6} {result.valid!s:>8} {took * 1000:9.3f} "
            f"{explained * 1000:9.3f} "
            f"{porcupine:9.3f} {peak_kib(history, model):9.0f}{mark}"
        )
    print()
    for family, (ours, porc, expl) in totals.items():
        print(
            f"total {family:14} ours {ours:9.2f} ms (with counterexamples {expl:9.2f} ms)   "
            f"porcupine {porc:9.2f} ms"
        )
    measured = {f"{k} total": v[0] for k, v in totals.items()}
    measured.update(_by_file(rows, reps))
    passed = wrong == 0
    for name, floor in FLOORS_MS.items():
        if name in measured:
            good = measured[name] < floor
            passed &= good
            verdict = "ok" if good else "MISSED"
            print(f"floor {name:28} {measured[name]:8.2f} ms < {floor:5.1f} ms  {verdict}")
    print(f"verdicts: {len(rows) - wrong}/{len(rows)} as expected")
    return passed


def _by_file(rows: list[dict[str, str]], reps: int) -> dict[str, float]:
    out = {}
    for r in rows:
        if r["file"] in FLOORS_MS:
            history, model = read_history(SHARED / r["file"])
            out[r["file"]] = time_check(history, model, reps)[0] * 1000
    return out


def big(sizes: list[int], keys: int, concurrency: int, corrupt: float, model: str) -> bool:
    passed = True
    per_op = []
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "history.jsonl"
            subprocess.run(
                [
                    sys.executable,
                    str(ROOT / "scripts" / "gen_history.py"),
                    str(path),
                    "--ops",
                    str(n),
                    "--keys",
                    str(keys),
                    "--concurrency",
                    str(concurrency),
                    "--corrupt",
                    str(corrupt),
                    "--model",
                    model,
                ],
                check=True,
            )
            stdout, used = _watch_memory([sys.executable, __file__, "--check-one", str(path)])
        m = json.loads(stdout.strip().splitlines()[-1])
        per_op.append(m["check_s"] / n * 1e6)
        print(
            f"{n:>9} {model} ops over {keys} keys: read {m['read_s']:.1f} s, "
            f"check {m['check_s']:.2f} s "
            f"({per_op[-1]:.2f} us/op, {m['workers']} process(es)), verdict {m['valid']}, "
            f"peak memory {used:.0f} MiB (peak RSS: checking process {m['own_mib']:.0f}, "
            f"largest worker {m['worker_mib']:.0f}, pages shared)"
        )
        if n >= 1_000_000:
            good = m["check_s"] < 30 and used < 2048
            passed &= good
            print(
                f"floor 1M ops: check < 30 s and peak memory < 2048 MiB  "
                f"{'ok' if good else 'MISSED'}"
            )
    if len(per_op) > 1:
        print(f"time per op from smallest to largest: x{per_op[-1] / per_op[0]:.2f}")
    return passed


def _watch_memory(argv: list[str]) -> tuple[str, float]:
    """Run ``argv`` (the reading and checking process, and the workers it forks) and
    return its output and the peak memory it took, in MiB: how far the machine's
    available memory fell below where it was before it started (sampled every 20 ms; what
    forked workers share with their parent counts once, what they copy counts too)."""
    before = _available_mib()
    lowest = before
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(argv, stdout=out, text=True)
        while proc.poll() is None:
            lowest = min(lowest, _available_mib())
            time.sleep(0.02)
        if proc.returncode:
            raise SystemExit(f"checking failed (exit code {proc.returncode})")
        out.seek(0)
        return out.read(), before - lowest


def _available_mib() -> float:
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no MemAvailable in /proc/meminfo")


def check_one(path: str) -> None:
    """Child process: read, check, report JSON (time and peak RSS of this process)."""
    import resource

    started = time.perf_counter()
    history, model = read_history(path)
    read_s = time.perf_counter() - started
    started = time.perf_counter()
    result = check(history, model or "kv", time_limit=300)
    check_s = time.perf_counter() - started
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # Workers (checkers.linear.parallel) are forked: they share the history's pages, so
    # adding the largest worker's peak to this process's over-counts, on the safe side.
    worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "read_s": read_s,
                "check_s": check_s,
                "rss_mib": own + worker,
                "own_mib": own,
                "worker_mib": worker,
                "valid": result.valid,
                "workers": result.details.get("workers", 1),
            }
        )
    )


def _ensure_compiled() -> None:
    """Measure what ``make setup`` gives: build the compiled search when it is missing or
    stale, then start again on it (unless HARNESS_PURE_PYTHON=1 asks for the plain one)."""
    if os.environ.get("HARNESS_PURE_PYTHON") or compiled.active():
        return
    subprocess.run([sys.executable, str(ROOT / "scripts" / "compile_checker.py")], check=False)
    if (compiled.build_dir() / compiled.DONE).exists():
        os.execv(sys.executable, [sys.executable, *sys.argv])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--reps", type=int, default=7, help="runs per file (the minimum is kept)")
    ap.add_argument("--only", help="only reference files whose path contains this")
    ap.add_argument("--big", help="comma-separated op counts of generated histories to check")
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--corrupt", type=float, default=0.0)
    ap.add_argument("--model", default="register", help="register or kv")
    ap.add_argument("--no-references", action="store_true")
    ap.add_argument("--check-one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.check_one:
        check_one(args.check_one)
        return 0
    passed = True
    _ensure_compiled()
    print(f"load average at start: {_load()}")
    print(
        "search: "
        + ("compiled (mypyc)" if compiled.active() else "plain Python")
        + " (scripts/compile_checker.py builds it; HARNESS_PURE_PYTHON=1 runs the plain one)"
    )
    if not args.no_references:
        passed &= references(args.reps, args.only)
    if args.big:
        sizes = [int(s) for s in args.big.split(",")]
        passed &= big(sizes, args.keys, args.concurrency, args.corrupt, args.model)
    print(f"load average at end: {_load()} ({os.cpu_count()} CPUs)")
    return 0 if passed else 1


def _load() -> str:
    """The 1, 5 and 15 minute load averages: timings are only comparable at low load."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
