"""Histories with known properties, for tests, fuzzing and benchmarks.

``simulate`` runs concurrent clients against a truly atomic object: every operation takes
effect at one instant between its invocation and its completion, so the history it
records is linearizable by construction. Operations may end ``info`` (the client gives
up; the effect may still happen later, or never; the process then retires and a new one
takes its place) or ``fail`` (the operation did not happen). With ``corrupt`` > 0 some
results are replaced by random ones, which usually breaks linearizability: the verdict
is then unknown in advance (use the brute-force check).

Supported models: ``register``, ``cas-register``, ``etcd``, ``kv``, ``mutex``.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from core.history import History
from core.ops import Op

SIMULATED = ("register", "cas-register", "etcd", "kv", "mutex")


@dataclass
class _Pending:
    process: int
    f: str
    value: Any
    key: Any
    applied: bool = False
    result: Any = None
    ok: bool = True


@dataclass
class _Object:
    """The atomic object: a state per key and how each operation changes it."""

    model: str
    values: int
    """Distinct values written; 0: every written value is new (a counter)."""
    state: dict[Any, Any] = field(default_factory=dict)
    written: list[Any] = field(default_factory=list)

    def initial(self) -> Any:
        return {"cas-register": 0, "kv": ""}.get(self.model)

    def invocation(self, rng: random.Random, process: int, key: Any) -> tuple[str, Any]:
        if self.model == "mutex":
            holder = self.state.get(key, self.initial())
            return ("release", None) if holder == process else ("acquire", None)
        if self.model == "kv":
            f = rng.choice(("get", "put", "append", "append"))
            return f, None if f == "get" else f"{process}.{rng.randrange(1000)};"
        f = rng.choice(("read", "write", "cas"))
        if f == "read":
            return f, None
        if self.values:
            if f == "write":
                return f, rng.randrange(self.values)
            return f, [rng.randrange(self.values), rng.randrange(self.values)]
        if f == "write":
            return f, self.value(rng)
        # Unique values: expect what the key holds now, most of the time.
        held = self.state.get(key, self.initial())
        old = held if rng.random() < 0.6 else self.value(rng, seen=True)
        return f, [old, self.value(rng)]

    def value(self, rng: random.Random, seen: bool = False) -> Any:
        """A value to write: random among ``values``, or (``values`` 0) a new one; with
        ``seen``, one written before (for a read's corrupted result)."""
        if self.values:
            return rng.randrange(self.values)
        if seen:
            return rng.choice(self.written) if self.written else self.initial()
        self.written.append(len(self.written) + 1)
        return self.written[-1]

    def apply(self, op: _Pending) -> None:
        """Take effect now: record the result and whether it succeeded."""
        s = self.state.get(op.key, self.initial())
        f, v = op.f, op.value
        new = s
        if f in ("read", "get"):
            op.result = s
        elif f in ("write", "put"):
            new = v
        elif f == "append":
            new = s + v
        elif f == "cas":
            op.ok = s == v[0]
            if op.ok:
                new = v[1]
        elif f == "acquire":
            op.ok = s is None
            if op.ok:
                new = op.process
        elif f == "release":
            op.ok = s == op.process
            if op.ok:
                new = None
        self.state[op.key] = new
        op.applied = True


def simulate(
    model: str,
    n_ops: int,
    *,
    processes: int = 4,
    keys: int = 1,
    values: int = 4,
    p_info: float = 0.05,
    corrupt: float = 0.0,
    seed: int | None = None,
) -> History:
    """A history of ``n_ops`` operations by ``processes`` concurrent clients."""
    return History(_ops(model, n_ops, processes, keys, values, p_info, corrupt, seed))


def iter_simulated(
    model: str,
    n_ops: int,
    *,
    processes: int = 4,
    keys: int = 1,
    values: int = 4,
    p_info: float = 0.05,
    corrupt: float = 0.0,
    seed: int | None = None,
) -> Iterator[Op]:
    """``simulate`` as a stream of ops (for very long histories)."""
    return _ops(model, n_ops, processes, keys, values, p_info, corrupt, seed)


def _ops(
    model: str,
    n_ops: int,
    processes: int,
    keys: int,
    values: int,
    p_info: float,
    corrupt: float,
    seed: int | None,
) -> Iterator[Op]:
    if model not in SIMULATED:
        raise ValueError(f"cannot simulate {model!r}: choose one of {', '.join(SIMULATED)}")
    rng = random.Random(seed)
    obj = _Object("register" if model in ("register", "etcd") else model, values)
    keyed = keys > 1
    idle = list(range(processes))
    next_process = processes
    pending: dict[int, _Pending] = {}
    late: list[_Pending] = []  # timed out, not applied yet: may still take effect
    index = 0
    invoked = 0
    time = 0

    def emit(p: int, type_: str, f: str, value: Any, key: Any) -> Op:
        nonlocal index, time
        time += rng.randrange(1, 1000)
        op = Op(index, time, p, type_, f, value, key if keyed else None)  # type: ignore[arg-type]
        index += 1
        return op

    while invoked < n_ops or pending:
        choice = rng.random()
        if idle and invoked < n_ops and (choice < 0.4 or not pending):
            p = idle.pop(rng.randrange(len(idle)))
            key = rng.randrange(keys)
            f, value = obj.invocation(rng, p, key)
            pending[p] = _Pending(p, f, value, key)
            invoked += 1
            yield emit(p, "invoke", f, value, key)
            continue
        if late and choice < 0.5:
            op = late.pop(rng.randrange(len(late)))
            if rng.random() < 0.5:
                obj.apply(op)
            continue
        if not pending:
            continue
        p = rng.choice(list(pending))
        op = pending[p]
        if not op.applied and rng.random() < 0.6:
            obj.apply(op)
            continue
        del pending[p]
        if rng.random() < p_info:
            if not op.applied:
                late.append(op)
            yield emit(p, "info", op.f, op.value, op.key)
            idle.append(next_process)
            next_process += 1
            continue
        if not op.applied:
            obj.apply(op)
        idle.append(p)
        yield emit(p, *_completion(model, op, rng, corrupt, obj))


def _completion(
    model: str, op: _Pending, rng: random.Random, corrupt: float, obj: _Object
) -> tuple[str, str, Any, Any]:
    """(type, f, value, key) of an applied op's completion."""
    result = op.result
    if rng.random() < corrupt:
        if op.f in ("read", "get"):
            result = obj.value(rng, seen=True) if op.f == "read" else f"{rng.randrange(3)};"
        elif op.f in ("cas", "acquire", "release"):
            op.ok = not op.ok
    if op.f in ("read", "get"):
        return "ok", op.f, result, op.key
    if not op.ok:
        return "fail", op.f, op.value, op.key
    return "ok", op.f, op.value, op.key
