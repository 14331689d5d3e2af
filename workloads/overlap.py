"""When a holding workload's settings cannot produce the overlap it looks for.

The lock, herd and election workloads look for two holders at once: a holder whose lease
ran out while it still believed it held, and another granted meanwhile. Some settings
rule that out before the run starts, and a valid verdict would then say nothing about the
service. ``cannot_overlap`` names them, each with the settings that would:

- a crash of the whole service (a one-node cluster, or every node) at least as long as the
  lease TTL: nobody can be granted while the service is down, and by the time it is back
  the holder's lease has run out (a holder that checks its lease, or whose work ends
  within the crash, then writes nothing late);
- a freeze of the holder (a client pause) shorter than the lease TTL less one keepalive:
  the holder wakes with its lease alive.

The application hands in the faults of the run as ``FaultLength`` values (it knows the
faults' registry and the cluster); the rule speaks of their effects
(``checkers.windows``), never of a fault's or a target's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from checkers.windows import CRASHES, FREEZES_CLIENT
from core.options import RunOptions
from workloads.common.lock_options import LockOptions


@dataclass(frozen=True, slots=True)
class FaultLength:
    """One fault of a run as the rule sees it: what it does and for how long."""

    name: str
    effects: frozenset[str]
    seconds: float
    """How long the run asks it to last (test.json's ``asked_s``)."""
    whole_service: bool
    """Whether it hits every node of the service (a one-node cluster, or aimed at all)."""


def cannot_overlap(opts: RunOptions, faults: Sequence[FaultLength]) -> list[str]:
    """One sentence for each fault whose settings cannot produce an overlap, saying which
    settings would; empty when every fault can."""
    lock = opts.record(LockOptions)
    ttl, keepalive = lock.lease_ttl, lock.keepalive
    found = []
    for f in faults:
        late_write = not lock.holder_check and lock.work_time > f.seconds
        if CRASHES in f.effects and f.whole_service and f.seconds >= ttl and not late_write:
            found.append(
                f"the {f.name} lasts {f.seconds:g} s, not shorter than the lease TTL "
                f"{ttl:g} s: the holder's lease runs out while the service is down, so no "
                "other client is granted while it still holds and two holders cannot "
                "overlap; a "
                f"{f.name} shorter than the TTL would (--nemesis-interval below {ttl:g}, "
                f"or --lease-ttl above {f.seconds:g})"
            )
        if FREEZES_CLIENT in f.effects and f.seconds < ttl - keepalive:
            length = "--pause-for" if opts.faults.pause_at is not None else "--nemesis-interval"
            found.append(
                f"the {f.name} lasts {f.seconds:g} s, shorter than the lease TTL {ttl:g} s "
                f"less a keepalive ({keepalive:g} s): the frozen holder wakes with its lease "
                f"alive and two holders cannot overlap; a {f.name} longer than the TTL would "
                f"({length} above {ttl:g}, or --lease-ttl below {f.seconds:g})"
            )
    return found
