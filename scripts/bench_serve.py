#!/usr/bin/env python3
"""Load on ``harness serve``: many GETs from many concurrent connections, on loopback.

Builds a results folder of the four standard synthetic runs (``tests.support.synthetic``,
each checked and with its report written) unless ``--results`` names one, starts
``harness serve`` on it in its own process (a free port), and sends ``--requests`` GETs
from ``--concurrency`` threads, each a new connection (the server speaks HTTP/1.0), drawn
in turn from: the index, and each run's report, test.json and history. Prints how many
were answered and with what status, and the latency of each (connect to last byte):
p50, p90, p99 and the worst, in milliseconds, and the requests a second. Exits 1 when a
request went unanswered or p99 is above ``--p99-ms``.

    .venv/bin/python scripts/bench_serve.py [--requests 4000] [--concurrency 50]
"""

from __future__ import annotations

import argparse
import http.client
import itertools
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

HARNESS = Path(sys.executable).parent / "harness"
RUN_FILES = ("report.html", "test.json", "history.jsonl")


def demo_results(where: Path) -> Path:
    """A results folder of the standard synthetic runs, checked, each with its report."""
    from harness.report import write_report
    from tests.support.synthetic import demo_runs

    root = where / "results"
    for run in demo_runs(root).values():
        write_report(run)
    return root


def paths_of(root: Path) -> list[str]:
    """The URLs to ask for: the index, and the files of every run below ``root``."""
    from harness.report import find_run_dirs

    out = ["/"]
    for run in find_run_dirs([root]):
        rel = run.resolve().relative_to(root.resolve()).as_posix()
        out += [f"/{rel}/{f}" for f in RUN_FILES if (run / f).is_file()]
    return out


def start_server(root: Path) -> tuple[subprocess.Popen[str], int]:
    """``harness serve ROOT --port 0`` in its own process, and the port it chose."""
    proc = subprocess.Popen(
        [str(HARNESS), "serve", str(root), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("serving "):
            port = int(line.split("http://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # drain
            return proc, port
    proc.kill()
    raise SystemExit(f"harness serve did not start (exit {proc.wait()})")


def load(
    port: int, paths: list[str], requests: int, concurrency: int, timeout: float
) -> tuple[list[float], Counter[str]]:
    """Send ``requests`` GETs from ``concurrency`` threads; each answer's latency in
    seconds, and the count of each status (``error: ...`` for no answer)."""
    jobs = itertools.cycle(paths)
    lock = threading.Lock()
    left = [requests]
    latencies: list[float] = []
    statuses: Counter[str] = Counter()

    def worker() -> None:
        while True:
            with lock:
                if not left[0]:
                    return
                left[0] -= 1
                path = next(jobs)
            started = time.perf_counter()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            try:
                conn.request("GET", path)
                response = conn.getresponse()
                response.read()
                status = str(response.status)
            except OSError as e:
                status = f"error: {type(e).__name__}"
            finally:
                conn.close()
            took = time.perf_counter() - started
            with lock:
                statuses[status] += 1
                if not status.startswith("error"):
                    latencies.append(took)

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, statuses


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))] if ordered else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=4000, help="GETs in all")
    ap.add_argument("--concurrency", type=int, default=50, help="connections at once")
    ap.add_argument("--results", type=Path, default=None, help="serve this results folder")
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds for one answer")
    ap.add_argument("--p99-ms", type=float, default=100.0, help="exit 1 above this p99")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        root = args.results or demo_results(Path(tmp))
        paths = paths_of(root)
        proc, port = start_server(root)
        try:
            started = time.perf_counter()
            latencies, statuses = load(port, paths, args.requests, args.concurrency, args.timeout)
            wall = time.perf_counter() - started
        finally:
            proc.terminate()
            proc.wait(10)
    ms = {p: percentile(latencies, p) * 1000 for p in (50, 90, 99, 100)}
    print(
        f"{args.requests} GETs ({len(paths)} paths), {args.concurrency} concurrent: "
        f"{len(latencies)} answered {dict(sorted(statuses.items()))} in {wall:.1f} s "
        f"({len(latencies) / wall:.0f}/s)"
    )
    print(f"latency ms: p50 {ms[50]:.1f}, p90 {ms[90]:.1f}, p99 {ms[99]:.1f}, max {ms[100]:.1f}")
    unanswered = args.requests - len(latencies)
    return 1 if unanswered or ms[99] > args.p99_ms else 0


if __name__ == "__main__":
    sys.exit(main())
