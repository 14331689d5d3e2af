#!/usr/bin/env python3
"""Generate a big history as our JSONL: simulated clients against an atomic object.

Linearizable by construction (see ``checkers.linear.simulate``); ``--corrupt P`` replaces
a share P of the results with random ones, which usually makes it invalid. A test.json
naming the model is written beside the history, so ``read_history`` picks the model.

    .venv/bin/python scripts/gen_history.py /tmp/big/history.jsonl --ops 1000000 --keys 1000

It streams: ops are written as they are made, so 10 million take no more memory than one
(``scripts/bench_stream.py`` writes one).

(A kv history's gets return whole strings that grow with each append: at a million
operations the file gets very large; the register model keeps values small.)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from checkers.linear.simulate import SIMULATED, iter_simulated
from core.ops import Op


def _corrupt_one_read(ops: Iterator[Op], after: int) -> Iterator[Op]:
    """``ops`` with the result of the first read that completes at or after event
    ``after`` replaced by 5, a value nothing writes (the five written are 0 to 4): invalid
    at one read, which the plain search must exhaust a big partition to prove."""
    done = False
    for op in ops:
        if not done and op.index >= after and op.type == "ok" and op.f == "read":
            op = op.with_(value=5)
            done = True
        yield op


def _stale_read(ops: Iterator[Op], after: int) -> Iterator[Op]:
    """``ops`` with the first read that completes ok at or after event ``after``, of a key
    a write or cas had changed before that read was invoked, answering nil: the initial
    state, which nothing writes again (a stale read: invalid at that one read)."""
    done = False
    changed: set[object] = set()  # keys a write or cas completed ok on
    invoked: dict[object, bool] = {}  # process -> whether its key had changed then
    for op in ops:
        if not done:
            if op.type == "invoke":
                invoked[op.process] = op.key in changed
            elif op.type == "ok" and op.f in ("write", "cas"):
                changed.add(op.key)
            elif (
                op.type == "ok"
                and op.f == "read"
                and op.index >= after
                and invoked.get(op.process)
                and op.value is not None
            ):
                op = op.with_(value=None)
                done = True
        yield op


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("out", type=Path, help="the history.jsonl to write")
    ap.add_argument("--ops", type=int, default=1_000_000, help="operations (invocations)")
    ap.add_argument("--keys", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=20, help="concurrent clients")
    ap.add_argument(
        "--model",
        choices=SIMULATED,
        default="register",
        help="register (default: small values) or kv (appended strings grow with the key)",
    )
    ap.add_argument("--p-info", type=float, default=0.01, help="share of unknown outcomes")
    ap.add_argument("--corrupt", type=float, default=0.0, help="share of corrupted results")
    ap.add_argument(
        "--corrupt-read-at",
        type=float,
        default=None,
        metavar="FRACTION",
        help="corrupt one read: the first one that completes after this share of the events "
        "reads 5, which nothing writes (the hard invalid key of the benchmark)",
    )
    ap.add_argument(
        "--stale-read-at",
        type=float,
        default=None,
        metavar="FRACTION",
        help="inject one stale read: the first read completing after this share of the "
        "events, of a key written before it was invoked, reads the initial nil again",
    )
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    n = 0
    ops = iter_simulated(
        args.model,
        args.ops,
        processes=args.concurrency,
        keys=args.keys,
        values=5,
        p_info=args.p_info,
        corrupt=args.corrupt,
        seed=args.seed,
    )
    if args.corrupt_read_at is not None:
        ops = _corrupt_one_read(ops, int(args.corrupt_read_at * 2 * args.ops))
    if args.stale_read_at is not None:
        ops = _stale_read(ops, int(args.stale_read_at * 2 * args.ops))
    with open(args.out, "w") as f:
        for op in ops:
            f.write(op.to_json())
            f.write("\n")
            n += 1
    (args.out.parent / "test.json").write_text(json.dumps({"model": args.model}) + "\n")
    took = time.perf_counter() - started
    print(f"wrote {n} events to {args.out} in {took:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
