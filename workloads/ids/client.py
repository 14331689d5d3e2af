"""The unique-ids workload's client: ``generate`` -> ok with a new id (an integer).

A target's id generator is an ``IdBackend`` (a counter by compare-and-set, etcd's revision,
ZooKeeper's sequential nodes, Redis INCR...), driven by ``IdClient``; an id whose answer was
lost (``OpUnknown``) completes ``info``: the service may have handed it out, the client
never saw it. Snowflake ids are made in the client (``workloads.ids.snowflake``) from its
clock, which the client-clock fault moves (``workloads.wall_clock``); their worker ids
are fixed or taken from the target's own generator.

The factories and builders of a target's id generators (the variants of its offer of the
workload, ``clusters.spec.Offer``) are in ``workloads.ids.factories``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from checkers.refusals import CAS_MISMATCH, refusal_of
from core.client import Completion, Invocation, WorkerContext
from core.option_checks import Bound, OptionError
from core.option_records import option
from core.options import RunOptions
from workloads.common.backoff import Backoff
from workloads.errors import OpFailed
from workloads.ids.snowflake import SNOWFLAKE_DEFENCES, SNOWFLAKE_WORKERS, Snowflake


@dataclass(frozen=True, slots=True)
class IdsOptions:
    """The unique-ids workload's options (``opts.record(IdsOptions)``)."""

    generator: str | None = option(
        None, "how the unique-ids workload makes ids", flat="id_generator", variant=True
    )
    """The id generator (a target's variant of the workload); None: the target's first."""
    snowflake_defence: str = option(
        "none",
        "snowflake: when the clock is behind the last id's time, none (issue anyway), "
        "refuse (fail the op) or wait (until it caught up) (default: %(default)s)",
        choices=SNOWFLAKE_DEFENCES,
        named="defence",
    )
    snowflake_workers: str = option(
        "fixed",
        "snowflake: worker ids fixed (the client's thread) or taken from the "
        "service's own counter (default: %(default)s)",
        choices=SNOWFLAKE_WORKERS,
        named="workers",
    )
    segment_size: int = option(
        1000,
        "segment: ids a client takes at a time",
        bound=Bound("--segment-size", 1, 10**9, integer=True, unit="ids"),
    )
    segment_prefetch: float = option(
        0.1,
        "segment: fraction of a range used when the next is taken",
        bound=Bound("--segment-prefetch", 0, 1, unit="fraction of a segment"),
    )
    """Leaf-segment: the fraction of a range used when the next is taken."""


GENERATE = "generate"
CAS_TRIES = 100
"""Compare-and-set tries of a counter's increment before its op fails (contention)."""


class IdBackend(Protocol):
    """A driver handing out ids: ``next_id`` raises ``OpFailed`` (certainly none handed
    out) or ``OpUnknown`` (maybe one was)."""

    def next_id(self) -> int: ...

    def close(self) -> None: ...


class IdClient:
    """One worker's id client (``core.client.Client``)."""

    def __init__(
        self, ctx: WorkerContext, connect: Callable[[], IdBackend], node: str | None = None
    ) -> None:
        self.ctx = ctx
        self.backend = connect()
        self.node = node
        self.backoff = Backoff(seed=ctx.process)

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f != GENERATE:
            return Completion("fail", error=f"unknown function {inv.f!r}; ids offer {GENERATE}")
        return self.backoff.run(
            lambda: Completion("ok", self.backend.next_id(), node=self.node), self.node
        )

    def close(self) -> None:
        self.backend.close()


class CasCounter:
    """A counter over a register's compare-and-set (``workloads.register.RegisterBackend``):
    read the value, CAS it to value + 1, again on a mismatch. The id is the new value."""

    def __init__(self, register: Any, key: str = "ids") -> None:
        self.register = register
        self.key = key

    def next_id(self) -> int:
        for _ in range(CAS_TRIES):
            old = self.register.read(self.key)
            new = (old or 0) + 1
            try:
                self.register.cas(self.key, old, new)
            except OpFailed as e:
                if refusal_of(str(e)) == CAS_MISMATCH:
                    continue
                raise
            return int(new)
        raise OpFailed(f"counter {self.key}: {CAS_TRIES} compare-and-sets lost to other clients")

    def close(self) -> None:
        self.register.close()


class SnowflakeIds:
    """Snowflake ids (an ``IdBackend``): the worker id is taken on the first id (from
    ``worker_of``), so a service that cannot be reached fails that op, not the client."""

    def __init__(
        self, worker_of: Callable[[], int], defence: str, clock: Callable[[], int]
    ) -> None:
        self.worker_of = worker_of
        self.defence = defence
        self.clock = clock
        self.maker: Snowflake | None = None

    def next_id(self) -> int:
        if self.maker is None:
            self.maker = Snowflake(self.worker_of(), self.defence, self.clock)
        return self.maker.next_id()

    def close(self) -> None:
        pass


def check_id_options(opts: RunOptions) -> None:
    """OptionError (one line) for a snowflake setting that does not exist (the id
    generator is a target's variant of the workload: ``clusters.spec.Offer``)."""
    for flag, value, choices in (
        ("--snowflake-defence", opts.record(IdsOptions).snowflake_defence, SNOWFLAKE_DEFENCES),
        ("--snowflake-workers", opts.record(IdsOptions).snowflake_workers, SNOWFLAKE_WORKERS),
    ):
        if value not in choices:
            raise OptionError(f"unknown {flag} {value!r}: choose from {', '.join(choices)}")
