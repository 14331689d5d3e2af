"""Which node a worker talks to: its thread's, across the processes that replace it."""

from __future__ import annotations

from typing import Any

from core.client import WorkerContext
from core.run_clock import RunClock
from workloads.common.factories import Connector


def driver(addresses: list[str], **options: Any) -> list[str]:
    return addresses


CONNECTOR = Connector.of({"n1": "a:1", "n2": "b:1", "n3": "c:1"}, driver)


def node_of(ctx: WorkerContext) -> str | None:
    return CONNECTOR.for_slot(ctx.slot)[1]


def test_a_replacement_process_keeps_its_threads_node() -> None:
    clock = RunClock()
    first = WorkerContext(process=2, clock=clock, thread=2)
    replacement = WorkerContext(process=2 + 5, clock=clock, thread=2)  # concurrency 5
    assert node_of(first) == node_of(replacement) == "n3"


def test_without_a_thread_the_process_picks_and_others_follow_in_turn() -> None:
    connect, node = CONNECTOR.for_slot(WorkerContext(process=4, clock=RunClock()).slot)
    assert node == "n2" and connect() == ["b:1", "c:1", "a:1"]
