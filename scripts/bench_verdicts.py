#!/usr/bin/env python3
"""Whether two checkouts' checkers give the same results on the reference histories.

Checks every history of ``../shared/histories`` (those in its MANIFEST.tsv) and every
history or run directory of ``tests/unit/histories`` with ``harness check``'s own path
(``harness.checkcmd.check_path``) under each checkout, each in its own process (its
compiled checker when built, or the plain one with ``HARNESS_PURE_PYTHON=1``), and
compares everything but the times: the verdict, the explanation, the counterexample and
the search's counts (steps, model steps, configurations), so a refactor of the search
that changed the order of its work would show (a file one checkout refuses as bad input
shows as a verdict of None with its error). Exit 1 on any difference.
``--verdicts-only`` compares the verdicts alone, and that each invalid one here is
explained: for a change that decides some histories another way (the register path), which
may find another invalid partition, with other counts.

    .venv/bin/python scripts/bench_verdicts.py ../wt-base       # this checkout vs another
    .venv/bin/python scripts/bench_verdicts.py ../wt-base --verdicts-only
"""

from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "histories"
LOCAL = ROOT / "tests" / "unit" / "histories"


def histories() -> list[Path]:
    """The reference histories (MANIFEST.tsv's) and the unit tests' ones."""
    with open(SHARED / "MANIFEST.tsv") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    shared = [SHARED / r["file"] for r in rows if r["file"].endswith((".log", ".txt", ".edn"))]
    return shared + sorted(LOCAL.iterdir())


def _timeless(x: Any) -> Any:
    """``x`` without the times a check measured (they differ from run to run)."""
    if isinstance(x, dict):
        return {
            k: _timeless(v)
            for k, v in x.items()
            if not k.endswith(("_ms", "_s", "elapsed")) and k != "search"  # compiled or not
        }
    if isinstance(x, list):
        return [_timeless(v) for v in x]
    return x


def emit(root: Path) -> None:
    """One JSON line per history: its result under the checkout ``root``."""
    sys.path.insert(0, str(root))
    from core.errors import HarnessError
    from harness.checkcmd import check_path  # the checkout's own, imported after the path

    for path in histories():
        model = "register" if path.suffix == ".jsonl" else None  # our JSONL names none
        with tempfile.TemporaryDirectory() as tmp:
            where = path
            if path.is_dir():  # a check writes its results into a run directory: a copy's
                where = Path(shutil.copytree(path, Path(tmp) / path.name))
            try:
                out = check_path(
                    where, model=model, time_limit=120, memory_limit=None, out=None, oom=[b""]
                )
            except HarnessError as e:  # not a history (an empty file)
                out = {"file": str(where), "valid": None, "error": str(e)}
        line = json.dumps(_timeless(out), sort_keys=True, default=str)
        print(line.replace(str(where), str(path.relative_to(ROOT.parent))), flush=True)


def results(root: Path) -> list[dict[str, Any]]:
    proc = subprocess.run(
        [sys.executable, __file__, "--emit", str(root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
    )
    return [json.loads(line) for line in proc.stdout.splitlines()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("other", type=Path, help="the other checkout (say, main's)")
    ap.add_argument("--verdicts-only", action="store_true", help="compare the verdicts alone")
    ap.add_argument("--emit", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.emit:
        emit(args.other.resolve())
        return 0
    ours, theirs = results(ROOT), results(args.other.resolve())
    differ = 0
    for a, b in zip(ours, theirs, strict=True):
        if args.verdicts_only:
            if a.get("valid") != b.get("valid"):
                differ += 1
                print(f"DIFFERENT {a['file']}: {a.get('valid')} here, {b.get('valid')} there")
            elif a.get("valid") is False and not a.get("explanation"):
                differ += 1
                print(f"UNEXPLAINED {a['file']}: invalid here without an explanation")
            continue
        if a != b:
            differ += 1
            keys = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            print(f"DIFFERENT {a['file']}: {', '.join(keys)}")
    counts: dict[str, int] = {}
    for a in ours:
        counts[str(a.get("valid"))] = counts.get(str(a.get("valid")), 0) + 1
    what = "verdicts" if args.verdicts_only else "results (verdict, explanation, "
    what += "" if args.verdicts_only else "counterexample, search counts)"
    print(
        f"{len(ours) - differ}/{len(ours)} histories give identical {what}; verdicts here: {counts}"
    )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
