"""Pure, seeded, composable operation generators (Jepsen's ``jepsen.generator`` design).

A generator is an immutable value with ``op(ctx) -> (request | PENDING | None, successor)``
and ``update(ctx, event) -> generator``; the runner contract is in ``core.gen.core``.
Plain values lift: a dict is an op template repeated forever, a function ``rng -> dict``
makes a fresh op each time, a list runs its elements in order, None is exhausted.

Modules: ``core`` (Context, Request, PENDING, the protocol, lifting, seeding),
``combinators`` (composition), ``faults`` (schedules for the nemesis thread; not called
``nemesis`` so that it cannot shadow the ``nemesis()`` combinator) and ``simulate`` (the
deterministic in-memory interpreter).
"""

from core.gen.combinators import (
    any_of,
    at,
    both,
    clients,
    concat,
    cycle,
    delay,
    each_thread,
    filter_f,
    flip_flop,
    limit,
    mix,
    nemesis,
    on_processes,
    on_threads,
    once,
    phases,
    rate,
    repeat,
    sleep,
    stagger,
    synchronize,
    then,
    time_limit,
)
from core.gen.core import (
    EXHAUSTED,
    PENDING,
    Context,
    Generator,
    GeneratorError,
    GenLike,
    Pending,
    Process,
    Request,
    Seedable,
    Thread,
    as_gen,
    check_request,
    seeded,
    to_ns,
)
from core.gen.faults import nemesis_schedule
from core.gen.simulate import simulate

__all__ = [
    # model
    "Context",
    "Generator",
    "GeneratorError",
    "GenLike",
    "Pending",
    "PENDING",
    "EXHAUSTED",
    "Process",
    "Request",
    "Seedable",
    "Thread",
    "as_gen",
    "check_request",
    "seeded",
    "to_ns",
    # combinators
    "any_of",
    "at",
    "both",
    "clients",
    "concat",
    "cycle",
    "delay",
    "each_thread",
    "filter_f",
    "flip_flop",
    "limit",
    "mix",
    "nemesis",
    "on_processes",
    "on_threads",
    "once",
    "phases",
    "rate",
    "repeat",
    "sleep",
    "stagger",
    "synchronize",
    "then",
    "time_limit",
    # faults
    "nemesis_schedule",
    # interpreter
    "simulate",
]
