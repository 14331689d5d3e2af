"""The load floor: a run that drove less load than asked proves less than it claims.

Rare bugs need load: etcd's robustness tests refuse a verdict below 200 ops/s, because a
stale read under a paused process took two days of simulation to find. With
``--min-rate`` (test.json's ``options.min_rate``), a run whose client operations
completed at a lower rate is unknown, with the rate it reached; a violation it found is
still a violation (invalid wins over unknown). The rate is read off the history, as
``harness check`` sees it: client completions over the time from the first client
invocation to the last client completion.
"""

from __future__ import annotations

from checkers.record import RunRecord
from checkers.result import UNKNOWN, CheckResult

NAME = "load"


def achieved(record: RunRecord) -> tuple[int, float]:
    """The client operations completed and the seconds they took (0.0 with fewer than
    two events to measure between)."""
    ops = record.history.client_ops().ops
    times = [op.time for op in ops]
    done = sum(1 for op in ops if op.type != "invoke")
    if len(times) < 2:
        return done, 0.0
    return done, (max(times) - min(times)) / 1e9


def check_record(record: RunRecord) -> CheckResult:
    """Valid when the run's client operations completed at ``min_rate`` per second or
    more; unknown, saying the rate, when fewer (not applicable without a floor)."""
    floor = record.option("min_rate")
    ops, seconds = achieved(record)
    rate = ops / seconds if seconds > 0 else 0.0
    details = {"ops": ops, "seconds": round(seconds, 3), "ops_per_s": round(rate, 1)}
    if not isinstance(floor, (int, float)) or isinstance(floor, bool):
        return CheckResult(NAME, UNKNOWN, "no load floor asked (--min-rate)", details, False)
    details["min_rate"] = floor
    if rate < floor:
        return CheckResult(
            NAME,
            UNKNOWN,
            f"the clients completed {ops} operations in {seconds:.1f} s, {rate:.0f} per "
            f"second, below the floor of {floor:.12g} asked (--min-rate): too little load to "
            "trust that a rare bug would have shown; what the run found under it is "
            "unknown (give more --concurrency, a faster machine, or a lower --min-rate)",
            details,
        )
    return CheckResult(
        NAME,
        True,
        f"{rate:.0f} client operations per second ({ops} in {seconds:.1f} s), at or above "
        f"the floor of {floor:.12g} asked",
        details,
    )
