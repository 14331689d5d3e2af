"""The README's table of lock libraries, from the results of ``suites/libraries.toml``.

    .venv/bin/harness suite run suites/libraries.toml -o results
    .venv/bin/python scripts/library_table.py results/suite-libraries

Reads every ``suite.json`` under the folders given (one suite run, or several made with
``--only``) and prints one Markdown row per run: the library and the version its
environment installed (test.json's ``lock_library``), the target, the fault, the verdict
and whose doing a violation was (results.json's ``attribution``: the library, its
documented design, the harness's own fault, the service), what went wrong (overlapping
holders, stale writes the resource accepted, releases the library said had lost the lock),
whether a release freed another holder's lock (the mutex checker's ``released_another``:
yes, no, or not measured when no release came after the lock had gone to another) and what
the library offers.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from checkers.words import plural

HEADER = (
    "| library | version | target | fault | verdict | what happened "
    "| releases another's lock | what it offers |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- |"
)


def outcomes(folders: Sequence[Path]) -> Iterator[dict[str, Any]]:
    """Every outcome of the suite results under ``folders``, in order."""
    for folder in folders:
        for suite in sorted(folder.rglob("suite.json")):
            yield from json.loads(suite.read_text())["outcomes"]


def happened(run_dir: Path) -> str:
    """What the run's records show of the lock: holders that went on believing they held
    it after another was granted it (and how long at most), two holders while the first's
    lease was valid, stale writes accepted, losses the library said."""
    results = json.loads((run_dir / "results.json").read_text())
    mutex = results["checkers"].get("mutex", {})
    groups = mutex.get("overlap_groups", [])
    believed = max((g.get("both_believed_s") or 0.0 for g in groups), default=0.0)
    valid = sum(1 for o in mutex.get("overlaps", []) if o.get("kind") == "lease-valid")
    accepted = mutex.get("stale_accepted") or []  # the stale writes the resource took
    stale = len(accepted) if isinstance(accepted, list) else int(accepted)
    lines = (run_dir / "events.jsonl").read_text().splitlines()
    lost = sum(1 for line in lines if '"lease-lost"' in line)
    return (
        f"{plural(len(groups), 'holder')} overtaken (believed on up to {believed:.1f} s), "
        f"{plural(valid, 'overlap')} within a valid lease, "
        f"{plural(stale, 'stale write')} accepted, "
        f"{plural(lost, 'loss', 'losses')} the library said"
    )


def fault(options: dict[str, Any]) -> str:
    """The run's faults, with the holders' work when it is long enough to matter (a
    release after a pause lands while another holds; a kill during a holding)."""
    work = options.get("work_time")
    said = f" (work {work:g} s)" if isinstance(work, (int, float)) and work >= 1 else ""
    return ", ".join(options["nemesis"]) + said


def row(outcome: dict[str, Any]) -> str:
    """One run as a row of the table."""
    run_dir = Path(outcome["run_dir"])
    test = json.loads((run_dir / "test.json").read_text())
    lib = test.get("lock_library", {})
    options = test["options"]
    verdict = {True: "valid", False: "invalid"}.get(outcome["valid"], str(outcome["valid"]))
    results = json.loads((run_dir / "results.json").read_text())
    blamed = results.get("attribution")
    if isinstance(blamed, dict):
        verdict += f" ({blamed.get('party')})"
    mutex = results["checkers"].get("mutex", {})
    released = (mutex.get("released_another") or {}).get("releases", "not measured")
    cells = (
        lib.get("library", options.get("lock")),
        lib.get("version", "-"),
        options["target"],
        fault(options),
        verdict,
        happened(run_dir),
        released,
        lib.get("offers", "-"),
    )
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folders", nargs="+", type=Path, help="suite results (suite-libraries/...)")
    args = p.parse_args(argv)
    rows = [row(o) for o in outcomes(args.folders) if o.get("run_dir")]
    if not rows:
        print(f"no suite.json with runs under {', '.join(map(str, args.folders))}", file=sys.stderr)
        return 1
    print("\n".join([HEADER, *rows]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
