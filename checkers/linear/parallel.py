"""Checking partitions on several cores: for big histories split into many partitions.

Partitions are independent. This process prepares them (``prepare.problem``: pairing is
a third of the work, but it reads every operation, and a forked worker that read them
would copy nearly every page of the history, doubling the memory: its reference counts
are written on each read), then each of ``workers`` processes (this one and forked ones)
takes a share (the biggest first, each to the least loaded) and decides them as one
process would (``checkers.linear.solve``); forked workers send back one ``Outcome`` per
partition. They inherit the problems and the model, nothing is copied up front, and only
the results travel back. The first invalid partition ends the
check: the other workers are stopped and their partitions are "skipped", as in one
process (this process finishes its own share first).

It pays only when the work dwarfs forking and gathering (``MIN_OPS``), and it is used
only where forking is safe: a platform with ``fork``, and a process with no other thread
(a thread holding a lock at the fork would leave that lock held forever in the child).
Budgets hold per worker: the deadline is the same instant for all, the memory budget is
shared out. A worker that dies leaves its partitions "unknown", with its exit code.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Final

from checkers.linear.model import Model
from checkers.linear.prepare import Problem
from checkers.linear.schedule import SKIPPED, Budget
from checkers.linear.search import SearchResult
from checkers.linear.solve import Outcome, Solved

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

MIN_OPS: Final = 50_000
"""Histories with fewer ops are checked in one process: forking and gathering would cost
more than a second core gives."""
MAX_WORKERS: Final = 8
GRACE_S: Final = 5.0
"""How long past the deadline the workers may take to report their "unknown"."""


def workers_for(n_ops: int, n_parts: int) -> int:
    """How many processes should check a history of ``n_ops`` ops in ``n_parts``
    partitions: 1 (this one) unless more pays and forking is safe here."""
    if n_parts < 2 or n_ops < MIN_OPS:
        return 1
    import multiprocessing  # here: a check that stays in this process does not load it
    import threading

    if "fork" not in multiprocessing.get_all_start_methods():
        return 1
    if threading.active_count() > 1:
        return 1
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cpus or 1, n_parts, MAX_WORKERS))


def shares(sizes: list[int], workers: int) -> list[list[int]]:
    """Partition indexes per worker: biggest first, each to the least loaded worker
    (longest processing time first); each share in index order."""
    loads = [0] * workers
    out: list[list[int]] = [[] for _ in range(workers)]
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        w = loads.index(min(loads))
        out[w].append(i)
        loads[w] += sizes[i]
    return [sorted(s) for s in out if s]


# The job the workers inherit at the fork (set just before, cleared right after).
_JOB: tuple[list[Problem], Model, Budget, bool] | None = None


def check_problems(
    problems: list[Problem],
    model: Model,
    budget: Budget,
    explain: bool,
    workers: int,
) -> list[Outcome]:
    """Every partition's outcome, in the order of ``problems``. Raises what a worker
    raised, as checking in this process would."""
    global _JOB
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    work = shares([len(p.calls) for p in problems], workers)
    per_worker = Budget(
        budget.deadline,
        None if budget.max_configs is None else budget.max_configs // len(work),
        None if budget.max_memory is None else budget.max_memory // len(work),
        budget.meter,
    )
    procs: dict[Connection, tuple[Any, list[int]]] = {}
    outcomes: list[Outcome | None] = [None] * len(problems)
    own, *others = work
    _JOB = (problems, model, per_worker, explain)
    try:
        for share in others:
            reader, writer = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_work, args=(share, writer), daemon=True)
            proc.start()
            writer.close()
            procs[reader] = (proc, share)
        _JOB = None
        # This process takes a share too: one process fewer to copy pages of the history.
        mine = _solve(own, problems, model, per_worker, explain)
        for i, outcome in zip(own, mine, strict=True):
            outcomes[i] = outcome
        if all(o.result.valid is not False for o in mine):
            _gather(procs, outcomes, budget)
    finally:
        _JOB = None
        for proc, _ in procs.values():
            if proc.is_alive():
                proc.kill()
            proc.join()
    return [o if o is not None else _skipped() for o in outcomes]


def _gather(
    procs: dict[Connection, tuple[Any, list[int]]],
    outcomes: list[Outcome | None],
    budget: Budget,
) -> None:
    """Read the workers' reports until all are in or one found an invalid partition."""
    from multiprocessing.connection import wait

    pending = dict(procs)
    while pending:
        timeout = None
        if budget.deadline is not None:
            timeout = max(0.0, budget.deadline + GRACE_S - time.perf_counter())
        ready = wait(list(pending), timeout)
        if not ready:  # past the deadline and its grace: stop waiting
            for _proc, share in pending.values():
                for i in share:
                    outcomes[i] = _unknown("time limit reached before a verdict")
            return
        for conn in [c for c in pending if c in ready]:
            proc, share = pending.pop(conn)
            try:
                kind, payload = conn.recv()  # ("done", outcomes) or ("raise", error)
            except (EOFError, OSError):
                proc.join()
                reason = f"the worker checking it died (exit code {proc.exitcode})"
                for i in share:
                    outcomes[i] = _unknown(reason)
                continue
            if kind == "raise":
                raise payload
            for i, outcome in zip(share, payload, strict=True):
                outcomes[i] = outcome
            if any(o.result.valid is False for o in payload):
                return


def _work(share: list[int], conn: Connection) -> None:
    """A worker: check the partitions of ``share`` and send their outcomes, or the error
    that stopped it, which the parent raises as one process would. Ctrl-C is the
    parent's to handle: it stops the workers."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    assert _JOB is not None
    try:
        out = _solve(share, *_JOB)
    except Exception as e:
        conn.send(("raise", e))
    else:
        conn.send(("done", out))
    conn.close()


def _solve(
    share: list[int], problems: list[Problem], model: Model, budget: Budget, explain: bool
) -> list[Outcome]:
    """The outcomes of the partitions of ``share``, counterexamples built."""
    solved = Solved([problems[i] for i in share], model, budget)
    return [
        o._replace(counterexample=solved.explain(i)) if explain and o.result.valid is False else o
        for i, o in enumerate(solved.outcomes)
    ]


def _unknown(reason: str) -> Outcome:
    return Outcome(SearchResult("unknown", reason=reason), 0, False)


def _skipped() -> Outcome:
    return _unknown(SKIPPED)
