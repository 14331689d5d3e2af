#!/usr/bin/env python3
"""Bounded memory at scale (issue 36): ``harness check`` of big histories streamed
(``--stream``: split by key on disk, one key in memory at a time) against the same
histories checked in memory.

Three histories over ``--keys`` keys, 20 clients, the register model, made by
``scripts/gen_history.py`` under ``--dir`` (kept there between runs unless ``--clean``):
``--small`` ops linearizable, the same with one injected stale read (``--stale-read-at
0.5``), and ``--big`` ops linearizable. The small two are checked in memory
(``--no-stream``) and streamed; the big one streamed. Each check is one process under
``prlimit --as`` (``--cap-memory`` for the in-memory checks, ``--cap-stream`` for the
streamed), niced; its peak resident size is its own ``ru_maxrss`` (``os.wait4``), its
time the wall clock. Printed: per check the verdict, the key of the invalid one, peak
RSS and seconds, then whether the streamed verdicts (and invalid keys) agree with the
in-memory ones and whether the big check stayed within ``--floor`` resident.

The floor of issue 36: a 10M-op history over 1,000 keys checks with at most 1 GiB
resident, with a verdict that agrees with the in-memory check on 1M ops.

    df -h /tmp   # the 10M history is about 2 GB, its spill about 0.3 GB
    .venv/bin/python scripts/bench_stream.py --clean
    .venv/bin/python scripts/bench_stream.py --small 100000 --big 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / ".venv" / "bin" / "harness"
PYTHON = ROOT / ".venv" / "bin" / "python"
GIB = 1 << 30
_KEY = re.compile(r"\(key ([^)]*)\)")


class Measured(NamedTuple):
    """One ``harness check`` process: its answer (``--json``), exit code, peak RSS in
    bytes and wall seconds."""

    answer: dict[str, Any]
    code: int
    rss: int
    seconds: float

    @property
    def key(self) -> str | None:
        """The invalid key its summary names (None: valid, or none named)."""
        found = _KEY.search(str(self.answer.get("summary", "")))
        return found.group(1) if found else None


def generate(out: Path, ops: int, keys: int, *extra: str) -> Path:
    """A history of ``ops`` operations at ``out`` (made unless it is there)."""
    if not out.is_file():
        started = time.perf_counter()
        subprocess.run(
            [
                *("nice", "-n", "10", str(PYTHON), str(ROOT / "scripts" / "gen_history.py")),
                *(str(out), "--ops", str(ops), "--keys", str(keys), *extra),
            ],
            check=True,
        )
        print(f"generated {out} in {time.perf_counter() - started:.0f} s", flush=True)
    return out


def check(path: Path, how: str, cap: int, spill: Path) -> Measured:
    """``harness check --json HOW PATH`` in a process of its own under ``prlimit --as``."""
    argv = ["nice", "-n", "10", "prlimit", f"--as={cap}", str(HARNESS), "check", "--json"]
    argv += [how, "--spill-dir", str(spill), str(path)]
    started = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE)
    assert p.stdout is not None
    out = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)  # this process's own peak, not all children's
    p.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - started
    lines = out.decode().strip().splitlines()
    answer = json.loads(lines[-1]) if lines else {}
    return Measured(answer, p.returncode, usage.ru_maxrss * 1024, seconds)


def say(name: str, how: str, m: Measured) -> None:
    a = m.answer
    print(
        f"{name:<10} {how:<11} {a.get('valid')!s:<8} {a.get('read', '-'):<10} "
        f"key {m.key or '-':<6} {m.rss / (1 << 20):>8.0f} MiB {m.seconds:>8.1f} s  "
        f"{a.get('ops', 0):>10,} events",
        flush=True,
    )
    if a.get("valid") == "unknown" or a.get("error"):
        print(f"    {a.get('reason') or a.get('error')}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, default=Path("/tmp/stream-bench"))
    ap.add_argument("--small", type=int, default=1_000_000, help="ops of the compared pair")
    ap.add_argument("--big", type=int, default=10_000_000, help="ops of the streamed one")
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--cap-memory", type=float, default=6.0, help="GiB for in-memory checks")
    ap.add_argument("--cap-stream", type=float, default=2.0, help="GiB for streamed checks")
    ap.add_argument("--floor", type=float, default=1.0, help="GiB resident the big may take")
    ap.add_argument("--clean", action="store_true", help="delete the histories after")
    args = ap.parse_args()
    d: Path = args.dir
    spill = d / "spill"
    spill.mkdir(parents=True, exist_ok=True)
    small = generate(d / f"valid-{args.small}" / "history.jsonl", args.small, args.keys)
    bad = generate(
        d / f"stale-{args.small}" / "history.jsonl",
        args.small,
        args.keys,
        "--stale-read-at",
        "0.5",
    )
    big = generate(d / f"valid-{args.big}" / "history.jsonl", args.big, args.keys)
    in_memory, streamed = int(args.cap_memory * GIB), int(args.cap_stream * GIB)
    print(f"{'history':<10} {'flag':<11} {'verdict':<8} {'read':<10} {'key':<10} {'peak RSS':>12}")
    ok = True
    for name, path in ((f"{args.small:,}", small), (f"{args.small:,}*", bad)):
        m = check(path, "--no-stream", in_memory, spill)
        say(name, "--no-stream", m)
        s = check(path, "--stream", streamed, spill)
        say(name, "--stream", s)
        same = (m.answer.get("valid"), m.key) == (s.answer.get("valid"), s.key)
        print(f"    agree: {same} (verdict and invalid key)", flush=True)
        ok = ok and same and s.answer.get("read") == "streamed"
    b = check(big, "--stream", streamed, spill)
    say(f"{args.big:,}", "--stream", b)
    within = b.rss <= args.floor * GIB and b.answer.get("valid") is True
    print(f"    within {args.floor:g} GiB resident and valid: {within}", flush=True)
    left = os.listdir(spill)
    print(f"spill folder left empty: {not left}", flush=True)
    if args.clean:
        for path in (small, bad, big):
            shutil.rmtree(path.parent)
        shutil.rmtree(spill)
    print("(* one injected stale read)")
    return 0 if ok and within and not left else 1


if __name__ == "__main__":
    sys.exit(main())
