"""Pure, seeded, composable operation generators (Jepsen's ``jepsen.generator`` design).

A generator is an immutable value with ``op(ctx) -> (request | PENDING | None, successor)``
and ``update(ctx, event) -> generator``; the runner contract is in ``core.gen.context``.
Plain values lift: a dict is an op template repeated forever, a function ``rng -> dict``
makes a fresh op each time, a list runs its elements in order, None is exhausted.

Modules, by theme: ``context`` (Context, Request, PENDING, the ``Generator`` protocol and
the runner contract), ``rng`` (the seeded splitmix64 randomness carried in the values),
``lift`` (plain values to generators, ``concat``, seeding), ``sequence`` (counting and
sequencing: limit, repeat, cycle, then, phases, synchronize), ``timing`` (time_limit,
stagger, delay, sleep, at), ``choice`` (mix, any_of, flip_flop), ``threads`` (each_thread,
on_threads, on_processes), ``filters`` (filter_f), ``faults`` (schedules for the nemesis
thread; not called ``nemesis`` so that it cannot shadow the ``nemesis()`` combinator) and
``simulate`` (the deterministic in-memory interpreter).
"""

from core.gen.choice import any_of, both, flip_flop, mix
from core.gen.context import (
    PENDING,
    Context,
    Generator,
    GeneratorError,
    Pending,
    Process,
    Request,
    Seedable,
    Thread,
    check_request,
    to_ns,
)
from core.gen.faults import nemesis_schedule
from core.gen.filters import filter_f
from core.gen.lift import EXHAUSTED, GenLike, as_gen, concat, seeded
from core.gen.sequence import cycle, limit, once, phases, repeat, synchronize, then
from core.gen.simulate import simulate
from core.gen.threads import clients, each_thread, nemesis, on_processes, on_threads
from core.gen.timing import at, delay, rate, sleep, stagger, time_limit

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
