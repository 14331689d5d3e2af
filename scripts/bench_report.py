#!/usr/bin/env python3
"""Benchmark of the HTML report with a large history.

Writes a synthetic cas-register run (100,000 operations by default, 10 processes, fault
windows) in a temporary run directory, checks it, writes its report, opens the report in
headless Chromium and prints: the time to write the report, the file size, the time until
the first view is rendered (the page's own measure from navigation start, and the wall
time seen from here), and the time to redraw the whole run and a zoomed view. Exits 1
when the first view takes longer than the floor (3 s).

    .venv/bin/python scripts/bench_report.py [--ops N] [--processes N] [--keep DIR]

Needs Debian's chromium (apt-get install -y chromium).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.analysis import check_run
from harness.report import write_report
from tests.support.chromium import chromium_path, load_page
from tests.support.synthetic import cas_register_run

FLOOR_S = 3.0
REDRAW = """(() => {
  const r = HR.report, v = r.view, t0 = performance.now();
  v.whole(); v.draw();
  const whole = performance.now() - t0;
  const mid = (v.t0 + v.t1) / 2, t1 = performance.now();
  v.set(mid - 5e5, mid + 5e5); v.draw();
  const lin = r.timeline.linearization;
  return {whole_ms: whole, zoomed_ms: performance.now() - t1, ops: r.timeline.n,
    lanes: r.data.lanes.length, points: lin ? lin.current().at.length : 0};
})()"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", type=int, default=100_000)
    ap.add_argument("--processes", type=int, default=10)
    ap.add_argument("--keys", type=int, default=10)
    ap.add_argument("--duration", type=float, default=100.0, help="seconds of history")
    ap.add_argument("--no-check", action="store_true", help="skip the linearizability check")
    ap.add_argument(
        "--stale-read",
        action="store_true",
        help="make one read stale: an invalid run, its counterexample and linearization drawn",
    )
    ap.add_argument("--keep", type=Path, default=None, help="write the run here and keep it")
    args = ap.parse_args()
    if chromium_path() is None:
        print(
            "bench_report: Chromium is not installed: apt-get install -y chromium", file=sys.stderr
        )
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
        base = args.keep or Path(tmp)
        run_dir = base / "sim-cas-register-partition" / "20260101T000000"
        started = time.perf_counter()
        cas_register_run(
            run_dir,
            ops=args.ops,
            processes=args.processes,
            keys=args.keys,
            duration_s=args.duration,
            faults=3,
            stale_read=args.stale_read,
        )
        made = time.perf_counter()
        if not args.no_check:
            verdict = check_run(run_dir, time_limit=120)["valid"]
        checked = time.perf_counter()
        report = write_report(run_dir)
        written = time.perf_counter()
        size = report.stat().st_size
        page = load_page(
            report.resolve().as_uri(), timeout=60, screenshot=False, evaluate={"redraw": REDRAW}
        )
    redraw = page.values.get("redraw") or {}
    first_view_s = (page.render_ms or float("inf")) / 1000
    print(f"operations: {args.ops} ({args.processes} processes, {args.keys} keys, 3 faults)")
    print(
        f"history generated in {made - started:.2f} s"
        + ("" if args.no_check else f", checked in {checked - made:.2f} s ({verdict})")
    )
    print(f"report written in {written - checked:.2f} s: {size / 1e6:.2f} MB ({size} bytes)")
    print(
        f"first view rendered: {first_view_s:.3f} s after navigation start "
        f"(wall {page.wall_s or float('nan'):.3f} s from the navigate command)"
    )
    print(
        f"redraw: whole run {redraw.get('whole_ms', float('nan')):.1f} ms, "
        f"1 s zoomed {redraw.get('zoomed_ms', float('nan')):.1f} ms "
        f"({redraw.get('ops')} operations loaded, {redraw.get('lanes')} lanes, "
        f"{redraw.get('points')} linearization points)"
    )
    print(
        f"network requests: {len(page.requests)} (the file itself), console errors: "
        f"{len(page.errors)}"
    )
    ok = first_view_s < FLOOR_S and not page.errors and page.rendered == "1"
    print(f"floor: first view under {FLOOR_S:g} s: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
