"""A deterministic, in-memory interpreter: plays a generator against fake clients.

``simulate`` follows the runner contract of ``core.gen.context`` exactly, with a simulated
clock instead of sleeping, so it is what unit tests use to check a schedule, and what proves
replayability: the same generator, seed and fake clients give the identical op list.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from typing import Any

from core.gen.context import (
    PENDING,
    Context,
    GeneratorError,
    Request,
    Thread,
    check_request,
    is_client,
    to_ns,
)
from core.gen.lift import GenLike, seeded
from core.gen.rng import derive_seed, rng_below
from core.ops import NEMESIS, Op, OpType

Latency = int | tuple[int, int] | Callable[[Op], int]
Completer = Callable[[Op], "Op | str"]

POLL_NS = 10_000_000  # how long the runner waits on PENDING with nothing in flight


def simulate(
    gen: GenLike,
    threads: int,
    seed: int = 0,
    *,
    latency: Latency = 0,
    complete: Completer | None = None,
    until_ns: int | None = None,
    max_ops: int | None = None,
    nemesis: bool = True,
    poll_ns: int = POLL_NS,
    max_idle_ns: int = to_ns(600),
) -> list[Op]:
    """Run ``seeded(seed, gen)`` with ``threads`` client threads (and a nemesis thread unless
    ``nemesis=False``) and return the history: invocations and completions in time order,
    ``index`` = position.

    - ``latency``: how long each op takes, in ns: a constant, a ``(lo, hi)`` range drawn
      uniformly (seeded from ``seed``), or a function of the invocation.
    - ``complete``: the completion of an invocation, as an op type (``"ok"``, ``"fail"``,
      ``"info"``) or an ``Op`` whose type, value, error and node are used. Default: clients
      ``ok`` with the invocation's value, the nemesis ``info``. A client op that ends
      ``info`` retires its process; the thread continues as process ``p + threads``.
    - ``until_ns``: stop asking for ops at this simulated time; ``max_ops``: after this many
      invocations. Ops in flight are completed either way.
    - With nothing in flight, PENDING advances the clock by ``poll_ns``; PENDING for
      ``max_idle_ns`` without ``until_ns`` raises (a generator that can never progress).
    """
    g = seeded(seed, gen)
    tp: dict[Thread, Any] = {t: t for t in range(threads)}
    if nemesis:
        tp[NEMESIS] = NEMESIS
    free: set[Thread] = set(tp)
    everyone = frozenset(tp)
    heap: list[tuple[int, int, Thread, Op]] = []
    history: list[Op] = []
    now = 0
    seq = 0
    invoked = 0
    idle_since: int | None = None
    lat_state = derive_seed(seed, 0x51A7)

    def latency_of(inv: Op) -> int:
        nonlocal lat_state
        if isinstance(latency, int):
            return latency
        if isinstance(latency, tuple):
            lo, hi = latency
            x, lat_state = rng_below(lat_state, hi - lo + 1)
            return lo + x
        return latency(inv)

    def complete_next() -> None:
        nonlocal now, tp, g
        t, _, thread, inv = heapq.heappop(heap)
        if t > now:
            now = t
        if complete is None:
            typ: OpType = "ok" if is_client(thread) else "info"
            comp = Op(len(history), now, inv.process, typ, inv.f, inv.value, inv.key)
        else:
            res = complete(inv)
            if isinstance(res, str):
                if res not in ("ok", "fail", "info"):
                    raise GeneratorError(f"complete() must return ok, fail or info, not {res!r}")
                comp = Op(len(history), now, inv.process, res, inv.f, inv.value, inv.key)  # type: ignore[arg-type]
            else:
                comp = Op(
                    len(history),
                    now,
                    inv.process,
                    res.type,
                    inv.f,
                    res.value,
                    inv.key,
                    res.error,
                    res.node,
                )
            if comp.type == "invoke":
                raise GeneratorError(f"complete() returned an invoke for {inv!r}")
        history.append(comp)
        free.add(thread)
        g = g.update(Context(now, frozenset(free), tp, everyone), comp)
        if comp.type == "info" and is_client(thread):
            p = inv.process
            if not isinstance(p, int):
                raise GeneratorError(f"client process ids are ints, not {p!r}")
            tp = {**tp, thread: p + threads}  # copy: earlier contexts keep theirs

    while True:
        while heap and heap[0][0] <= now:
            complete_next()
        if (until_ns is not None and now >= until_ns) or (
            max_ops is not None and invoked >= max_ops
        ):
            break
        if not free and heap:
            complete_next()  # nothing could be invoked anyway
            continue
        ctx = Context(now, frozenset(free), tp, everyone)
        r, g2 = g.op(ctx)
        if r is None:
            break
        if r is PENDING:
            g = g2  # the runner keeps the successor of PENDING
            if heap and heap[0][0] <= now + poll_ns:
                complete_next()  # an event before the poll timeout
                continue
            if heap:
                now += poll_ns  # the runner re-asks after its poll timeout
                continue
            if idle_since is None:
                idle_since = now
            elif until_ns is None and now - idle_since >= max_idle_ns:
                raise GeneratorError(
                    f"generator PENDING for {(now - idle_since) / 1e9:.0f} s of simulated time "
                    "with no op in flight: it waits for something that cannot happen (a "
                    "template in a scope without free threads? a missing nemesis thread?)"
                )
            now += poll_ns
            if until_ns is not None and now > until_ns:
                now = until_ns
            continue
        assert isinstance(r, Request)
        if r.time > now:
            if heap and heap[0][0] <= r.time:
                complete_next()  # an event comes first: discard r and g2, ask again
                continue
            if until_ns is not None and r.time >= until_ns:
                now = until_ns
                continue
            now = r.time
            ctx = ctx.with_time(now)
        check_request(ctx, r)
        idle_since = None
        thread = ctx.process_thread(r.process)
        assert thread is not None
        inv = Op(len(history), now, r.process, "invoke", r.f, r.value, r.key)
        history.append(inv)
        invoked += 1
        free.discard(thread)
        g = g2.update(Context(now, frozenset(free), tp, everyone), inv)
        heapq.heappush(heap, (now + latency_of(inv), seq, thread, inv))
        seq += 1

    while heap:
        complete_next()
    return history
