"""Clock faults through libfaketime: bump a node's clock forward or back, strobe it, reset.

The server of a node started with ``faketime`` reads its wall clock through libfaketime,
whose offset comes from a file in the node (``FAKETIME_FILE``, re-read on every call).
Writing ``+20`` there moves that server's clock 20 s forward at once. That works for Redis
(built without jemalloc) and ZooKeeper (a JVM); etcd and Consul are Go programs that read
the clock without libc, and their targets refuse ``clock`` before a run starts.

Every change is proven: the node's faked time is read back (``date`` under the same
libfaketime settings) and compared with the control machine's clock; the measured offsets
are the op's value, so each node's offset over time is in the history.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

from clusters.docker_cluster import FAKETIME_FILE, FAKETIME_LIB
from core.client import Completion, Invocation
from core.cluster import Cluster
from nemesis.base import RunView
from nemesis.nodes import NodeControl, aim

START, STOP = "start-clock", "stop-clock"
STROBE_MARK = "harness-clock-strobe"
TOLERANCE_S = 1.5


@dataclass(frozen=True, slots=True)
class Jump:
    """What a ``start-clock`` op asks, read: the nodes it aims at, the jump in seconds and,
    for a strobe, its period and duration in seconds (None: one bump)."""

    nodes: list[str]
    delta: float
    strobe: tuple[float, float] | None


def read_jump(
    value: Any,
    target: str,
    delta: float | None,
    cluster: Cluster,
    rng: random.Random,
    view: RunView | None,
) -> Jump | Completion:
    """The jump a ``start-clock`` op's value asks for, over the nemesis's own ``target`` and
    ``delta`` (random +/-5..60 s when neither gives one), or the failed completion when its
    target aims at no node. Shared by the clock's two nemeses (``nemesis.host_skew``)."""
    v: dict[str, Any] = dict(value or {})
    target = v.get("target", target)
    try:
        nodes = aim(target, cluster, rng, view)
    except ValueError as e:
        return Completion("fail", value={"target": target}, error=str(e))
    asked = v.get("delta", delta)
    jump = rng.choice([-1, 1]) * rng.uniform(5, 60) if asked is None else float(asked)
    if v.get("mode") != "strobe":
        return Jump(nodes, jump, None)
    return Jump(nodes, jump, (float(v.get("period", 1.0)), float(v.get("duration", 10.0))))


def strobe_answer(
    delta: float,
    period: float,
    duration: float,
    more: dict[str, Any],
    nodes: list[str],
    running: dict[str, bool],
) -> Completion:
    """A strobe's completion: what it asked (and ``more`` of it), the nodes and, as its
    proof, whether each node's strobe loop runs; fail when one does not."""
    value = {
        "mode": "strobe",
        "delta": delta,
        "period": period,
        "duration": duration,
        **more,
        "nodes": nodes,
        "proof": running,
    }
    if not all(running.values()):
        return Completion("fail", value=value, error="the strobe loop did not start")
    return Completion("ok", value=value)


class ClockJumps:
    """What both clock nemeses share (this one and ``nemesis.host_skew``'s): their two
    ops, the run's view, and reading a ``start-clock`` into a ``Jump`` that ``_jump``
    applies; ``stop-clock`` is ``_reset``."""

    target: str
    delta: float | None
    cluster: Cluster
    _rng: random.Random
    _view: RunView | None

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, view: RunView) -> None:
        self._view = view

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f == STOP:
            return self._reset()
        jump = read_jump(inv.value, self.target, self.delta, self.cluster, self._rng, self._view)
        if isinstance(jump, Completion):
            return jump
        return self._jump(jump)

    def _jump(self, jump: Jump) -> Completion:
        raise NotImplementedError

    def _reset(self) -> Completion:
        raise NotImplementedError


class ClockSkew(ClockJumps):
    """Bumps and strobes the clocks of chosen nodes; ``stop-clock`` resets them all."""

    def __init__(
        self, cluster: Cluster, target: str = "one", seed: int = 0, delta: float | None = None
    ) -> None:
        if not isinstance(cluster, NodeControl) or not getattr(cluster, "faketime", False):
            raise TypeError(
                f"{cluster.name} servers do not run under libfaketime: no clock faults there"
            )
        self.cluster = cluster
        self.control: NodeControl = cluster
        self.target = target
        self.delta = delta
        self._rng = random.Random(seed)
        self._view: RunView | None = None
        self._touched: set[str] = set()

    def _jump(self, jump: Jump) -> Completion:
        if jump.strobe is not None:
            return self._strobe(jump.nodes, round(jump.delta), *jump.strobe)
        return self._bump(jump.nodes, round(jump.delta))

    def _write(self, node: str, offset: int) -> None:
        self.control.exec(node, ["sh", "-c", f"echo {offset:+d} > {FAKETIME_FILE}"])
        self._touched.add(node)

    def _bump(self, nodes: list[str], delta: int) -> Completion:
        for n in nodes:
            self._write(n, delta)
        measured = {n: self.offset(n) for n in nodes}
        value = {"mode": "bump", "delta": delta, "offsets": measured}
        bad = [n for n, m in measured.items() if m is None or abs(m - delta) > TOLERANCE_S]
        if bad:
            return Completion("fail", value=value, error=f"clock did not move on {bad}")
        return Completion("ok", value=value)

    def _strobe(self, nodes: list[str], delta: int, period: float, duration: float) -> Completion:
        loop = (
            f"end=$(( $(date +%s) + {int(duration)} )); "
            f"while [ $(date +%s) -lt $end ]; do echo {delta:+d} > {FAKETIME_FILE}; "
            f"sleep {period}; echo +0 > {FAKETIME_FILE}; sleep {period}; done; "
            f"echo +0 > {FAKETIME_FILE}"
        )
        for n in nodes:
            self.control.exec(
                n, ["sh", "-c", f"setsid nohup sh -c '{loop}' {STROBE_MARK} >/dev/null 2>&1 &"]
            )
            self._touched.add(n)
        running = {n: self.control.exec(n, ["pgrep", "-f", STROBE_MARK])[0] == 0 for n in nodes}
        return strobe_answer(delta, period, duration, {}, nodes, running)

    def _reset(self) -> Completion:
        nodes = sorted(self._touched)
        for n in nodes:
            self.control.exec(n, ["pkill", "-f", STROBE_MARK])
            self._write(n, 0)
        measured = {n: self.offset(n) for n in nodes}
        self._touched.clear()
        bad = [n for n, m in measured.items() if m is None or abs(m) > TOLERANCE_S]
        value = {"mode": "reset", "offsets": measured}
        if bad:
            return Completion("fail", value=value, error=f"clock not reset on {bad}")
        return Completion("ok", value=value)

    def offset(self, node: str) -> float | None:
        """The node's faked wall clock minus the control machine's, in seconds."""
        before = time.time()
        _, out = self.control.exec(
            node,
            [
                "env",
                f"LD_PRELOAD={FAKETIME_LIB}",
                f"FAKETIME_TIMESTAMP_FILE={FAKETIME_FILE}",
                "FAKETIME_NO_CACHE=1",
                "FAKETIME_DONT_FAKE_MONOTONIC=1",
                "date",
                "+%s.%N",
            ],
        )
        after = time.time()
        try:
            return round(float(out.strip().splitlines()[-1]) - (before + after) / 2, 3)
        except (ValueError, IndexError):
            return None

    def teardown(self) -> None:
        if self._touched:
            self._reset()
