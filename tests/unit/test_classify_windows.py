"""checkers.windows: fault windows from the nemesis operations of a history."""

from __future__ import annotations

from test_mutex_records import S, fault, history

from checkers.windows import CRASHES, FREEZES_CLIENT, fault_windows, first_overlapping


def test_each_fault_kind_gives_a_window_with_its_details() -> None:
    h = history(
        fault("client-pause", 1.0, 3.0, {"processes": [2], "pids": [99]}),
        fault("pause", 4.0, 5.0, {"nodes": ["n1"]}),
        fault("partition", 6.0, 7.0, {"grudge": {"n1": ["n2", "n3"]}}),
        fault("kill", 8.0, 9.0, {"nodes": ["n2"]}),
        fault("clock", 10.0, 11.0, {"offsets": {"n3": 2.5}}),
    )
    ws = fault_windows(h)
    assert [w.kind for w in ws] == ["client-pause", "pause", "partition", "kill", "clock"]
    pause, node, part, kill, clock = ws
    # as applied: from the start's completion (1 ms after its invocation) to the stop's
    assert (pause.start, pause.end, pause.processes) == (1_001_000_000, 3_001_000_000, (2,))
    assert pause.invoked == 1 * S and pause.overlaps(1 * S, 1 * S)  # possibly on from then
    assert node.nodes == ("n1",) and kill.nodes == ("n2",)
    assert part.nodes == ("n1", "n2", "n3")
    assert clock.offsets == (("n3", 2.5),) and clock.nodes == ("n3",)
    assert all(w.ok for w in ws)
    assert "client process 2 paused (SIGSTOP" in pause.describe()
    assert "clock of n3 by +2.5 s" in clock.describe()


def test_a_fault_never_stopped_lasts_to_the_end_and_heal_ends_all() -> None:
    h = history(
        fault("pause", 1.0, None, {"nodes": ["n1"]}),
        fault("kill", 2.0, None, {"nodes": ["n2"]}),
        (5.0, "nemesis", "invoke", "heal", None),
        (5.5, "nemesis", "ok", "heal", None),
        fault("partition", 6.0, None, {"grudge": {}}),
    )
    ws = fault_windows(h)
    assert [(w.kind, w.end) for w in ws] == [
        ("pause", 5.5 * S),
        ("kill", 5.5 * S),
        ("partition", None),
    ]
    assert ws[2].overlaps(100 * S, 200 * S)


def test_a_failed_start_is_marked_and_a_stray_stop_is_ignored() -> None:
    h = history(
        (1.0, "nemesis", "invoke", "start-client-pause", {"target": "holder"}),
        (1.1, "nemesis", "fail", "start-client-pause", None),
        (2.0, "nemesis", "invoke", "stop-client-pause", None),
        (2.1, "nemesis", "ok", "stop-client-pause", {"processes": []}),
        (2.2, "nemesis", "invoke", "stop-client-pause", None),  # the final heal, again
        (2.3, "nemesis", "ok", "stop-client-pause", {"processes": []}),
    )
    (w,) = fault_windows(h)
    assert w.ok is False and w.end == 2.1 * S
    assert first_overlapping([w], 0, 10 * S, FREEZES_CLIENT) is None  # no effect, no cause


def test_client_pauses_only_count_for_their_processes() -> None:
    ws = fault_windows(history(fault("client-pause", 1.0, 3.0, {"processes": [2]})))
    assert first_overlapping(ws, 0, 5 * S, FREEZES_CLIENT, process=1) is None
    assert first_overlapping(ws, 0, 5 * S, FREEZES_CLIENT, process=2) is ws[0]
    assert first_overlapping(ws, 4 * S, 5 * S, FREEZES_CLIENT, process=2) is None
    assert first_overlapping(ws, 0, 5 * S, CRASHES) is None
