"""The unique-values fast path: where it applies it gives the search's verdict, it explains
an invalid partition in words, and big partitions of the checker go through it."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from checkers.linear import solve, unique
from checkers.linear.models import get_model
from checkers.linear.prepare import problems
from checkers.linear.simulate import simulate
from checkers.linearizability import check, explain
from core.history import History


def verdict(history: History, model: str) -> unique.Verdict | None:
    m = get_model(model)
    (p,) = problems(history, m)
    return unique.verdict(p, m)


def h(*events: tuple[int, str, str, object]) -> History:
    return History.from_events(
        {"process": p, "type": t, "f": f, "value": v} for p, t, f, v in events
    )


@settings(max_examples=400, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    n=st.integers(4, 40),
    processes=st.integers(1, 7),
    p_info=st.sampled_from([0.0, 0.1, 0.3]),
    corrupt=st.sampled_from([0.0, 0.05, 0.2]),
    model=st.sampled_from(["register", "cas-register"]),
)
def test_where_it_applies_it_agrees_with_the_search(
    seed: int, n: int, processes: int, p_info: float, corrupt: float, model: str
) -> None:
    history = simulate(
        model, n, processes=processes, keys=1, values=0, p_info=p_info, corrupt=corrupt, seed=seed
    )
    fast = verdict(history, model)
    assert fast is not None  # writes, reads and cas with unique values: it applies
    searched = check(history, model, parallel=False)
    assert fast.valid is searched.valid
    if not fast.valid:
        assert fast.explain is not None
        text = fast.explain()["sentences"][0]
        assert text.startswith("Not linearizable: ") and "process" in text


def test_it_leaves_what_hints_cannot_place_to_the_search() -> None:
    repeated = h(
        (1, "invoke", "write", 1),
        (1, "ok", "write", 1),
        (2, "invoke", "write", 1),
        (2, "ok", "write", 1),
    )
    assert verdict(repeated, "register") is None  # a value written twice
    failed_cas = h(
        (1, "invoke", "write", 1),
        (1, "ok", "write", 1),
        (2, "invoke", "cas", [3, 4]),
        (2, "fail", "cas", [3, 4]),
    )
    assert verdict(failed_cas, "etcd") is None  # legal in every state but 3
    kv = History.from_events(
        [
            {"process": 1, "type": "invoke", "f": "append", "value": "x"},
            {"process": 1, "type": "ok", "f": "append", "value": "x"},
        ]
    )
    assert verdict(kv, "kv") is None  # appends produce states hints do not name


def test_a_read_returning_before_its_write_was_invoked() -> None:
    v = verdict(
        h(
            (1, "invoke", "read", None),
            (1, "ok", "read", 5),
            (2, "invoke", "write", 5),
            (2, "ok", "write", 5),
        ),
        "register",
    )
    assert v is not None and v.valid is False and v.explain is not None
    cx = v.explain()
    assert cx["sentences"] == [
        "Not linearizable: process 1's read 5 returned at event 1, before process 2's write "
        "5 was invoked at event 2; yet process 2's write 5 must come first: the state each "
        "needs or makes is written once, and only the order of these writes and "
        "compare-and-sets leads from one to the other."
    ]
    assert [op["index"] for op in cx["window"]["ops"]] == [0, 2]


def test_two_compare_and_sets_cannot_leave_the_same_value() -> None:
    v = verdict(
        h(
            (1, "invoke", "write", 1),
            (1, "ok", "write", 1),
            (2, "invoke", "cas", [1, 2]),
            (3, "invoke", "cas", [1, 3]),
            (2, "ok", "cas", [1, 2]),
            (3, "ok", "cas", [1, 3]),
        ),
        "register",
    )
    assert v is not None and v.valid is False and v.explain is not None
    assert "both leave state 1, which can only be left once" in v.explain()["sentences"][0]


def test_runs_of_two_values_that_must_precede_each_other() -> None:
    # write 1 and write 2 each complete before the other value's read is invoked.
    v = verdict(
        h(
            (1, "invoke", "write", 1),
            (2, "invoke", "write", 2),
            (1, "ok", "write", 1),
            (2, "ok", "write", 2),
            (3, "invoke", "read", None),
            (3, "ok", "read", 1),
            (4, "invoke", "read", None),
            (4, "ok", "read", 2),
            (5, "invoke", "read", None),
            (5, "ok", "read", 1),
        ),
        "register",
    )
    assert v is not None and v.valid is False and v.explain is not None
    text = v.explain()["sentences"][0]
    assert "cannot be put in any order that real time allows" in text
    assert "process 2's write 2 returned at event 3, before process 3's read 1 was invoked" in text
    assert text.endswith("these runs would have to precede each other.")


def test_an_unknown_write_someone_read_took_effect_and_one_nobody_read_may_not_have() -> None:
    v = verdict(
        h(
            (1, "invoke", "write", 1),
            (1, "info", "write", 1),
            (2, "invoke", "write", 2),
            (2, "info", "write", 2),
            (3, "invoke", "read", None),
            (3, "ok", "read", 1),
        ),
        "register",
    )
    assert v is not None and v.valid is True


@pytest.mark.parametrize("corrupt", [0.0, 0.01])
def test_big_partitions_go_through_it(corrupt: float) -> None:
    history = simulate(
        "register",
        2 * solve.MIN_OPS,
        processes=8,
        keys=1,
        values=0,
        p_info=0.02,
        corrupt=corrupt,
        seed=7,
    )
    result = check(history, "register", parallel=False, register_path=False)
    assert result.details["unique_values_partitions"] == 1
    assert result.details["steps"] == 0  # no search ran
    assert result.valid is (corrupt == 0.0)
    if corrupt:
        assert explain(result)[0].startswith("stale read: ")  # named first
        assert result.details["counterexample"]["sentences"][0].startswith("Not linearizable: ")
        assert result.details["counterexample"]["window"]["ops"]


def test_without_time_for_it_the_search_keeps_the_deadline() -> None:
    history = simulate(
        "register", 2 * solve.MIN_OPS, processes=8, keys=1, values=0, p_info=0.02, seed=7
    )
    result = check(history, "register", time_limit=0.5, parallel=False)
    assert "unique_values_partitions" not in result.details  # 1 s needed, 0.5 s given
    assert result.valid in (True, "unknown")


def test_compare_and_sets_that_only_lead_into_one_another_cannot_happen() -> None:
    # cas 1->2 and cas 2->1: each needs the state only the other produces, and nothing
    # writes 1 or 2 first. The search agrees.
    history = h(
        (1, "invoke", "cas", [1, 2]),
        (1, "ok", "cas", [1, 2]),
        (2, "invoke", "cas", [2, 1]),
        (2, "ok", "cas", [2, 1]),
    )
    v = verdict(history, "register")
    assert v is not None and v.valid is False and v.explain is not None
    assert "neither a write nor the initial state starts that loop" in v.explain()["sentences"][0]
    assert check(history, "register", parallel=False).valid is False
    fed = h(
        (3, "invoke", "write", 1),
        (3, "ok", "write", 1),
        *[
            e
            for e in [
                (1, "invoke", "cas", [1, 2]),
                (1, "ok", "cas", [1, 2]),
                (2, "invoke", "cas", [2, 1]),
                (2, "ok", "cas", [2, 1]),
            ]
        ],
    )
    assert verdict(fed, "register") is None  # 1 written twice (by the write, by cas 2->1)
