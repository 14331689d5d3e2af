"""Client pauses: SIGSTOP / SIGCONT of a client's worker process, the "GC pause".

The whole worker process freezes, its lease keepalive thread included, exactly as a
stop-the-world pause freezes a lock holder. ``start-client-pause`` picks its victim by
``value["target"]``: ``holder`` (the most recent holder, else any client),
``random``, ``all``, or an explicit process id (a replay aims at the process its
recording hit; one whose worker is still starting, a replacement for a process abandoned
a moment before, is waited for, up to ``process_wait`` s). The completion records the pids
paused and the proof (their state read from /proc was ``T``).
"""

from __future__ import annotations

import os
import random
import signal
import time
from typing import Any

from core.client import Completion, Invocation
from core.procutil import is_stopped, signal_quietly
from nemesis.base import RunView

START = "start-client-pause"
STOP = "stop-client-pause"


class ClientPause:
    """Freezes and thaws client worker processes."""

    fs_start = START
    sig = signal.SIGSTOP
    no_victim = "no live client process to pause"
    proof_key, failed, proof = "stopped", "reach the stopped state", "state T in /proc"
    """How the start op's completion names its proof, its failure and its success."""

    def __init__(
        self,
        seed: int = 0,
        holder_wait: float = 5.0,
        settle: float = 0.05,
        process_wait: float = 5.0,
    ) -> None:
        self._rng = random.Random(seed)
        self.holder_wait = holder_wait
        self.process_wait = process_wait
        self.settle = settle
        self._view: RunView | None = None
        self._paused: dict[int, int] = {}  # process -> pid

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def setup(self, view: RunView) -> None:
        self._view = view

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f == self.fs_start:
            return self._pause(inv.value or {})
        return self._resume()

    def _victims(self, target: Any) -> dict[int, int]:
        assert self._view is not None, "setup() first"
        if isinstance(target, int):
            return self._named(target)
        pids = self._view.client_pids()
        if not pids:
            return {}
        if target == "all":
            return dict(pids)
        if target in (None, "holder"):
            victim = self._fresh_holder()
            if victim is not None:
                return victim
            pids = self._view.client_pids()
        p = self._rng.choice(sorted(pids))
        return {p: pids[p]}

    def _named(self, process: int) -> dict[int, int]:
        """Process ``process``, once its worker is up: the runner starts a replacement
        worker when it abandons one, and a fault aimed at that thread's process (a
        replay's) may come before it is ready; waited for up to ``process_wait`` s."""
        assert self._view is not None
        deadline = time.monotonic() + self.process_wait
        while True:
            pids = self._view.client_pids()
            if process in pids:
                return {process: pids[process]}
            if time.monotonic() >= deadline:
                return {}
            time.sleep(0.002)

    def _fresh_holder(self) -> dict[int, int] | None:
        """A holder frozen in the middle of its work (``Holder.work``: a critical
        section), the worst moment for a GC pause: wait (up to ``holder_wait``) for a
        holder to begin its next one and freeze it at once, so it wakes with its work done
        and writes before noticing its lease is gone. A holder whose workload gives it no
        such work (a registered instance, a writer) is taken at once, as is any current
        holder when none began its work in time."""
        assert self._view is not None
        holder = self._view.holder
        asked = self._view.clock.now()
        deadline = time.monotonic() + (self.holder_wait if holder and holder.work else 0.0)
        while time.monotonic() < deadline:
            pids = self._view.client_pids()
            for p in self._view.holders():
                since = self._view.working_since(p)
                if p in pids and since is not None and since >= asked:
                    # Into the work, not before it: a worker frozen before it starts the
                    # work would start it afresh on waking and notice the loss first.
                    lag = since + int(self.settle * 1e9) - self._view.clock.now()
                    if lag > 0:
                        time.sleep(lag / 1e9)
                    return {p: pids[p]}
            time.sleep(0.001)
        pids = self._view.client_pids()
        for p in self._view.holders():
            if p in pids:
                return {p: pids[p]}
        return None

    def _pause(self, value: dict[str, Any]) -> Completion:
        victims = self._victims(value.get("target", "holder"))
        if not victims:
            return Completion("fail", error=self.no_victim)
        for p, pid in victims.items():
            if signal_quietly(pid, self.sig):
                self._paused[p] = pid
        proof = {str(p): self._proven(pid) for p, pid in victims.items()}
        if not all(proof.values()):
            return Completion(
                "fail",
                value={"processes": sorted(victims), self.proof_key: proof},
                error=f"a client process did not {self.failed}",
            )
        return Completion(
            "ok",
            value={
                "processes": sorted(victims),
                "pids": sorted(victims.values()),
                "proof": self.proof,
            },
        )

    def _proven(self, pid: int) -> bool:
        """Whether the signal took effect on ``pid`` (polled: signals are asynchronous)."""
        return _wait_stopped(pid)

    def _resume(self) -> Completion:
        resumed = sorted(self._paused)
        self.teardown()
        return Completion("ok", value={"processes": resumed})

    def teardown(self) -> None:
        for pid in self._paused.values():
            signal_quietly(pid, signal.SIGCONT)
        self._paused.clear()


def _wait_stopped(pid: int, timeout: float = 2.0) -> bool:
    """SIGSTOP is asynchronous: poll /proc until the process shows state T."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_stopped(pid):
            return True
        if not os.path.exists(f"/proc/{pid}"):
            return False
        time.sleep(0.002)
    return is_stopped(pid)
