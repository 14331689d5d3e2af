"""Snowflake ids, made in the client: time, worker id and a sequence per millisecond.

An id is 63 bits: milliseconds since 2020-01-01 (41 bits), the worker id (10 bits) and a
sequence that counts the ids of one millisecond (12 bits; the 4097th waits for the next
millisecond). Two workers never share a worker id, so ids are unique as long as each
worker's clock never goes back over milliseconds it already used. When it does (an NTP
step, a VM migrated), what happens is the defence's (``--snowflake-defence``):

- ``none``: the id is made from the clock as it is; a millisecond used before comes again
  with sequence 0, and the ids it had are issued a second time (duplicates);
- ``refuse``: the op fails (Twitter's original: an exception) until the clock has caught up;
- ``wait``: the op waits until the clock is past the last id's time.

Worker ids (``--snowflake-workers``): ``fixed`` (the client's thread: a replacement process
of a thread gets its predecessor's id, not its memory of the last id's time) or ``service``
(one id taken from the target's own counter when the client starts, modulo 1024).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

from workloads.errors import OpFailed

SNOWFLAKE_DEFENCES: Final = ("none", "refuse", "wait")
SNOWFLAKE_WORKERS: Final = ("fixed", "service")
EPOCH_MS: Final = 1_577_836_800_000
"""2020-01-01T00:00:00Z in ms: ids count from there."""
WORKER_BITS: Final = 10
SEQUENCE_BITS: Final = 12
MAX_WORKERS: Final = 1 << WORKER_BITS
SEQUENCE_MASK: Final = (1 << SEQUENCE_BITS) - 1
WAIT_STEP_S: Final = 0.05


def parts(snowflake: int) -> tuple[int, int, int]:
    """An id's (Unix ms, worker, sequence)."""
    seq = snowflake & SEQUENCE_MASK
    worker = (snowflake >> SEQUENCE_BITS) & (MAX_WORKERS - 1)
    return (snowflake >> (SEQUENCE_BITS + WORKER_BITS)) + EPOCH_MS, worker, seq


class Snowflake:
    """One worker's id maker; ``clock`` gives the wall clock in ns (``WallClock``)."""

    def __init__(
        self,
        worker: int,
        defence: str = "none",
        clock: Callable[[], int] = time.time_ns,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if defence not in SNOWFLAKE_DEFENCES:
            raise ValueError(f"unknown snowflake defence {defence!r}")
        self.worker = worker % MAX_WORKERS
        self.defence = defence
        self.clock = clock
        self.sleep = sleep
        self.last_ms = -1
        self.sequence = 0

    def _ms(self) -> int:
        return self.clock() // 1_000_000

    def next_id(self) -> int:
        """The next id; OpFailed when the clock is behind and the defence refuses."""
        now = self._ms()
        if now < self.last_ms and self.defence == "refuse":
            raise OpFailed(
                f"snowflake worker {self.worker}: the clock is {self.last_ms - now} ms behind "
                "the last id's time; refused (defence refuse)"
            )
        while now < self.last_ms and self.defence == "wait":
            self.sleep(min(WAIT_STEP_S, (self.last_ms - now) / 1000))
            now = self._ms()
        if now == self.last_ms:
            self.sequence = (self.sequence + 1) & SEQUENCE_MASK
            while self.sequence == 0 and now == self.last_ms:  # this ms is full
                now = self._ms()
        else:
            self.sequence = 0
        self.last_ms = now
        return (
            ((now - EPOCH_MS) << (WORKER_BITS + SEQUENCE_BITS))
            | (self.worker << SEQUENCE_BITS)
            | self.sequence
        )
