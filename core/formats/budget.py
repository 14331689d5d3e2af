"""The time and memory a check may spend, reading and preparing included.

``harness check --time-limit S --memory-limit B`` makes one ``Budget`` per file; the
readers call ``check`` every few thousand lines and the checker gets what is left. Out of
either, ``OutOfBudget`` says so in a sentence, and the verdict is unknown: a check that
ran out proves nothing. Memory is the process's resident size (``/proc/self/statm``), and,
under an address-space cap (``prlimit --as``, ``ulimit -v``), its virtual size too, kept
below ``AS_SHARE`` of the cap so that running out ends in unknown rather than a crash.
"""

from __future__ import annotations

import math
import os
import resource
import time
from pathlib import Path
from typing import Final

__all__ = [
    "AS_SHARE",
    "Budget",
    "OutOfBudget",
    "default_memory_limit",
    "memory_in_use",
    "parse_seconds",
    "parse_size",
]

AS_SHARE: Final = 0.8
MEMORY_SHARE: Final = 0.5
"""The default memory limit: this share of the machine's available memory at start."""
_PAGE: Final = os.sysconf("SC_PAGE_SIZE")
_STATM: Final = Path("/proc/self/statm")


class OutOfBudget(Exception):
    """The time or memory allowed ran out; the message is the reason of the unknown."""


def memory_in_use() -> tuple[int, int]:
    """This process's (resident, virtual) size in bytes; (0, 0) where /proc cannot say."""
    try:
        fields = _STATM.read_bytes().split()
        return int(fields[1]) * _PAGE, int(fields[0]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0, 0


def default_memory_limit() -> int | None:
    """``MEMORY_SHARE`` of MemAvailable (None where /proc/meminfo cannot say)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
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
    either may be None (no limit). ``check`` raises OutOfBudget once either is passed."""

    __slots__ = ("as_cap", "deadline", "memory_limit", "started", "time_limit")

    def __init__(self, time_limit: float | None = None, memory_limit: int | None = None) -> None:
        self.started = time.perf_counter()
        self.time_limit = time_limit
        self.deadline = None if time_limit is None else self.started + time_limit
        self.memory_limit = memory_limit
        self.as_cap = _address_space_cap()

    def check(self, doing: str, ops: int) -> None:
        """Raise OutOfBudget if time or memory ran out while ``doing`` (after ``ops`` ops)."""
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise OutOfBudget(
                f"out of the time limit ({self.time_limit:g} s) while {doing}, after {ops} ops"
            )
        if self.memory_limit is None and self.as_cap is None:
            return
        rss, vsz = memory_in_use()
        if self.memory_limit is not None and rss > self.memory_limit:
            raise OutOfBudget(
                f"out of the memory limit ({_mib(self.memory_limit)}) while {doing}, "
                f"after {ops} ops; raise --memory-limit"
            )
        if self.as_cap is not None and vsz > self.as_cap:
            raise OutOfBudget(
                f"out of memory ({_mib(vsz)} of the address space cap of "
                f"{_mib(int(self.as_cap / AS_SHARE))}) while {doing}, after {ops} ops"
            )

    def check_size(self, path: Path, size: int) -> None:
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


def parse_seconds(text: str) -> float:
    """A time limit: a finite number of seconds above 0 (ValueError otherwise)."""
    try:
        x = float(text)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{text!r} is not a time limit: give seconds above 0")
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


def _mib(n: int) -> str:
    return f"{n / (1 << 20):,.0f} MiB"
