#!/usr/bin/env python3
"""Whole processes and generated histories: what a user of ``harness check`` waits for.

Per reference set (porcupine's etcd logs, its kv histories, the Knossos histories) one
``harness check`` process over all the set's files (the venv's ``harness``, as a user runs
it): its wall time and its CPU time (user +
system: start-up, reading, checking and printing), beside the sum and the median of the
times to the verdicts it reports; and one process checking one small file (the start-up).
Then the fixed cost of a check: an empty history, checked over and over.

Per generated case (``scripts/gen_history.py``, cached under ``--cache``): many keys (10k,
100k and 1M ops over 1,000 keys, 20 clients, the cas-register and register models) and one
key (20,000 ops, 10 clients, one corrupted read: the hard invalid key). For each, the whole
process (``harness check FILE``: wall and CPU) and, in another process, the phases: reading,
then the check's own (``details["phases_s"]``: partition, prepare, search, result; or, for
a history the register path decided, registers and result).

Every measure is the minimum over ``--rounds`` rounds, the cases interleaved within a round
(the machine is shared and noisy: a minimum is the least disturbed run).

With ``--baseline TREE`` (another checkout with its own ``make setup``, e.g. main at
af2c204: ``git worktree add /tmp/af2c204 af2c204``) each set's process is also run in that
tree, its own interpreter and build, in turn with this tree's within each round: the
ratio of the two CPU times is measured in one run. The floor of issue 36: the Knossos set
in one process within 60 ms of CPU (porcupine: 31 ms).

    .venv/bin/python scripts/bench_process.py --rounds 3
    .venv/bin/python scripts/bench_process.py --cases many-cas-10k,one-key-bad --no-sets
    .venv/bin/python scripts/bench_process.py --no-cases --rounds 10 --baseline /tmp/af2c204
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "histories"
HARNESS = [str(ROOT / ".venv" / "bin" / "harness"), "check"]
"""What a user runs: the console script ``make setup`` (pip) wrote into the venv, whose
start-up is that of every ``harness check`` (not ``python -m harness.cli``: runpy's)."""
USERS_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
"""The processes measured run as a user's do: with Python's bytecode caches (a pip install
writes them; a checkout's first run does). Without them every start compiles every module
imported (here, where PYTHONDONTWRITEBYTECODE is set, that doubles a small check's CPU)."""
HISTORIES = (".log", ".txt", ".edn")


class Case(NamedTuple):
    """A generated history: its model, size, keys, clients, the event share after which
    one read is corrupted (None: linearizable), and porcupine's time to the verdict in ms
    (issue 20's measure on this kind of machine; None where none was taken)."""

    model: str
    ops: int
    keys: int
    clients: int
    corrupt_at: float | None
    porcupine_ms: float | None


CASES: dict[str, Case] = {
    "many-cas-10k": Case("cas-register", 10_000, 1000, 20, None, 12.0),
    "many-cas-100k": Case("cas-register", 100_000, 1000, 20, None, 151.0),
    "many-cas-1M": Case("cas-register", 1_000_000, 1000, 20, None, 2800.0),
    "many-register-10k": Case("register", 10_000, 1000, 20, None, None),
    "many-register-100k": Case("register", 100_000, 1000, 20, None, 121.0),
    "many-register-1M": Case("register", 1_000_000, 1000, 20, None, None),
    "one-key-bad": Case("cas-register", 20_000, 1, 10, 0.5, None),
}
SET_FLOORS_CPU_MS: dict[str, float] = {"knossos": 60.0}
"""Issue 36: the Knossos set's whole process, in CPU (porcupine's: 31 ms)."""
SETS: dict[str, str] = {
    "etcd logs": "porcupine/jepsen/",
    "kv": "porcupine/kv/",
    "knossos": "knossos/",
}
"""The reference sets: MANIFEST.tsv's histories under each folder."""


def generated(name: str, case: Case, cache: Path) -> Path:
    """The case's history file, generated on first use."""
    path = cache / name / "history.jsonl"
    if not path.exists():
        argv = [
            sys.executable,
            str(ROOT / "scripts" / "gen_history.py"),
            str(path),
            "--model",
            case.model,
            "--ops",
            str(case.ops),
            "--keys",
            str(case.keys),
            "--concurrency",
            str(case.clients),
        ]
        if case.corrupt_at is not None:
            argv += ["--corrupt-read-at", str(case.corrupt_at)]
        subprocess.run(argv, check=True)
    return path


def whole(
    paths: list[Path], time_limit: float, tree: Path | None = None
) -> tuple[float, float, list[dict[str, Any]]]:
    """One ``harness check --json`` process over ``paths`` (in ``tree``, with its own
    interpreter, where given): its wall time, its CPU time (user + system, seconds) and
    its JSON lines."""
    harness = HARNESS if tree is None else [str(tree / ".venv/bin/harness"), *HARNESS[1:]]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(
        [*harness, "--json", "--time-limit", str(time_limit), *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=ROOT if tree is None else tree,
        env=USERS_ENV,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if proc.returncode not in (0, 1, 2):
        raise SystemExit(f"harness check failed ({proc.returncode}): {proc.stderr.strip()}")
    return wall, cpu, [json.loads(line) for line in proc.stdout.splitlines()]


def phases(path: Path, time_limit: float) -> dict[str, Any]:
    """Reading and the check's phases, measured in a fresh process (``--phases-of``)."""
    proc = subprocess.run(
        [sys.executable, __file__, "--phases-of", str(path), "--time-limit", str(time_limit)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    return dict(json.loads(proc.stdout.splitlines()[-1]))


def phases_of(path: str, time_limit: float) -> None:
    """Child process: read, check, print the phases as one JSON line."""
    sys.path.insert(0, str(ROOT))
    from checkers.linearizability import check
    from core import compiled
    from core.formats import read_history

    started = time.perf_counter()
    history, model = read_history(path)
    read_s = time.perf_counter() - started
    result = check(history, model or "register", time_limit=time_limit)
    out = {"read": read_s, **result.details.get("phases_s", {})}
    out["verdict"] = result.details.get("verdict_s", 0.0)
    out["valid"] = result.valid
    out["compiled"] = compiled.active()
    print(json.dumps(out))


def _min_into(best: dict[str, float], got: dict[str, Any]) -> None:
    for k, v in got.items():
        if isinstance(v, float):
            best[k] = min(best.get(k, v), v)
        else:
            best.setdefault(k, v)


def bench_sets(rounds: int, time_limit: float, baseline: Path | None = None) -> int:
    """Per reference set: one process over all its files, and one over its first file;
    porcupine's total from MANIFEST.tsv; with ``baseline``, the set's process in that tree
    too. The sets below their floor (``SET_FLOORS_CPU_MS``)."""
    with open(SHARED / "MANIFEST.tsv") as f:
        rows = [
            r
            for r in csv.DictReader(f, delimiter="\t")
            if r["file"].endswith(HISTORIES) and r["expected_verdict"] != "none"  # no history
        ]
    files = {
        name: [SHARED / r["file"] for r in rows if r["file"].startswith(sub)]
        for name, sub in SETS.items()
    }
    porcupine = {
        name: sum(float(r["porcupine_ms_min"] or 0) for r in rows if r["file"].startswith(sub))
        for name, sub in SETS.items()
    }
    best: dict[str, dict[str, float]] = {}
    for _ in range(rounds):
        for name, paths in files.items():
            wall, cpu, lines = whole(paths, time_limit)
            times = [float(x.get("check_ms") or 0.0) / 1000 for x in lines]
            one_wall, one_cpu, _ = whole(paths[:1], time_limit)
            got = {"wall": wall, "cpu": cpu, "verdicts": sum(times), "one_wall": one_wall,
                   "one_cpu": one_cpu, "files": len(paths),
                   "median": statistics.median(times)}  # fmt: skip
            if baseline is not None:
                _, base_cpu, base_lines = whole(paths, time_limit, baseline)
                if [x.get("valid") for x in base_lines] != [x.get("valid") for x in lines]:
                    raise SystemExit(f"{name}: the baseline's verdicts differ from this tree's")
                got["base_cpu"] = base_cpu
            _min_into(best.setdefault(name, {}), got)
    print(f"{'set':12} {'files':>5} {'to verdicts':>12} {'median/file':>12} {'porcupine':>10} "
          f"{'process wall':>13} {'CPU':>9} {'one file: wall':>15} {'CPU':>9}"
          + (f" {'baseline CPU':>13} {'ratio':>6}" if baseline else ""))  # fmt: skip
    below = 0
    for name, b in best.items():
        floor = SET_FLOORS_CPU_MS.get(name)
        failed = floor is not None and b["cpu"] * 1000 > floor
        below += failed
        print(
            f"{name:12} {int(b['files']):5} {b['verdicts'] * 1000:9.1f} ms "
            f"{b['median'] * 1000:9.3f} ms "
            f"{porcupine[name]:7.1f} ms "
            f"{b['wall'] * 1000:10.0f} ms {b['cpu'] * 1000:6.0f} ms "
            f"{b['one_wall'] * 1000:12.0f} ms {b['one_cpu'] * 1000:6.0f} ms"
            + (
                f" {b['base_cpu'] * 1000:10.0f} ms {b['cpu'] / b['base_cpu']:6.2f}"
                if baseline
                else ""
            )
            + (f"  ABOVE THE FLOOR ({floor:.0f} ms of CPU)" if failed else "")
        )
    return below


EMPTY = """
import sys, time
sys.path.insert(0, sys.argv[1])
from checkers.linearizability import check
from core.history import History
empty = History([])
for _ in range(1000):
    check(empty, "register")
best = 1.0
for _ in range(20):
    started = time.perf_counter()
    for _ in range(1000):
        check(empty, "register")
    best = min(best, (time.perf_counter() - started) / 1000)
print(best)
"""


def bench_empty() -> None:
    """The fixed cost of a check: ``check`` of an empty history, in its own process (the
    best of 20 rounds of 1,000)."""
    proc = subprocess.run(
        [sys.executable, "-c", EMPTY, str(ROOT)], capture_output=True, text=True, check=True
    )
    print(f"the fixed cost of a check (an empty history): {float(proc.stdout) * 1e6:.1f} us")


def bench_cases(names: list[str], rounds: int, cache: Path, time_limit: float) -> None:
    """Per generated case: the whole process, and the phases in another process."""
    paths = {n: generated(n, CASES[n], cache) for n in names}
    best: dict[str, dict[str, float]] = {}
    for _ in range(rounds):
        for n in names:
            wall, cpu, lines = whole([paths[n]], time_limit)
            got = phases(paths[n], time_limit)
            got.update(wall=wall, cpu=cpu, reported=lines[0].get("valid"))
            _min_into(best.setdefault(n, {}), got)
    cols = ("read", "registers", "partition", "prepare", "search", "result")
    print(
        f"{'case':19} {'verdict':>8} {'to verdict':>11} {'porcupine':>10} {'process':>9} "
        f"{'CPU':>8}   phases (ms): " + " ".join(f"{c:>9}" for c in cols)
    )
    for n in names:
        b, porc = best[n], CASES[n].porcupine_ms
        print(
            f"{n:19} {b['valid']!s:>8} {b['verdict'] * 1000:8.1f} ms "
            + (f"{porc:7.0f} ms" if porc else f"{'-':>10}")
            + f" {b['wall']:7.2f} s {b['cpu']:6.2f} s   "
            + " ".join(f"{b.get(c, 0.0) * 1000:9.1f}" for c in cols)
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (minima kept)")
    ap.add_argument("--cases", default=",".join(CASES), help="generated cases to run")
    ap.add_argument("--no-sets", action="store_true", help="skip the reference sets")
    ap.add_argument("--no-cases", action="store_true", help="skip the generated cases")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/harness-bench-histories"))
    ap.add_argument("--time-limit", type=float, default=120.0)
    ap.add_argument("--baseline", type=Path, help="another tree to run the sets in, in turn")
    ap.add_argument("--phases-of", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phases_of:
        phases_of(args.phases_of, args.time_limit)
        return 0
    names = [n for n in args.cases.split(",") if n]
    unknown = [n for n in names if n not in CASES]
    if unknown:
        ap.error(f"unknown case {unknown[0]!r}: choose among {', '.join(CASES)}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    subprocess.run([*HARNESS, "--help"], capture_output=True, cwd=ROOT, env=USERS_ENV)  # caches
    below = 0
    if args.baseline is not None and not (args.baseline / ".venv/bin/harness").exists():
        ap.error(f"--baseline {args.baseline} has no .venv/bin/harness: run make setup in it")
    if not args.no_sets:
        if args.baseline is not None:  # its bytecode caches, as this tree's below
            subprocess.run(
                [str(args.baseline / ".venv/bin/harness"), *HARNESS[1:], "--help"],
                capture_output=True,
                cwd=args.baseline,
                env=USERS_ENV,
            )
        below = bench_sets(args.rounds, args.time_limit, args.baseline)
        bench_empty()
    if not args.no_cases:
        bench_cases(names, args.rounds, args.cache, args.time_limit)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 1 if below else 0


if __name__ == "__main__":
    sys.exit(main())
