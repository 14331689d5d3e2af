"""A grant its client learned of late is not blamed on the service.

``histories/etcd-election-late-grant`` is a real etcd election run without faults
(CI, a machine loaded by other work: its test.json has the command): process 2's client
saw its grant of epoch 16 at 7.743 s, 2 ms after process 0 had been granted epoch 18. The
service granted 16 first (its number is lower, and process 2's take was in flight); process
2 led only in its own belief. Ordered as seen, the checker had said that the service
granted the leadership over a valid lease (a service bug), twice.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from checkers.holdings import Holding, granted_before
from harness.analysis import check_run

RUN = Path(__file__).parent / "histories" / "etcd-election-late-grant"


def test_a_grant_seen_late_is_the_slow_clients_not_the_services(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(RUN, run)
    election = check_run(run)["checkers"]["election"]
    assert election["valid"] is False  # a stale leader's write was accepted: no fencing
    (group,) = election["overlap_groups"]
    assert (group["process"], group["token"], group["later"][0]["token"]) == (2, 16, 18)
    assert group["classification"]["cause"] == "grant-seen-late"
    said = election["summary"] + " ".join(election["violations"])
    assert "by its own account" not in said and "bug in the coordination service" not in said


def holding(process: int, invoked: int, start: int, number: int | None) -> Holding:
    return Holding(process, invoked, start, number, lease=process, name="election-0")


def test_the_service_order_follows_the_numbers_where_real_time_allows() -> None:
    first = holding(0, 100, 200, 18)
    late = holding(2, 150, 210, 16)  # in flight when 18 was seen: granted first
    assert granted_before(late, first) and not granted_before(first, late)
    lowered = holding(2, 205, 210, 16)  # invoked after 18 was seen: granted after it
    assert granted_before(first, lowered) and not granted_before(lowered, first)
    unnumbered = holding(2, 150, 210, None)
    assert granted_before(first, unnumbered)
