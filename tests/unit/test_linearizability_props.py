"""Property tests: the optimized search against simulation, brute force and plain WGL.

The long runs (tens of thousands of histories) are ``scripts/fuzz_linearizability.py``;
these keep the unit run to a few seconds.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from checkers.linear import bits as bits_module
from checkers.linear.bits import CandidateMasks, callable_table
from checkers.linear.brute import brute_check
from checkers.linear.models import MODELS
from checkers.linear.plain import plain_check
from checkers.linear.prepare import problems
from checkers.linear.schedule import Budget, run_searches
from checkers.linear.search import REDUCTIONS, Search
from checkers.linear.simulate import SIMULATED, simulate
from checkers.linearizability import check
from core.history import History

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

models = st.sampled_from(SIMULATED)


def histories(max_ops: int, corrupt: bool) -> st.SearchStrategy[tuple[str, History]]:
    @st.composite
    def build(draw: Any) -> tuple[str, History]:
        model = draw(models)
        history = simulate(
            model,
            draw(st.integers(1, max_ops)),
            processes=draw(st.integers(1, 6)),
            keys=draw(st.sampled_from((1, 1, 2))),
            values=draw(st.integers(2, 4)),
            p_info=draw(st.sampled_from((0.0, 0.1, 0.3))),
            corrupt=draw(st.sampled_from((0.05, 0.2, 0.5))) if corrupt else 0.0,
            seed=draw(st.integers(0, 2**32)),
        )
        return model, history

    return build()


def plain_verdict(history: History, model: str) -> Any:
    """The plain search's verdict; "unknown" if it needs more than a bounded effort."""
    verdicts = [plain_check(p, MODELS[model], 100_000) for p in problems(history, MODELS[model])]
    if False in verdicts:
        return False
    return "unknown" if "unknown" in verdicts else True


def verdict_with(history: History, model: str, reductions: frozenset[str]) -> Any:
    searches = [Search(p, MODELS[model], reductions) for p in problems(history, MODELS[model])]
    return all(r.valid is True for r in run_searches(searches, Budget()))


@FAST
@given(histories(60, corrupt=False))
def test_simulated_linearizable_histories_are_valid(case: tuple[str, History]) -> None:
    model, history = case
    result = check(history, model)
    assert result.valid is True, result.summary


@FAST
@given(histories(12, corrupt=True))
def test_small_histories_agree_with_brute_force(case: tuple[str, History]) -> None:
    model, history = case
    m = MODELS[model]
    expected = all(brute_check(p, m) for p in problems(history, m))
    assert check(history, model).valid is expected


@FAST
@given(histories(30, corrupt=True))
def test_optimized_agrees_with_plain_wgl(case: tuple[str, History]) -> None:
    model, history = case
    expected = plain_verdict(history, model)
    assume(expected != "unknown")
    assert check(history, model).valid is expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(25, corrupt=True), st.sampled_from(sorted(REDUCTIONS)))
def test_each_reduction_alone_agrees_with_plain_wgl(
    case: tuple[str, History], reduction: str
) -> None:
    """Each reduction is complete on its own, not only in company of the others."""
    model, history = case
    expected = plain_verdict(history, model)
    assume(expected != "unknown")
    assert verdict_with(history, model, frozenset({reduction})) is expected
    assert verdict_with(history, model, REDUCTIONS - {reduction}) is expected


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(40, corrupt=True))
def test_computed_candidate_masks_match_the_table(case: tuple[str, History]) -> None:
    """Big partitions compute candidate masks on demand instead of tabling them."""
    model, history = case
    for p in problems(history, MODELS[model]):
        s = Search(p, MODELS[model])
        computed = CandidateMasks(s.starts, s.ends, s.n_certain)
        table = callable_table(s.starts, s.ends, s.n_certain)
        assert [computed[x] for x in range(s.n_certain)] == table


def run_one(search: Search) -> Any:
    """A search run to its end: everything its result says."""
    (result,) = run_searches([search], Budget())
    return (result.valid, result.steps, result.configs, result.failed, result.paths)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(40, corrupt=True), st.sampled_from(sorted(REDUCTIONS)))
def test_lazy_compilation_searches_exactly_as_eager(
    case: tuple[str, History], reduction: str
) -> None:
    """Compiling entries as the search reaches them changes nothing the search does:
    same verdict, steps, memoized configurations, culprit and partial linearizations,
    with every reduction and without each one."""
    model, history = case
    m = MODELS[model]
    for reductions in (REDUCTIONS, REDUCTIONS - {reduction}):
        for p in problems(history, m):
            lazy = Search(p, m, reductions)
            saved = bits_module.LAZY
            bits_module.LAZY = -1
            try:
                eager = Search(p, m, reductions)
            finally:
                bits_module.LAZY = saved
            assert lazy.lazy and not eager.lazy
            assert run_one(lazy) == run_one(eager)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(histories(30, corrupt=True))
def test_big_partition_mode_agrees_with_plain_wgl(case: tuple[str, History]) -> None:
    """The mode for big partitions (lean frames, computed masks) on small ones."""
    model, history = case
    expected = plain_verdict(history, model)
    assume(expected != "unknown")
    saved = bits_module.LEAN, bits_module.TABLE_BITS
    bits_module.LEAN, bits_module.TABLE_BITS = 0, 0
    try:
        assert check(history, model).valid is expected
    finally:
        bits_module.LEAN, bits_module.TABLE_BITS = saved
