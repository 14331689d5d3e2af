"""The register path (``checkers.linear.registers``): the same verdicts as the general
path and the plain search, and the general path wherever it gives up."""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.linear import registers
from checkers.linear.model import ModelError
from checkers.linear.models import MODELS
from checkers.linear.models.register import RegisterModel
from checkers.linear.plain import plain_check
from checkers.linear.prepare import problems
from checkers.linear.simulate import simulate
from checkers.linearizability import check
from core.history import History
from core.ops import Op

REGISTERS = ("register", "cas-register", "etcd")
SOME = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def decide(history: History, model: str) -> registers.Decided | None:
    m = MODELS[model]
    assert isinstance(m, RegisterModel)
    return registers.decide(history.ops, m.initial, m.fail_cas_happened, m.nil_read_any, None)


def plain(history: History, model: str) -> Any:
    verdicts = [plain_check(p, MODELS[model], 200_000) for p in problems(history, MODELS[model])]
    return False if False in verdicts else ("unknown" if "unknown" in verdicts else True)


@st.composite
def cases(draw: Any) -> tuple[str, History]:
    model = draw(st.sampled_from(REGISTERS))
    history = simulate(
        model,
        draw(st.integers(0, 80)),
        processes=draw(st.integers(1, 6)),
        keys=draw(st.sampled_from((1, 1, 2, 5))),
        values=draw(st.integers(2, 5)),
        p_info=draw(st.sampled_from((0.0, 0.1, 0.3))),
        corrupt=draw(st.sampled_from((0.0, 0.05, 0.2, 0.5))),
        seed=draw(st.integers(0, 2**32)),
    )
    return model, history


@SOME
@given(cases())
def test_it_agrees_with_the_plain_search(case: tuple[str, History]) -> None:
    model, history = case
    d = decide(history, model)
    expected = plain(history, model)
    if d is not None and expected != "unknown":  # None: past its step budget
        assert d.valid is expected


@SOME
@given(cases())
def test_its_result_reads_as_the_general_paths(case: tuple[str, History]) -> None:
    model, history = case
    fast = check(history, model)
    general = check(history, model, register_path=False)
    assert fast.valid is general.valid
    if "path" not in fast.details:
        return  # it gave up (past its step budget): the general path's result
    for key in ("model", "ops", "partitions"):
        assert fast.details[key] == general.details[key], key
    if general.valid is True:
        assert fast.summary == general.summary
    else:
        assert fast.details["counterexample"]["sentences"]


def op(i: int, p: Any, t: str, f: str, v: Any = None, key: Any = None) -> Op:
    return Op(i, i, p, t, f, v, key)  # type: ignore[arg-type]


def test_equal_values_are_one_state_as_in_python() -> None:
    """True equals 1 to the model (it compares states with ==), so here too."""
    write = [op(0, 0, "invoke", "write", True), op(1, 0, "ok", "write", True)]
    h = History([*write, op(2, 1, "invoke", "read"), op(3, 1, "ok", "read", 1)])
    assert check(h, "register").valid is True
    assert check(h, "register", register_path=False).valid is True


def test_nil_string_and_big_values_are_their_own_states() -> None:
    for value in ("a", None, -5, 2**40, "1"):
        write = [op(0, 0, "invoke", "write", value), op(1, 0, "ok", "write", value)]
        read = [op(2, 1, "invoke", "read"), op(3, 1, "ok", "read", value)]
        h = History([*write, *read, op(4, 1, "invoke", "read"), op(5, 1, "ok", "read", 1)])
        d = decide(h, "register")
        assert d is not None and d.valid is False, value


WRITE_LIST = [op(0, 0, "invoke", "write", [1]), op(1, 0, "ok", "write", [1])]
TWICE = [op(0, 0, "invoke", "write", 1), op(1, 0, "invoke", "write", 2)]
AFTER_INFO = [op(0, 0, "invoke", "write", 1), op(1, 0, "info", "write", 1)]
AFTER_INFO += [op(2, 0, "invoke", "read"), op(3, 0, "ok", "read", 1)]
UNKNOWN_F = [op(0, 0, "invoke", "append", 1), op(1, 0, "ok", "append", 1)]
ORPHAN = [op(0, 0, "ok", "write", 1)]
BAD_CAS = [op(0, 0, "invoke", "cas", 1), op(1, 0, "ok", "cas", 1)]
KEY_CHANGES = [op(0, 0, "invoke", "write", 1, key=1), op(1, 0, "ok", "write", 1, key=2)]
# Issue 29: what a register does not hold, or a completion that says another value.
READ_MAP = [op(0, 0, "invoke", "read"), op(1, 0, "ok", "read", {"a": 1})]
WRITE_CHANGED = [op(0, 0, "invoke", "write", 1), op(1, 0, "ok", "write", 2)]
CAS_CHANGED = [op(0, 0, "invoke", "cas", [0, 1]), op(1, 0, "ok", "cas", [0, 2])]
GIVEN_UP = [
    WRITE_LIST,
    TWICE,
    AFTER_INFO,
    UNKNOWN_F,
    ORPHAN,
    BAD_CAS,
    KEY_CHANGES,
    READ_MAP,
    WRITE_CHANGED,
    CAS_CHANGED,
]


@pytest.mark.parametrize("ops", GIVEN_UP)
def test_it_leaves_what_it_does_not_read_to_the_general_path(ops: list[Op]) -> None:
    """Values that are not plain scalars, malformed histories and ops the model does not
    know: the general path reads them (and says what is wrong) exactly as before."""
    h = History(ops)
    assert decide(h, "register") is None
    try:
        fast: Any = check(h, "register")
    except ValueError as e:
        fast = type(e)
    try:
        general: Any = check(h, "register", register_path=False)
    except ValueError as e:
        general = type(e)
    if isinstance(fast, type):
        assert fast is general
    else:
        assert (fast.valid, fast.summary) == (general.valid, general.summary)
        assert "path" not in fast.details


@pytest.mark.parametrize("ops", [READ_MAP, WRITE_CHANGED, CAS_CHANGED])
def test_a_value_the_register_does_not_hold_is_a_model_error(ops: list[Op]) -> None:
    """Issue 29: a read returning a map was checked (invalid); a write completed with
    another value than it wrote was checked as the write it invoked."""
    for model in REGISTERS:
        with pytest.raises(ModelError, match=r"op 1 \(process 0\): (a read returned|the ok of)"):
            check(History(ops), model)


def test_a_hard_partition_goes_to_the_general_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past its step budget it gives up, and the general search (with its reductions)
    decides; the verdict is the same."""
    history = simulate("cas-register", 300, processes=8, values=2, p_info=0.3, seed=3)
    assert decide(history, "cas-register") is not None
    monkeypatch.setattr(registers, "STEPS_BASE", 0)
    monkeypatch.setattr(registers, "STEPS_PER_ENTRY", 0)
    monkeypatch.setattr(registers, "CHECK_EVERY", 1)
    if registers.__file__.endswith(".py"):  # the compiled module reads its own constants
        assert decide(history, "cas-register") is None
        result = check(history, "cas-register")
        assert "path" not in result.details
        assert result.valid is check(history, "cas-register", register_path=False).valid


def test_past_the_deadline_it_gives_up() -> None:
    history = simulate("register", 2000, processes=4, keys=3, seed=1)
    m = MODELS["register"]
    assert isinstance(m, RegisterModel)
    assert registers.decide(history.ops, None, False, False, 0.0) is None
    assert check(history, "register", 1e-9).valid == "unknown"


def test_an_empty_history_and_nemesis_ops_alone() -> None:
    assert check(History([]), "register").details["partitions"] == 0
    nemesis = History([Op(0, 0, "nemesis", "info", "start"), Op(1, 1, "nemesis", "info", "stop")])
    for path in (True, False):
        result = check(nemesis, "register", register_path=path)
        assert (result.valid, result.details["partitions"]) == (True, 1)


NATIVE = registers.native()
needs_native = pytest.mark.skipif(
    NATIVE is None and os.environ.get("HARNESS_REQUIRE_COMPILED") != "1",
    reason="the C module is not built here (scripts/compile_checker.py)",
)


def both(history: History, model: str) -> tuple[Any, Any]:
    m = MODELS[model]
    assert isinstance(m, RegisterModel) and NATIVE is not None
    args = (m.initial, m.fail_cas_happened, m.nil_read_any)
    here = registers.decide_here(history.ops, *args, None)
    return here, registers.decide_in_c(NATIVE, history.ops, *args, None)


@needs_native
@SOME
@given(cases())
def test_the_c_module_searches_step_for_step_as_the_python_one(
    case: tuple[str, History],
) -> None:
    """The same verdict, partitions, entries, steps, configurations and invalid key."""
    here, c = both(*reversed(case))
    assert here == c


@needs_native
@pytest.mark.parametrize("ops", GIVEN_UP)
def test_the_c_module_gives_up_where_the_python_one_does(ops: list[Op]) -> None:
    assert both(History(ops), "register") == (None, None)


@needs_native
def test_the_c_module_reads_ops_of_every_field_type() -> None:
    """Processes and keys as strings, big and negative integers and booleans; values as
    strings and big integers: the same as the Python module."""
    ops = []
    procs: list[Any] = ["a", 2**40, 7, True]
    keys: list[Any] = ["k", 2**50, 3, None]
    values: list[Any] = ["x", 2**45, -3, 5, None, False]
    i = 0
    for n in range(40):
        p, k, v = procs[n % 4], keys[n % 3], values[n % 6]
        f = ("write", "read", "cas")[n % 3]
        value = [v, values[(n + 1) % 6]] if f == "cas" else (v if f == "write" else None)
        ops += [op(i, p, "invoke", f, value, key=k), op(i + 1, p, "ok", f, value, key=k)]
        i += 2
    for model in REGISTERS:
        here, c = both(History(ops), model)
        assert here is not None and c is not None
        assert here == c


def test_a_dense_single_key_history_is_decided_within_its_step_cap() -> None:
    """Issue 36's dense rows (one key, ten clients, a few unknown outcomes): the register
    path decides them in under seven steps an entry (within ``STEPS_PER_ENTRY``, 8), so
    they never fall back to the general search, which took 30 to 50 times longer."""
    history = simulate("register", 4000, processes=10, keys=1, values=5, p_info=0.01, seed=1)
    d = decide(history, "register")
    assert d is not None and d.valid is True
    assert d.steps < 7 * d.ops
    assert check(history, "register", explain=False).details["path"] == "registers"
