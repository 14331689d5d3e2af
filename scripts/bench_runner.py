#!/usr/bin/env python3
"""The runner's throughput and cost: ops/s and the harness's CPU per operation.

One run of ``harness run --workload cas-register --concurrency 20`` (unlimited rate, no
fault, on the built-in sim unless ``--target`` says otherwise) per tree and round, the
trees interleaved within a round (the machine is shared and noisy: each tree's figure is
its median over the rounds). Both trees are measured the same way, from outside: over a
window of the workload's steady state (from ``--skip`` seconds after the history's first
line to ``--skip`` before the time limit), the client operations completed (the
history's completion lines) and the CPU time of the harness process and its worker
processes (``/proc``; the service's processes, the sim server or the Docker containers,
are not the harness's). The workers' start-up, the check and the report are outside the
window.

    .venv/bin/python scripts/bench_runner.py                      # this tree vs main at af2c204
    .venv/bin/python scripts/bench_runner.py --base /tmp/af2c204 --rounds 3
    .venv/bin/python scripts/bench_runner.py --target etcd --no-base --client-bench
    .venv/bin/python scripts/bench_runner.py --target etcd --no-base --clients thread

``--base DIR`` is a checkout of the commit to compare with, set up with its own
``make setup`` (default ``/tmp/af2c204``: ``git worktree add /tmp/af2c204 af2c204``).
Floors (issue 36): at least 3x the base's ops/s and at most a third of its CPU per op.
``--client-bench`` (a Docker target) also runs the target's register clients alone, with
no runner, for as long: what the service and its client library give on this machine,
the ceiling a runner can reach.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

from harness.load import process_cpu_s

ROOT = Path(__file__).resolve().parents[1]
SPAWN_S = 15.0
"""Seconds the clients-alone processes are given to start before their common window."""


class Sample(NamedTuple):
    """One run's steady-state window: client ops completed, seconds, harness CPU s."""

    ops: int
    seconds: float
    cpu_s: float

    @property
    def rate(self) -> float:
        return self.ops / self.seconds

    @property
    def us_per_op(self) -> float:
        return self.cpu_s / self.ops * 1e6


def _cpu(pid: int) -> float:
    return process_cpu_s(pid) or 0.0


def _children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _harness_pids(root: int) -> list[int]:
    """The harness process and its workers (children started by multiprocessing's
    spawn); not the service's processes."""
    pids = [root]
    for child in _children(root):
        try:
            cmd = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmd:
            pids.append(child)
    return pids


def _completions(history: Path) -> int:
    """The client completions written so far (lines of ``history.jsonl`` that are not
    invocations or the nemesis's)."""
    try:
        data = history.read_bytes()
    except OSError:
        return 0
    data = data[: data.rfind(b"\n") + 1]
    lines = data.count(b"\n")
    return lines - data.count(b'"type":"invoke"') - data.count(b'"process":"nemesis"')


def measure(tree: Path, args: argparse.Namespace) -> Sample:
    """One run of ``tree``'s harness, measured over its steady-state window."""
    out = Path(tempfile.mkdtemp(prefix="bench-runner-"))
    cmd = [
        str(tree / ".venv" / "bin" / "harness"),
        "run",
        "--target",
        args.target,
        "--workload",
        "cas-register",
        "--nemesis",
        "none",
        "--concurrency",
        str(args.concurrency),
        "--time-limit",
        str(args.time_limit),
        "--recovery-time",
        "0",
        "--seed",
        "1",
        "-o",
        str(out),
    ]
    if args.clients is not None and tree == ROOT:  # the base may predate --clients
        cmd += ["--clients", args.clients]
    proc = subprocess.Popen(
        cmd, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=_env(tree)
    )
    try:
        history = _wait_for_history(out, proc)
        time.sleep(args.skip)
        pids = _harness_pids(proc.pid)
        t0, ops0, cpu0 = time.monotonic(), _completions(history), sum(map(_cpu, pids))
        time.sleep(args.time_limit - 2 * args.skip)
        t1, ops1 = time.monotonic(), _completions(history)
        cpu1 = sum(_cpu(p) for p in pids)
        proc.wait(timeout=600)
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(60)
    return Sample(ops1 - ops0, t1 - t0, cpu1 - cpu0)


def _env(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    env["PATH"] = f"{tree / '.venv' / 'bin'}:{env.get('PATH', '')}"
    return env


def _wait_for_history(out: Path, proc: subprocess.Popen[bytes]) -> Path:
    """The run's history file, once its first op is in it."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the run ended (exit {proc.returncode}) before its first op")
        for h in out.glob("*/*/history.jsonl"):
            if h.stat().st_size > 0:
                return h
        time.sleep(0.05)
    raise SystemExit("no op in the history within 300 s")


def _client_loop(
    factory: Any, process: int, clock: Any, window: tuple[float, float], out: Any
) -> None:
    """One client alone: reads, writes and compare-and-sets on three keys, back to back,
    in ``window`` (monotonic start and end, the same for every process); puts (ops, its
    CPU seconds) on ``out``."""
    from core.client import Invocation, WorkerContext

    client = factory(WorkerContext(process, clock, thread=process))
    rng = random.Random(process)
    ops, value = 0, process * 10**9
    start, end = window
    time.sleep(max(0.0, start - time.monotonic()))
    cpu0 = time.process_time()
    while time.monotonic() < end:
        key, pick = f"k{rng.randrange(3)}", rng.random()
        value += 1
        if pick < 0.5:
            inv = Invocation("read", None, key)
        elif pick < 0.75:
            inv = Invocation("write", value, key)
        else:
            inv = Invocation("cas", [rng.randrange(value - 5, value), value], key)
        client.invoke(inv)
        ops += 1
    out.put((ops, time.process_time() - cpu0))
    client.close()


def _raw_etcd_loop(address: str, process: int, window: tuple[float, float], out: Any) -> None:
    """etcd's own ceiling from one process: linearizable reads and puts on three keys as
    plain HTTP/1.1 keep-alive POSTs to its JSON gateway (no client library to speak
    of); puts (ops, its CPU seconds) on ``out``."""
    import base64
    import http.client
    import json

    host, _, port = address.rpartition(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    rng = random.Random(process)
    keys = [base64.b64encode(f"bench/k{i}".encode()).decode() for i in range(3)]
    start, end = window
    time.sleep(max(0.0, start - time.monotonic()))
    ops, cpu0 = 0, time.process_time()
    while time.monotonic() < end:
        key = keys[rng.randrange(3)]
        if rng.random() < 0.5:
            path, body = "/v3/kv/range", {"key": key}
        else:
            value = base64.b64encode(str(ops).encode()).decode()
            path, body = "/v3/kv/put", {"key": key, "value": value}
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        conn.getresponse().read()
        ops += 1
    out.put((ops, time.process_time() - cpu0))
    conn.close()


def client_bench(args: argparse.Namespace) -> list[tuple[str, Sample]]:
    """The target's register clients alone (the harness's own client library, one process
    each, no runner, no generator, no history) on a cluster of its own, for as long as
    the runs' window: what the service and its clients give on this machine; for etcd
    also plain HTTP to its gateway (``_raw_etcd_loop``): what etcd gives here."""
    from clusters import run_target
    from core.options import RunOptions
    from core.run_clock import RunClock
    from harness.validate import check_run, decide

    asked = RunOptions.of(target=args.target, workload="cas-register", nemesis=["none"])
    opts, target = check_run(decide(asked))
    clock = RunClock()
    cluster = run_target.make_cluster(target, opts, clock)
    cluster.start(Path(tempfile.mkdtemp(prefix="bench-clients-")))
    try:
        factory = target.client_factory(opts, cluster, None)
        rows = [
            (f"{args.target} clients alone", _in_processes(_client_loop, (factory,), clock, args))
        ]
        if args.target == "etcd":
            address = next(iter(cluster.endpoints().values()))
            sample = _in_processes(_raw_etcd_loop, (address,), None, args)
            rows.append(("etcd alone, plain HTTP", sample))
    finally:
        cluster.stop()
    return rows


def _in_processes(loop: Any, head: tuple[Any, ...], clock: Any, args: argparse.Namespace) -> Sample:
    """``loop`` in ``--concurrency`` processes over one window as long as the runs' (all
    started first: ``SPAWN_S`` is left for their start-up, which would otherwise take
    CPU from the first ones' loops)."""
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    seconds = args.time_limit - 2 * args.skip
    start = time.monotonic() + SPAWN_S
    window = (start, start + seconds)
    tail = (clock, window, out) if clock is not None else (window, out)
    procs = [ctx.Process(target=loop, args=(*head, p, *tail)) for p in range(args.concurrency)]
    for p in procs:
        p.start()
    got = [out.get(timeout=SPAWN_S + seconds + 120) for _ in procs]
    for p in procs:
        p.join(30)
    return Sample(sum(g[0] for g in got), seconds, sum(g[1] for g in got))


def _row(name: str, samples: list[Sample]) -> tuple[float, float]:
    rate = statistics.median(s.rate for s in samples)
    per_op = statistics.median(s.us_per_op for s in samples)
    each = ", ".join(f"{s.rate:.0f}" for s in samples)
    print(f"{name:<28} {rate:8.0f} ops/s  {per_op:7.1f} us CPU/op   (ops/s each: {each})")
    return rate, per_op


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", type=Path, default=Path("/tmp/af2c204"))
    p.add_argument("--no-base", action="store_true", help="measure this tree only")
    p.add_argument("--target", default="sim")
    p.add_argument("--concurrency", type=int, default=20)
    p.add_argument("--time-limit", type=float, default=12.0)
    p.add_argument("--skip", type=float, default=2.0, help="seconds left out at each end")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--client-bench", action="store_true")
    p.add_argument(
        "--clients",
        choices=["process", "thread", "auto"],
        help="this tree's --clients (default: its own default, auto)",
    )
    args = p.parse_args()
    trees = {"this tree": ROOT}
    if not args.no_base:
        if not (args.base / ".venv" / "bin" / "harness").exists():
            raise SystemExit(
                f"{args.base} has no .venv: git worktree add {args.base} af2c204 "
                f"&& make -C {args.base} setup"
            )
        trees["base " + args.base.name] = args.base
    results: dict[str, list[Sample]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            results[name].append(measure(tree, args))
    print(
        f"{args.target} cas-register, {args.concurrency} clients, unlimited rate, "
        f"median of {args.rounds} round(s), window {args.time_limit - 2 * args.skip:g} s"
    )
    rows = {name: _row(name, samples) for name, samples in results.items()}
    if args.client_bench:
        alone = [client_bench(args) for _ in range(args.rounds)]
        for i, (name, _) in enumerate(alone[0]):
            _row(name, [rows_of_round[i][1] for rows_of_round in alone])
        print("  (alone: the clients' own CPU per op, no harness)")
    ok = True
    if len(rows) == 2:
        (rate, per_op), (base_rate, base_per_op) = rows.values()
        speed, cost = rate / base_rate, per_op / base_per_op
        print(f"ops/s {speed:.2f}x the base (floor 3x); CPU per op {cost:.2f}x (ceiling 0.33x)")
        ok = speed >= 3 and cost <= 1 / 3
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
