"""Measure the Docker targets: image build time, time to healthy, memory per node.

    .venv/bin/python scripts/bench_clusters.py                  # images as they are
    .venv/bin/python scripts/bench_clusters.py --from-scratch   # remove ours, build all
    .venv/bin/python scripts/bench_clusters.py --from-cache     # remove ours, reload archives
    .venv/bin/python scripts/bench_clusters.py --targets etcd redis --repeat 3

``--from-scratch`` removes every image labelled by the harness and ignores the archive
cache (debootstrap's downloaded packages are kept). Time to healthy is from ``start()``
to its return (network, containers, servers, health probe); memory is each node's cgroup
usage less inactive page cache (``docker stats``: it includes the data on the node's
tmpfs, such as etcd's preallocated 64 MB WAL segments) and the server process's RSS, read a
few seconds after healthy.
Goals: etcd and redis under 15 s, zookeeper and consul under 30 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, NamedTuple

from clusters import cleanup, images
from clusters._docker import LABEL_RUN, connect
from clusters.docker_cluster import DockerCluster
from clusters.server import ClusterOptions
from clusters.target_registry import TARGETS
from core.cluster import ClusterError

GOALS = {"etcd": 15.0, "redis": 15.0, "redlock": 15.0, "zookeeper": 30.0, "consul": 30.0}


def mib(stats: dict[str, Any]) -> float:
    """Memory in use less page cache, in MiB, from one ``docker stats`` sample."""
    mem = stats.get("memory_stats") or {}
    inner = mem.get("stats") or {}
    cache = inner.get("total_inactive_file", inner.get("inactive_file", inner.get("cache", 0)))
    return (int(mem.get("usage", 0)) - int(cache)) / 2**20


def bench_images(args: argparse.Namespace) -> None:
    if args.from_scratch or args.from_cache:
        removed = cleanup.remove_images()
        print(f"removed {len(removed)} harness image(s)")
    started = time.monotonic()
    results = images.build_images(
        [], lambda line: print(f"  {line}", flush=True), use_cache=not args.from_scratch
    )
    total = time.monotonic() - started
    for r in results:
        print(f"image {r.name:<10} {r.how:<8} {r.seconds:7.1f} s  {r.tag}")
    print(f"images: all ready in {total:.1f} s")


class Sample(NamedTuple):
    """One start of a target: seconds to healthy, then MiB per node (cgroup; server RSS)."""

    healthy: float
    cgroup_mib: list[float]
    rss_mib: list[float]


def bench_target(name: str, run_dir: Path, settle: float) -> Sample:
    """Start ``name``, time it to healthy, read memory after ``settle`` seconds, stop it."""
    run_id = f"bench{uuid.uuid4().hex[:6]}"
    cluster = TARGETS[name].build(ClusterOptions(run_id=run_id))
    assert isinstance(cluster, DockerCluster)
    try:
        started = time.monotonic()
        cluster.start(run_dir / f"{name}-{run_id}")
        healthy = time.monotonic() - started
        time.sleep(settle)
        client = connect()
        containers = client.containers.list(filters={"label": f"{LABEL_RUN}={run_id}"})
        with ThreadPoolExecutor(max_workers=len(containers)) as pool:
            samples = list(pool.map(lambda c: c.stats(stream=False), containers))
        rss = [
            cluster.exec(n, ["ps", "-o", "rss=", "-C", cluster.server.process])[1]
            for n in cluster.nodes()
        ]
        rss_mib = [sum(int(x) for x in out.split()) / 1024 for out in rss]
        return Sample(healthy, sorted(mib(s) for s in samples), sorted(rss_mib))
    finally:
        cluster.stop()


def _list(values: list[float]) -> str:
    return "/".join(f"{v:.0f}" for v in values)


def first_op(name: str, out: Path) -> float:
    """Seconds from launching ``harness run --target NAME`` (its default workload) to the
    first operation in its history: cluster start, resource, workers, first invocation."""
    started = time.monotonic_ns()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            "--target",
            name,
            "--nemesis",
            "none",
            "--time-limit",
            "2",
            "--recovery-time",
            "0",
            "--lease-ttl",
            "5",
            "--keepalive",
            "1",
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode not in (0, 1, 2):
        raise ClusterError(f"harness run --target {name} failed: {proc.stderr[-300:]}")
    run_dir = (out / "latest").resolve()
    test = json.loads((run_dir / "test.json").read_text())
    lines = (run_dir / "history.jsonl").read_text().splitlines()
    if not lines:
        raise ClusterError(f"harness run --target {name} recorded no operation; see {run_dir}")
    first = json.loads(lines[0])
    return (test["clock_origin_ns"] + first["time"] - started) / 1e9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--from-scratch",
        action="store_true",
        help="remove the harness's images and build them without the cache",
    )
    parser.add_argument(
        "--from-cache",
        action="store_true",
        help="remove the harness's images and reload them from the cache",
    )
    parser.add_argument("--skip-images", action="store_true", help="only time the clusters")
    parser.add_argument(
        "--targets",
        nargs="*",
        default=[n for n, s in TARGETS.items() if s.image],
        help="targets to start (default: every Docker target)",
    )
    parser.add_argument("--repeat", type=int, default=1, help="starts per target")
    parser.add_argument(
        "--settle", type=float, default=3.0, help="seconds after healthy before reading memory"
    )
    args = parser.parse_args()
    try:
        if not args.skip_images:
            bench_images(args)
        with tempfile.TemporaryDirectory(prefix="bench-clusters-") as tmp:
            for name in args.targets:
                runs = [bench_target(name, Path(tmp), args.settle) for _ in range(args.repeat)]
                times = [r.healthy for r in runs]
                goal = GOALS.get(name)
                verdict = "" if goal is None else (" ok" if max(times) < goal else " OVER GOAL")
                print(
                    f"{name:<10} healthy in {statistics.median(times):5.1f} s "
                    f"(runs: {', '.join(f'{t:.1f}' for t in times)}; goal < {goal} s){verdict}; "
                    f"MiB per node: cgroup {_list(runs[-1].cgroup_mib)}, "
                    f"server RSS {_list(runs[-1].rss_mib)}",
                    flush=True,
                )
            for name in args.targets:
                try:
                    t = first_op(name, Path(tmp) / "runs" / name)
                except ClusterError as e:
                    print(f"{name:<10} harness run -> no first operation: {e}", flush=True)
                    continue
                goal = GOALS.get(name)
                ok = "" if goal is None else (" ok" if t < goal else " OVER GOAL")
                print(
                    f"{name:<10} harness run -> first operation in {t:5.1f} s "
                    f"(goal < {goal} s){ok}",
                    flush=True,
                )
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
