"""workloads.common.backoff: bounded exponential backoff with full jitter, paced by what failed."""

from __future__ import annotations

from core.client import Completion
from workloads.common.backoff import CAP_S, Backoff
from workloads.common.wire import NotSent
from workloads.errors import OpFailed, OpUnknown, Unreachable


def test_delays_grow_exponentially_up_to_the_cap_with_full_jitter() -> None:
    bounds = [min(CAP_S, 0.05 * 2**n) for n in range(12)]
    for seed in range(50):
        b = Backoff(seed=seed)
        delays = [b.next_delay() for _ in bounds]
        assert all(0 <= d <= bound for d, bound in zip(delays, bounds, strict=True))
    many = [Backoff(seed=s).next_delay() for s in range(400)]
    assert 0.02 < sum(many) / len(many) < 0.03  # uniform over [0, 50 ms]: jitter, not fixed
    late = Backoff(seed=1, failures=20)
    assert max(late.next_delay() for _ in range(400)) > 0.9 * CAP_S  # the cap is reached


def test_same_seed_same_delays() -> None:
    a, b, c = Backoff(seed=7), Backoff(seed=7), Backoff(seed=8)
    da, db, dc = ([x.next_delay() for _ in range(8)] for x in (a, b, c))
    assert da == db != dc


def test_sleeps_only_while_unreachable_and_an_answer_resets() -> None:
    slept: list[float] = []
    b = Backoff(seed=3, sleep=slept.append)
    b.after(NotSent("cannot connect"))
    b.after(Unreachable("refused"))
    assert len(slept) == 2 and b.failures == 2
    b.after(OpUnknown("no answer"))  # unknown: says nothing of reachability
    assert len(slept) == 2 and b.failures == 2
    b.after(OpFailed("not granted"))  # the service answered
    assert b.failures == 0
    b.after(NotSent("cannot connect"))
    b.after(None)  # success
    assert b.failures == 0 and len(slept) == 3


def test_run_maps_errors_to_completions_and_paces_failures() -> None:
    slept: list[float] = []
    b = Backoff(seed=3, sleep=slept.append)

    def refused() -> Completion:
        raise NotSent("cannot connect to 127.0.0.1:1: [Errno 111] Connection refused")

    def lost() -> Completion:
        raise OpUnknown("connection lost after sending")

    c = b.run(refused, "n1")
    assert (c.type, c.node) == ("fail", "n1") and "Connection refused" in str(c.error)
    assert b.run(lost).type == "info"
    assert b.run(lambda: Completion("ok", 1)).value == 1
    assert len(slept) == 1 and b.failures == 0
