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

from core.client import Completion
from core.procutil import process_state
from nemesis.client_pause import ClientPause

START = "start-client-kill"
STOP = "stop-client-kill"


class ClientKill(ClientPause):
    """Kills client worker processes; the stop only records the end of the window."""

    fs_start = START
    sig = signal.SIGKILL
    no_victim = "no live client process to kill"
    proof_key, failed, proof = "dead", "die", "gone or zombie in /proc"

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP})

    def _proven(self, pid: int) -> bool:
        """SIGKILL is asynchronous: poll /proc until the process is gone or a zombie."""
        deadline = time.monotonic() + 2.0
        while process_state(pid) not in (None, "Z", "X"):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return True

    def _resume(self) -> Completion:
        self._paused.clear()
        return Completion("ok", value={"processes": []})

    def teardown(self) -> None:
        """Nothing to heal: a killed worker is replaced by the runner."""
