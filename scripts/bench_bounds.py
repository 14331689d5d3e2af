#!/usr/bin/env python3
"""Issue 29's "Done when" for the bounds, measured: ``harness check`` of big plain
histories with ``--time-limit`` or ``--memory-limit``, each within the limit (time: the
limit + 2 s; memory: its peak resident size within the limit + 200 MiB, for the
interpreter and the file's pages), exit 0, 1 or 2 with one line of reason for an unknown;
and the same history without limits, by the compiled checker and by the plain Python one
(``HARNESS_PURE_PYTHON=1``), to the same verdict.

Cases (``scripts/gen_bounds.py``, one register each, linearizable by construction):

- ``seq-600k``: 600,000 sequential ops of seven values, ``--memory-limit 1G``;
- ``seq-600k-float``: the same of unique floats (the unique values' path, which needs
  more than 1 GiB: unknown, exit 2), ``--memory-limit 1G``;
- ``conc-60k``: 60,000 concurrent writes of unique integers, ``--time-limit 5``;
- ``conc-60k-float``: the same as floats (the general search's), ``--time-limit 5``;
- ``proc-1m``: a million ops, each by a process of its own, ``--memory-limit 1G``;
- ``edn-30m``: a 30 MiB EDN file with a 10 MiB value, ``--time-limit 5``.

Each command runs under an address-space cap (``--as``, as ``prlimit --as`` would), its
wall time and peak resident size measured; one line per command, then the verdicts'
agreement. Exit 1 if a bound or an agreement failed.

    .venv/bin/python scripts/bench_bounds.py --cases seq-600k,conc-60k
    .venv/bin/python scripts/bench_bounds.py --no-plain       # the limited checks alone
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Final, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from gen_bounds import write  # noqa: E402

MIB: Final = 1 << 20
SLACK_S: Final = 2.0
SLACK_BYTES: Final = 200 * MIB


class Case(NamedTuple):
    """A history of ``gen_bounds`` (its shape, ops, values) and the limit it is checked
    with (``--time-limit S`` or ``--memory-limit 1G``)."""

    file: str
    shape: str
    ops: int
    values: str
    flag: str
    limit: str


CASES: Final = {
    "seq-600k": Case("history.jsonl", "sequential", 600_000, "cycle", "--memory-limit", "1G"),
    "seq-600k-float": Case("history.jsonl", "sequential", 600_000, "float", "--memory-limit", "1G"),
    "conc-60k": Case("history.jsonl", "concurrent", 60_000, "unique", "--time-limit", "5"),
    "conc-60k-float": Case("history.jsonl", "concurrent", 60_000, "float", "--time-limit", "5"),
    "proc-1m": Case("history.jsonl", "processes", 1_000_000, "cycle", "--memory-limit", "1G"),
    "edn-30m": Case("history.edn", "edn-huge-value", 0, "cycle", "--time-limit", "5"),
}


class Outcome(NamedTuple):
    """One ``harness check`` process: exit code, wall seconds, peak resident bytes, and
    what it printed."""

    code: int
    seconds: float
    peak: int
    out: str
    err: str

    @property
    def verdict(self) -> str:
        first = self.out.splitlines()[0] if self.out else ""
        return first.split(": ", 1)[1].split(" ", 1)[0] if ": " in first else f"exit {self.code}"


SPAWN: Final = """
import os, resource, sys
cap, peak = int(sys.argv[1]), sys.argv[2]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    os.execv(sys.executable, [sys.executable, "-m", "harness.cli", "check", *sys.argv[3:]])
_, status, usage = os.wait4(pid, 0)
with open(peak, "w") as f:
    f.write(str(usage.ru_maxrss * 1024))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""
"""Runs the check as its child and writes the child's peak resident size: a process's
peak counts what it held before its exec, so the check is forked from this small
process, not from the caller (a test runner holding gigabytes)."""


def check(path: Path, extra: list[str], address_space: int, plain: bool = False) -> Outcome:
    """``harness check [EXTRA] PATH`` in a process capped at ``address_space`` bytes (as
    ``prlimit --as`` caps it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if plain:
        env["HARNESS_PURE_PYTHON"] = "1"
    with tempfile.TemporaryDirectory(prefix="bench-bounds-") as tmp:
        peak = Path(tmp) / "peak"
        started = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", SPAWN, str(address_space), str(peak), *extra, str(path)],
            capture_output=True,
            text=True,
            env=env,
        )
        took = time.perf_counter() - started
        return Outcome(proc.returncode, took, int(peak.read_text()), proc.stdout, proc.stderr)


def within(case: Case, got: Outcome) -> list[str]:
    """What ``got`` broke of its case's bound (empty when nothing)."""
    broke = []
    if got.code not in (0, 1, 2) or got.err:
        broke.append(f"exit {got.code}, stderr {got.err.strip()[:200]!r}")
    lines = got.out.splitlines()
    if got.code == 2 and not (len(lines) == 3 and lines[2].startswith("total:")):
        broke.append(f"an unknown in {len(lines)} lines, not the verdict, a reason, the total")
    if case.flag == "--time-limit" and got.seconds > float(case.limit) + SLACK_S:
        broke.append(f"{got.seconds:.1f} s past {case.limit} s + {SLACK_S:.0f}")
    if case.flag == "--memory-limit" and got.peak > (1 << 30) + SLACK_BYTES:
        broke.append(f"peak {got.peak // MIB} MiB past 1 GiB + {SLACK_BYTES // MIB} MiB")
    return broke


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help="comma-separated case names")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-bounds"), help="histories")
    ap.add_argument("--as", dest="address_space", type=float, default=8, help="GiB cap")
    ap.add_argument("--no-plain", action="store_true", help="skip the unlimited checks")
    args = ap.parse_args()
    cap = int(args.address_space * (1 << 30))
    failed = 0
    for name in args.cases.split(","):
        case = CASES[name]
        path = args.work / name / case.file
        if not path.exists():
            write(path, case.shape, case.ops, values=case.values)
        limited = check(path, [case.flag, case.limit], cap)
        broke = within(case, limited)
        reason = limited.out.splitlines()[1].strip() if limited.code == 2 else ""
        print(
            f"{name}: harness check {case.flag} {case.limit}: {limited.verdict}, exit "
            f"{limited.code}, {limited.seconds:.1f} s, peak {limited.peak // MIB} MiB"
            + (f" ({reason})" if reason else "")
            + (f"; BROKE: {'; '.join(broke)}" if broke else ""),
            flush=True,
        )
        failed += bool(broke)
        if args.no_plain:
            continue
        free = check(path, [], cap)
        plain = check(path, [], cap, plain=True)
        agree = free.verdict == plain.verdict and (
            limited.code == 2 or limited.verdict == free.verdict
        )
        print(
            f"{name}: no limit: compiled {free.verdict} in {free.seconds:.1f} s, plain Python "
            f"{plain.verdict} in {plain.seconds:.1f} s: {'agree' if agree else 'DISAGREE'}",
            flush=True,
        )
        failed += not agree
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
