"""Reactive per-process cycles: the shape of the lock, election and lock-free workloads.

A lock client loops acquire -> write (the critical section) -> release; an election client
loops campaign -> write (as leader) -> resign. What comes next depends on how the last
operation ended (a denied acquire is retried, not followed by a write), so these are
generators that read completions through ``update`` (pure: the state is an immutable map
from process to its next step).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.gen import PENDING, Context, Generator, Request
from core.ops import Op

# step -> (next step when ok, next step otherwise)
Steps = Mapping[str, tuple[str, str]]

ELECTION_STEPS: Steps = MappingProxyType(
    {
        "campaign": ("write", "campaign"),
        "write": ("resign", "resign"),
        "resign": ("campaign", "campaign"),
    }
)


@dataclass(frozen=True)
class StepCycle:
    """Each free client process invokes its next step; ``value_of(process, step)`` gives
    the invocation's value (for example which lock a process works on)."""

    steps: Steps
    first: str
    value_of: Callable[[Any, str], Any]
    next_step: Mapping[Any, str] = field(default_factory=lambda: MappingProxyType({}))

    def op(self, ctx: Context) -> tuple[Request | Any | None, Generator]:
        for t in ctx.free_targets:
            p = ctx.thread_process[t]
            step = self.next_step.get(p, self.first)
            return Request(p, step, self.value_of(p, step), None, ctx.time), self
        return PENDING, self

    def update(self, ctx: Context, event: Op) -> Generator:
        if event.type == "invoke" or event.f not in self.steps:
            return self
        ok_next, other_next = self.steps[event.f]
        nxt = dict(self.next_step)
        if event.type == "info":
            nxt.pop(event.process, None)  # the process is retired; its successor starts over
        else:
            nxt[event.process] = ok_next if event.type == "ok" else other_next
        return StepCycle(self.steps, self.first, self.value_of, MappingProxyType(nxt))


@dataclass(frozen=True)
class NamedResource:
    """Which lock (or election) a process works on: ``prefix-<process mod n>``.
    A picklable, comparable callable for ``StepCycle.value_of``."""

    prefix: str
    count: int

    def __call__(self, process: Any, step: str) -> Any:
        n = int(process) % self.count if isinstance(process, int) else 0
        return {"name": f"{self.prefix}-{n}"}


def election_cycle(elections: int = 1) -> StepCycle:
    return StepCycle(ELECTION_STEPS, "campaign", NamedResource("election", max(1, elections)))


GUARDED_STEPS: Steps = MappingProxyType({"begin": ("write", "begin"), "write": ("begin", "begin")})
"""The lock-free workloads' loop (``workloads.guarded``): begin -> write -> begin."""


def guarded_cycle(prefix: str, names: int = 1) -> StepCycle:
    return StepCycle(GUARDED_STEPS, "begin", NamedResource(prefix, max(1, names)))
