"""The registry workload's schedule: instances register, then heartbeat; discovery clients
list, each at its own pace.

An instance (one of the first ``instances`` threads) registers first and again whenever
a registration failed or its heartbeat says the keeper lost it; otherwise it heartbeats
every ``heartbeat`` s. A discovery client lists every ``listing`` s. A fresh process
(after an ``info``: a timed-out op, a killed worker) starts over: an instance registers
as a new member. Pure: the state is an immutable map from process to its next step and
the time it is due.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from core.gen import PENDING, Context, Request, to_ns
from core.ops import Op

HEARTBEAT_S = 0.5
"""Seconds between an instance's heartbeats (its observed liveness)."""
LISTING_S = 0.2
"""Seconds between a discovery client's listings (the resolution of detection times)."""


@dataclass(frozen=True)
class Discovery:
    """See the module docstring."""

    instances: int
    heartbeat: float = HEARTBEAT_S
    listing: float = LISTING_S
    due: Mapping[Any, tuple[str, int]] = field(default_factory=lambda: MappingProxyType({}))

    def _first(self, thread: Any) -> tuple[str, int]:
        return ("register", 0) if int(thread) < self.instances else ("list", 0)

    def op(self, ctx: Context) -> tuple[Request | Any | None, Any]:
        best: tuple[int, Any, str] | None = None
        for t in ctx.free_targets:
            p = ctx.thread_process[t]
            f, at = self.due.get(p) or self._first(t)
            if best is None or at < best[0]:
                best = (at, p, f)
        if best is None:
            return PENDING, self
        at, p, f = best
        return Request(p, f, None, None, max(at, ctx.time)), self

    def update(self, ctx: Context, event: Op) -> Discovery:
        if event.type == "invoke":
            return self
        if event.type == "info":
            return self._forget(event.process)
        nxt = dict(self.due)
        nxt[event.process] = self._next(event, ctx.time)
        return Discovery(self.instances, self.heartbeat, self.listing, MappingProxyType(nxt))

    def _next(self, event: Op, now: int) -> tuple[str, int]:
        if event.f == "list":
            return "list", now + to_ns(self.listing)
        later = now + to_ns(self.heartbeat)
        if event.type != "ok":
            return "register", later
        registered = isinstance(event.value, dict) and event.value.get("registered") is True
        if event.f == "heartbeat" and not registered:
            return "register", now
        return "heartbeat", later

    def _forget(self, process: Any) -> Discovery:
        nxt = dict(self.due)
        nxt.pop(process, None)  # retired: its successor starts over
        return Discovery(self.instances, self.heartbeat, self.listing, MappingProxyType(nxt))
