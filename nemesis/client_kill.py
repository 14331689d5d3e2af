"""Client kills: SIGKILL of a client's worker process, a crashed service instance.

The victim is picked as a client pause picks it (``nemesis.client_pause``: ``holder``,
``all``, a process id), at a moment the holder works. The completion records the pids
killed and the proof (the process gone, or a zombie, in /proc). Nothing is healed at the
stop: the runner sees the dead worker at its next operation (``info``, "worker process
died") and starts a fresh one on its thread under a new process id, as a supervisor
restarts a crashed service.
"""

from __future__ import annotations

import signal
import time
from typing import Any

from core.client import Completion, Invocation
from core.procutil import process_state, signal_quietly
from nemesis.client_pause import ClientPause

START = "start-client-kill"
STOP = "stop-client-kill"


class ClientKill(ClientPause):
    """Kills client worker processes; the stop only records the end of the window."""

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def invoke(self, inv: Invocation) -> Completion:
        return self._pause(inv.value or {}) if inv.f == START else self._resume()

    def _pause(self, value: dict[str, Any]) -> Completion:
        victims = self._victims(value.get("target", "holder"))
        if not victims:
            return Completion("fail", error="no live client process to kill")
        for pid in victims.values():
            signal_quietly(pid, signal.SIGKILL)
        proof = {str(p): _wait_dead(pid) for p, pid in victims.items()}
        if not all(proof.values()):
            return Completion(
                "fail",
                value={"processes": sorted(victims), "dead": proof},
                error="a client process did not die",
            )
        return Completion(
            "ok",
            value={
                "processes": sorted(victims),
                "pids": sorted(victims.values()),
                "proof": "gone or zombie in /proc",
            },
        )

    def _resume(self) -> Completion:
        return Completion("ok", value={"processes": []})

    def teardown(self) -> None:
        """Nothing to heal: a killed worker is replaced by the runner."""


def _wait_dead(pid: int, timeout: float = 2.0) -> bool:
    """SIGKILL is asynchronous: poll /proc until the process is gone or a zombie."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process_state(pid) in (None, "Z", "X"):
            return True
        time.sleep(0.002)
    return process_state(pid) in (None, "Z", "X")
