"""The time and memory a check may spend, reading and preparing included.

``harness check --time-limit S --memory-limit B`` makes one ``Budget`` per file; the
readers call ``check`` every few thousand lines, and the checker takes the same budget:
its searches ``poll`` it between steps, and structures that grow by large amounts (the
register search's memo, the general search's masks) are accounted before they are built,
``afford`` saying whether what is left holds them. Out of either, ``OutOfBudget`` says so
in a sentence, and the verdict is unknown: a check that ran out proves nothing. Memory is
the process's resident size (``/proc/self/statm``), and, under an address-space cap
(``prlimit --as``, ``ulimit -v``), its virtual size too, kept below ``AS_SHARE`` of the
cap so that running out ends in unknown rather than a crash (compiled code that cannot
allocate an integer aborts the process: it must never get there).
"""

from __future__ import annotations

import math
import os
import resource
import time
from typing import Final

from core.formats.errors import FilePath

__all__ = [
    "AS_SHARE",
    "Allowance",
    "Budget",
    "OutOfBudget",
    "default_memory_limit",
    "memory_in_use",
    "parse_seconds",
    "parse_size",
]

AS_SHARE: Final = 0.8
POLL_SECONDS: Final = 0.01
"""``poll`` reads the memory in use (a few microseconds) at most this often; the clock
at every call."""
MEMORY_SHARE: Final = 0.5
"""The default memory limit: this share of the machine's available memory at start."""
_PAGE: Final = os.sysconf("SC_PAGE_SIZE")
_STATM: Final = "/proc/self/statm"


class OutOfBudget(Exception):
    """The time or memory allowed ran out; the message is the reason of the unknown."""


def memory_in_use() -> tuple[int, int]:
    """This process's (resident, virtual) size in bytes; (0, 0) where /proc cannot say."""
    try:
        with open(_STATM, "rb", buffering=0) as f:  # unbuffered: asked for every file
            fields = f.read(256).split()
        return int(fields[1]) * _PAGE, int(fields[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0, 0


def _meminfo_text() -> str:
    """The kernel's memory figures (OSError where there are none)."""
    with open("/proc/meminfo") as f:
        return f.read()


def default_memory_limit() -> int | None:
    """``MEMORY_SHARE`` of MemAvailable (None where /proc/meminfo cannot say)."""
    try:
        for line in _meminfo_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(int(line.split()[1]) * 1024 * MEMORY_SHARE)
    except (OSError, ValueError, IndexError):
        pass
    return None


def _address_space_cap() -> int | None:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else int(soft * AS_SHARE)


class Budget:
    """A deadline (``time_limit`` seconds from now) and a memory limit (bytes resident);
    either may be None (no limit); the address-space cap, where there is one, always
    holds. ``check`` raises OutOfBudget once either is passed."""

    __slots__ = ("_polled", "as_cap", "deadline", "memory_limit", "started", "time_limit")

    def __init__(self, time_limit: float | None = None, memory_limit: int | None = None) -> None:
        self.started = self._polled = time.perf_counter()
        self.time_limit = time_limit
        self.deadline = None if time_limit is None else self.started + time_limit
        self.memory_limit = memory_limit
        self.as_cap = _address_space_cap()

    def check(self, doing: str, ops: int | None = None) -> None:
        """Raise OutOfBudget if time or memory ran out while ``doing`` (after ``ops`` ops,
        when given)."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise self._out_of_time(doing, ops)
        self._check_memory(doing, ops)

    def poll(self, doing: str, ops: int | None = None) -> None:
        """``check`` for loops that call it often: the clock every time, the memory at
        most every ``POLL_SECONDS``."""
        now = time.perf_counter()
        if self.deadline is not None and now > self.deadline:
            raise self._out_of_time(doing, ops)
        if now - self._polled >= POLL_SECONDS:
            self._polled = now
            self._check_memory(doing, ops)

    def afford(self, nbytes: int, doing: str) -> None:
        """Raise OutOfBudget unless ``nbytes`` more bytes fit in what is left: a structure
        about to grow by that much is accounted before it is built."""
        left = self.memory_left()
        if left is not None and nbytes > left:
            raise self.out_of_memory(doing, nbytes, left)

    def out_of_memory(self, doing: str, needed: int, left: int) -> OutOfBudget:
        """The reason of a structure of ``needed`` bytes that did not fit in the ``left``
        bytes ``memory_left`` gave."""
        rss, vsz = memory_in_use()
        need = f"it needs {_mib(needed)} more, {_mib(left)} are left"
        if self.as_cap is not None and (
            self.memory_limit is None or self.as_cap - vsz < self.memory_limit - rss
        ):
            return OutOfBudget(
                f"out of memory (the address space cap of {_mib(int(self.as_cap / AS_SHARE))}) "
                f"while {doing}: {need}"
            )
        return OutOfBudget(
            f"out of the memory limit ({_mib(self.memory_limit or 0)}) while {doing}: {need}; "
            "raise --memory-limit"
        )

    def _out_of_time(self, doing: str, ops: int | None) -> OutOfBudget:
        return OutOfBudget(
            f"out of the time limit ({self.time_limit:g} s) while {doing}{_after(ops)}"
        )

    def _check_memory(self, doing: str, ops: int | None) -> None:
        if self.memory_limit is None and self.as_cap is None:
            return
        rss, vsz = memory_in_use()
        if self.memory_limit is not None and rss > self.memory_limit:
            raise OutOfBudget(
                f"out of the memory limit ({_mib(self.memory_limit)}) while {doing}"
                f"{_after(ops)}; raise --memory-limit"
            )
        if self.as_cap is not None and vsz > self.as_cap:
            raise OutOfBudget(
                f"out of memory ({_mib(vsz)} of the address space cap of "
                f"{_mib(int(self.as_cap / AS_SHARE))}) while {doing}{_after(ops)}"
            )

    def check_size(self, path: FilePath, size: int) -> None:
        """Raise OutOfBudget if a file of ``size`` bytes cannot be read within the memory
        left (reading holds about three times its size at once)."""
        left = self.memory_left()
        if left is not None and 3 * size > left:
            raise OutOfBudget(
                f"{path} is {_mib(size)}: reading it needs more memory than is left "
                f"({_mib(left)}); raise --memory-limit"
            )

    def time_left(self) -> float | None:
        """Seconds to the deadline (at least 0), None without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.perf_counter())

    def memory_left(self) -> int | None:
        """Bytes that may still be taken, None without a limit."""
        if self.memory_limit is None and self.as_cap is None:
            return None
        rss, vsz = memory_in_use()
        lefts = []
        if self.memory_limit is not None:
            lefts.append(self.memory_limit - rss)
        if self.as_cap is not None:
            lefts.append(self.as_cap - vsz)
        return max(0, min(lefts))


class Allowance:
    """What one growing structure may take: the memory ``budget`` had left when it was
    made. ``spend`` accounts the bytes the structure grows by, before they are taken, and
    raises OutOfBudget past what was left; it polls the budget too (the clock, and the
    whole process's size, which other structures share)."""

    __slots__ = ("budget", "doing", "left", "used")

    def __init__(self, budget: Budget, doing: str) -> None:
        self.budget = budget
        self.doing = doing
        self.left = budget.memory_left()
        self.used = 0

    def spend(self, nbytes: int) -> None:
        """Account ``nbytes`` more (OutOfBudget past what was left, or past the budget)."""
        self.used += nbytes
        if self.left is not None and self.used > self.left:
            raise self.budget.out_of_memory(self.doing, self.used, self.left)
        self.budget.poll(self.doing)

    def free(self, nbytes: int) -> None:
        """Account ``nbytes`` given back."""
        self.used -= nbytes


def parse_seconds(text: str) -> float:
    """A time limit: a finite number of seconds, a millisecond or more (below it no
    clock the check reads can tell it from none); ValueError otherwise."""
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(x) or x < 0.001:
        raise ValueError(f"{text!r} is not a time limit: give seconds, at least 0.001")
    return x


_UNITS: Final = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """A memory limit: bytes, or a number with K, M, G or T (KiB... ; ``2G``, ``512MiB``)
    from 1 MiB up; ValueError otherwise."""
    t = text.strip().lower().removesuffix("ib").removesuffix("b")
    unit = t[-1:] if t[-1:] in _UNITS else ""
    try:
        x = float(t[: len(t) - len(unit)]) * _UNITS[unit]
    except ValueError:
        raise ValueError(f"{text!r} is not a size (say 2G or 512M)") from None
    if not math.isfinite(x) or not 1 << 20 <= x <= 1 << 50:
        raise ValueError(f"{text!r} is not a memory limit: give 1M to 1P (say 2G or 512M)")
    return int(x)


def _after(ops: int | None) -> str:
    return "" if ops is None else f", after {ops} ops"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB"
