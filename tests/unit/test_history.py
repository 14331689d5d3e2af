"""Op semantics: pairing, info retires a process, splitting by key, JSON round trip."""

from __future__ import annotations

import pytest

from core.history import History, MalformedHistory
from core.ops import Op


def h(*events: tuple) -> History:
    return History.from_events(
        {"process": p, "type": t, "f": f, "value": v, **({"key": k[0]} if k else {})}
        for p, t, f, v, *k in events
    )


def test_pairs_match_invocations_with_their_completions() -> None:
    hist = h(
        (0, "invoke", "write", 1),
        (1, "invoke", "read", None),
        (0, "ok", "write", 1),
        (1, "ok", "read", 1),
    )
    pairs = hist.pairs()
    assert [(p.invoke.process, p.type, p.value) for p in pairs] == [(0, "ok", 1), (1, "ok", 1)]
    assert pairs[0].end == 2


def test_an_operation_that_never_returned_counts_as_info() -> None:
    pairs = h((0, "invoke", "write", 1)).pairs()
    assert pairs[0].completion is None and pairs[0].type == "info" and pairs[0].end is None


def test_a_process_may_not_invoke_after_an_info() -> None:
    with pytest.raises(MalformedHistory, match="after an earlier op of it ended 'info'"):
        h((0, "invoke", "write", 1), (0, "info", "write", 1), (0, "invoke", "read", None)).pairs()


def test_a_process_may_not_invoke_twice_at_once() -> None:
    with pytest.raises(MalformedHistory, match="still open"):
        h((0, "invoke", "write", 1), (0, "invoke", "read", None)).pairs()


def test_a_completion_needs_an_invocation() -> None:
    with pytest.raises(MalformedHistory, match="no open invocation"):
        h((0, "ok", "write", 1)).pairs()


def test_fail_then_invoke_again_is_fine() -> None:
    pairs = h(
        (0, "invoke", "cas", [1, 2]),
        (0, "fail", "cas", [1, 2]),
        (0, "invoke", "read", None),
        (0, "ok", "read", 3),
    ).pairs()
    assert [p.type for p in pairs] == ["fail", "ok"]


def test_nemesis_ops_pair_and_stay_out_of_client_views() -> None:
    hist = h(
        ("nemesis", "invoke", "start-client-pause", None),
        (0, "invoke", "read", None),
        ("nemesis", "info", "start-client-pause", {"processes": [0]}),
        (0, "ok", "read", 1),
    )
    assert len(hist.client_ops()) == 2
    assert [p.type for p in hist.nemesis_ops().pairs()] == ["info"]


def test_by_key_splits_client_ops() -> None:
    hist = h(
        (0, "invoke", "write", 1, "a"),
        (1, "invoke", "write", 2, "b"),
        (0, "ok", "write", 1, "a"),
        (1, "ok", "write", 2, "b"),
    )
    parts = hist.by_key()
    assert sorted(parts) == ["a", "b"]
    assert [op.value for op in parts["a"]] == [1, 1]


def test_op_json_round_trip_keeps_optional_fields() -> None:
    op = Op(3, 1500, 2, "info", "cas", [1, 2], key="k", error="timed out", node="n1")
    assert Op.from_dict(__import__("json").loads(op.to_json())) == op
    assert "key" not in Op(0, 0, 0, "ok", "read", 1).to_dict()


def test_op_rejects_unknown_types() -> None:
    with pytest.raises(ValueError, match="op type"):
        Op(0, 0, 0, "done", "read")  # type: ignore[arg-type]
