"""The load a run put on its target, and what the harness spent to put it there.

A run tests less than it claims when it drove fewer operations than asked: rare bugs need
load (etcd's robustness tests refuse a verdict below 200 ops/s). The runner measures its
own cost here: the CPU time of the harness process (the runner loop, the progress and
nemesis threads) and of its worker processes (each read from ``/proc`` before it stops),
over the workload's time only (the workers' start-up is not an operation's cost). With
the clients in threads (``harness.client_threads``) their CPU is the harness process's,
counted as the runner's, and the workers' is 0.
``Load`` is what test.json records (``load``) and results.json repeats; the rate floor
itself (``--min-rate``) is judged from the history by ``checkers.load``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

FAR_BELOW = 0.5
"""An achieved rate under this share of the asked one is far below it: warned."""


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds (user and system) a process has used, from ``/proc/PID/stat``; None
    when it is gone or cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()  # after the command, which may hold spaces
    try:
        return (int(fields[11]) + int(fields[12])) / _TICK  # utime, stime
    except (IndexError, ValueError):
        return None


class CpuMeter:
    """The CPU the harness spends from ``start`` on: its own process and every worker,
    each worker counted from ``start`` (or from its birth, for one started later) to its
    last reading (``worker_stopping``, before it is stopped)."""

    def __init__(self) -> None:
        self._self0: float | None = None
        self._base: dict[int, float] = {}  # pid -> its CPU when the meter started
        self._last: dict[int, float] = {}  # pid -> its latest reading
        self._self = 0.0

    def start(self, pids: list[int]) -> None:
        self._self0 = time.process_time()
        for pid in pids:
            self._base[pid] = self._last[pid] = process_cpu_s(pid) or 0.0

    def worker_stopping(self, pid: int | None) -> None:
        """Read a worker's CPU before it goes (a no-op before ``start``)."""
        if self._self0 is None or pid is None:
            return
        used = process_cpu_s(pid)
        if used is not None:
            self._last[pid] = used

    def stop(self, pids: list[int]) -> None:
        """The end of the measured time: the harness's and the running workers' CPU."""
        if self._self0 is None:
            return
        self._self = time.process_time() - self._self0
        for pid in pids:
            self.worker_stopping(pid)

    @property
    def runner_s(self) -> float:
        return self._self

    @property
    def workers_s(self) -> float:
        return sum(used - self._base.get(pid, 0.0) for pid, used in self._last.items())


@dataclass(frozen=True)
class Load:
    """How many client operations completed in how long, the rate asked (None: as fast
    as the clients go) and the harness's CPU for them."""

    ops: int
    seconds: float
    asked_rate: float | None
    runner_cpu_s: float
    workers_cpu_s: float

    @property
    def rate(self) -> float:
        return self.ops / self.seconds if self.seconds > 0 else 0.0

    def cpu_us_per_op(self) -> float | None:
        if self.ops == 0:
            return None
        return (self.runner_cpu_s + self.workers_cpu_s) / self.ops * 1e6

    def to_dict(self) -> dict[str, Any]:
        """test.json's ``load``."""
        per_op = self.cpu_us_per_op()
        return {
            "client_ops": self.ops,
            "seconds": round(self.seconds, 3),
            "ops_per_s": round(self.rate, 1),
            "asked_rate": self.asked_rate,
            "harness_cpu_s": {
                "runner": round(self.runner_cpu_s, 3),
                "workers": round(self.workers_cpu_s, 3),
            },
            "harness_cpu_us_per_op": None if per_op is None else round(per_op, 1),
        }

    def warning(self) -> str | None:
        """One sentence when the achieved rate is far below the asked one (``FAR_BELOW``);
        None otherwise."""
        if self.asked_rate is None or self.rate >= FAR_BELOW * self.asked_rate:
            return None
        return (
            f"the run achieved {self.rate:.0f} ops/s of the {self.asked_rate:.12g} asked "
            f"({100 * self.rate / self.asked_rate:.0f}%): it tested less load than it "
            "claims; give a lower --rate, more --concurrency, or a faster machine"
        )

    def line(self) -> str:
        """The run's load in words, for the end of its output."""
        per_op = self.cpu_us_per_op()
        cpu = "" if per_op is None else f", harness CPU {per_op:.0f} us per op"
        asked = f" (asked {self.asked_rate:.12g})" if self.asked_rate is not None else ""
        done = f"{self.ops} client ops in {self.seconds:.1f} s"
        return f"load: {done}, {self.rate:.0f} ops/s{asked}{cpu}"
