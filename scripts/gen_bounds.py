#!/usr/bin/env python3
"""Histories that test a check's bounds (issue 29): big, or concurrent, or holding a huge
value, as plain as histories get; ``harness check`` of each must keep to ``--time-limit``
and ``--memory-limit`` (unknown with the reason past them, never an abort).

Shapes (``--shape``), each one register (no key) of ``--ops`` operations:

- ``sequential``: ``--clients`` clients, one operation open at a time (each client's
  operation returns before the next client's is invoked), writes and reads of the value
  just written; ``--values`` ``cycle`` (seven values again and again), ``unique`` (each
  write its own) or ``float`` (as ``unique``, as floats: values the register search in C
  does not read, so the general search takes the history);
- ``processes``: the same with a new process for every operation (a million distinct
  processes);
- ``concurrent``: writes only, every one invoked before any returns;
- ``edn-huge-value``: a Jepsen EDN history of sequential writes and reads, ``--mib``
  MiB in all, one write of which holds a string of ``--value-mib`` MiB.

Each is linearizable. A test.json naming the model (``register``) is written beside a
JSONL history. The tests generate what they need with the same functions (``write``).

    .venv/bin/python scripts/gen_bounds.py /tmp/b/history.jsonl --shape sequential --ops 600000
    .venv/bin/python scripts/gen_bounds.py /tmp/c/history.jsonl --shape concurrent --ops 60000
    .venv/bin/python scripts/gen_bounds.py /tmp/e/history.edn --shape edn-huge-value --mib 30
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

SHAPES: Final = ("sequential", "processes", "concurrent", "edn-huge-value")
VALUES: Final = ("cycle", "unique", "float")
Event = tuple[int, int, str, str, Any]
"""An event: its index (its time too), process, type, f and value."""


def _value(i: int, values: str) -> Any:
    if values == "cycle":
        return i % 7
    return i if values == "unique" else i + 0.5


def sequential(
    ops: int, clients: int = 1, values: str = "cycle", fresh: bool = False
) -> Iterator[Event]:
    """``ops`` operations on one register, one open at a time, taking turns among
    ``clients`` (``fresh``: a new process for every operation): a write of a value, then
    a read of it, again and again."""
    value: Any = None
    for i in range(ops):
        p = i if fresh else i % clients
        if i % 2 == 0:
            value = _value(i // 2, values)
            yield 2 * i, p, "invoke", "write", value
            yield 2 * i + 1, p, "ok", "write", value
        else:
            yield 2 * i, p, "invoke", "read", None
            yield 2 * i + 1, p, "ok", "read", value


def concurrent(ops: int, values: str = "unique") -> Iterator[Event]:
    """``ops`` writes on one register, each by its own process, all invoked before the
    first returns."""
    for i in range(ops):
        yield i, i, "invoke", "write", _value(i, values)
    for i in range(ops):
        yield ops + i, i, "ok", "write", _value(i, values)


def write_jsonl(path: Path, events: Iterator[Event]) -> int:
    """``events`` as our JSONL history at ``path``, its test.json beside it (model
    ``register``); the number written."""
    n = 0
    with open(path, "w") as f:
        for i, p, t, f_, v in events:
            value = "null" if v is None else v
            f.write(
                f'{{"index":{i},"time":{i},"process":{p},"type":"{t}","f":"{f_}",'
                f'"value":{value}}}\n'
            )
            n += 1
    (path.parent / "test.json").write_text(json.dumps({"model": "register"}) + "\n")
    return n


def write_edn_huge_value(path: Path, mib: float, value_mib: float) -> int:
    """A Jepsen EDN history of about ``mib`` MiB at ``path``: sequential writes and reads
    of small integers by ten processes, and, a third of the way in, one write (and the
    read of it) holding a string of ``value_mib`` MiB. The number of events written."""
    total = int(mib * (1 << 20))
    huge = "x" * int(value_mib * (1 << 20))
    at = total // 3
    n = 0
    done = False
    value: Any = 0
    with open(path, "w") as f:
        while f.tell() < total:
            p = n % 10
            if n % 4 == 0:
                value = n % 7 if done or f.tell() < at else huge
                done = done or value is huge
            f_ = "write" if n % 4 == 0 else "read"
            shown = f'"{value}"' if isinstance(value, str) else str(value)
            f.write(_edn_op(n, p, "invoke", f_, shown if f_ == "write" else "nil"))
            f.write(_edn_op(n + 1, p, "ok", f_, shown))
            n += 2
    return n


def _edn_op(n: int, p: int, t: str, f: str, value: str) -> str:
    return f"{{:type :{t}, :f :{f}, :value {value}, :process {p}, :time {n}, :index {n}}}\n"


def write(path: Path, shape: str, ops: int, clients: int = 1, values: str = "cycle",
          mib: float = 30, value_mib: float = 10) -> int:  # fmt: skip
    """The history of ``shape`` at ``path`` (see the module's docstring); the number of
    events written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if shape == "edn-huge-value":
        return write_edn_huge_value(path, mib, value_mib)
    if shape == "concurrent":
        return write_jsonl(path, concurrent(ops, values))
    return write_jsonl(path, sequential(ops, clients, values, fresh=shape == "processes"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the history to write (.jsonl, or .edn)")
    ap.add_argument("--shape", choices=SHAPES, default="sequential")
    ap.add_argument("--ops", type=int, default=600_000, help="operations (invocations)")
    ap.add_argument("--clients", type=int, default=1, help="sequential: clients taking turns")
    ap.add_argument("--values", choices=VALUES, default="cycle")
    ap.add_argument("--mib", type=float, default=30.0, help="edn-huge-value: the file's size")
    ap.add_argument("--value-mib", type=float, default=10.0, help="edn-huge-value: the value's")
    args = ap.parse_args()
    started = time.perf_counter()
    n = write(args.out, args.shape, args.ops, args.clients, args.values, args.mib, args.value_mib)
    took = time.perf_counter() - started
    print(f"wrote {n} events to {args.out} in {took:.1f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
