"""The refutation of a state nothing produces (checkers/linear/unproduced.py): it decides
the hard invalid key at once, and never refutes a partition the plain search finds
linearizable (soundness, docs/linearizability.md "Unproduced states")."""

from __future__ import annotations

import random

from checkers.linear import solve, unproduced
from checkers.linear.models import MODELS
from checkers.linear.plain import plain_check
from checkers.linear.prepare import problems
from checkers.linear.simulate import SIMULATED, simulate
from checkers.linearizability import check, explain
from core.history import History


def test_one_read_of_a_value_nothing_writes_refutes_a_big_key_at_once() -> None:
    ops = list(simulate("cas-register", 2 * solve.MIN_OPS, processes=10, keys=1, values=5, seed=4))
    i = next(k for k, o in enumerate(ops) if k > len(ops) // 2 and o.type == "ok" and o.f == "read")
    ops[i] = ops[i].with_(value=99)
    result = check(History(ops), "cas-register", time_limit=60)
    assert result.valid is False
    assert result.details["counterexample"]["method"] == unproduced.METHOD
    assert "read 99" in explain(result)[0] and "needs the state 99" in explain(result)[0]
    assert result.details["verdict_s"] < 5  # the search alone had no verdict in 30 s


def test_it_never_refutes_what_the_plain_search_finds_linearizable() -> None:
    refuted = 0
    for seed in range(400):
        rng = random.Random(seed)
        model = rng.choice(SIMULATED)
        history = simulate(
            model,
            rng.randint(1, 24),
            processes=rng.randint(1, 6),
            keys=rng.choice((1, 2)),
            values=rng.randint(2, 5),
            p_info=rng.choice((0.0, 0.2)),
            corrupt=rng.choice((0.0, 0.1, 0.3)),
            seed=seed,
        )
        m = MODELS[model]
        for p in problems(history, m):
            if unproduced.verdict(p, m) is not None:
                refuted += 1
                assert plain_check(p, m, 200_000) is False, (seed, model)
    assert refuted > 10  # the check was exercised


def test_a_call_that_may_leave_any_state_leaves_it_to_the_search() -> None:
    history = simulate("kv", 40, processes=3, keys=1, corrupt=0.5, seed=2)  # appends: ANY
    assert all(unproduced.verdict(p, MODELS["kv"]) is None for p in problems(history, MODELS["kv"]))
