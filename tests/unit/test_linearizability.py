"""The linearizability checker: reference verdicts, models, budgets, counterexamples."""

from __future__ import annotations

import csv
import json
from collections.abc import Hashable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from checkers.linear.model import Call, ModelError, by_key, outcome
from checkers.linear.models import MODELS
from checkers.linear.plain import plain_check
from checkers.linear.prepare import problems
from checkers.linearizability import check, explain
from checkers.result import UNKNOWN
from core.formats import FormatError, read_history
from core.history import History
from core.ops import Op

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "histories"
MANIFEST = SHARED / "MANIFEST.tsv"


def manifest_rows() -> list[Any]:
    if not MANIFEST.is_file():
        return [
            pytest.param(
                None,
                marks=pytest.mark.skip(
                    reason=f"reference histories not found at {SHARED} (CI always has them)"
                ),
            )
        ]
    with open(MANIFEST) as f:
        rows = [
            r
            for r in csv.DictReader(f, delimiter="\t")
            if r["file"].endswith((".log", ".txt", ".edn"))
        ]
    return [pytest.param(r, id=r["file"]) for r in rows]


@pytest.mark.parametrize("row", manifest_rows())
def test_reference_history_gets_its_expected_verdict(row: dict[str, str]) -> None:
    if row["expected_verdict"] == "none":  # etcd_095.log, empty: no history, no verdict
        with pytest.raises(FormatError, match="no ops in it"):
            read_history(SHARED / row["file"])
        return
    history, model = read_history(SHARED / row["file"])
    result = check(history, model, time_limit=60)
    expected = {"linearizable": True, "not-linearizable": False}[row["expected_verdict"]]
    assert result.valid is expected, (row["file"], result.summary)
    if expected is False:
        assert result.details["counterexample"]["sentences"]


def h(*events: tuple[Any, ...]) -> History:
    """A history from (process, type, f, value[, key]) tuples, in order."""
    out = []
    for e in events:
        d = {"process": e[0], "type": e[1], "f": e[2], "value": e[3]}
        if len(e) > 4:
            d["key"] = e[4]
        out.append(d)
    return History.from_events(out)


# Registers ---------------------------------------------------------------------------


def test_stale_read_is_invalid_with_a_counterexample() -> None:
    history = h(
        (1, "invoke", "write", 1),
        (1, "ok", "write", 1),
        (2, "invoke", "write", 4),
        (2, "ok", "write", 4),
        (3, "invoke", "read", None),
        (3, "ok", "read", 1),
    )
    result = check(history, "register")
    assert result.valid is False
    ce = result.details["counterexample"]
    assert ce["op"]["process"] == 3 and ce["op"]["call"] == "read 1"
    assert ce["state_before"] == 4 and ce["requires"] == 1
    assert ce["linearizations"][0]["ops"] == [0, 2]
    assert {op["index"] for op in ce["window"]["ops"]} >= {2, 4}
    text = " ".join(explain(result))
    assert "process 3 read 1" in text
    assert "overwritten by process 2's write 4, which completed at event 3" in text
    json.dumps(result.to_dict())  # JSON-able


def test_read_of_a_never_written_value() -> None:
    history = h((1, "invoke", "read", None), (1, "ok", "read", 7))
    result = check(history, "cas-register")
    assert result.valid is False
    assert "no operation could produce it" in " ".join(explain(result))


def test_concurrent_write_explains_read() -> None:
    history = h(
        (1, "invoke", "write", 1),
        (2, "invoke", "read", None),
        (2, "ok", "read", 1),
        (1, "ok", "write", 1),
    )
    assert check(history, "register").valid is True


def test_a_write_of_the_current_value_is_not_state_preserving() -> None:
    """Linearizing "write 0" at once because the register holds 0 would be wrong: its
    effect comes later, after the write of 1, which the read of 0 needs."""
    history = h(
        (1, "invoke", "write", 0),
        (2, "invoke", "write", 1),
        (2, "ok", "write", 1),
        (3, "invoke", "read", None),
        (3, "ok", "read", 0),
        (1, "ok", "write", 0),
    )
    assert check(history, "cas-register").valid is True
    (p,) = problems(history, MODELS["cas-register"])
    assert plain_check(p, MODELS["cas-register"]) is True


def test_knossos_fail_did_not_happen_but_etcd_fail_cas_did() -> None:
    history = h(
        (1, "invoke", "cas", [0, 5]),
        (1, "fail", "cas", [0, 5]),
        (2, "invoke", "read", None),
        (2, "ok", "read", 0),
    )
    assert check(history, "cas-register").valid is True  # the fail is dropped
    assert check(history, "etcd").valid is False  # nil != 0 and the cas matched nothing
    etcd = h(
        (1, "invoke", "write", 3),
        (1, "ok", "write", 3),
        (2, "invoke", "cas", [3, 4]),
        (2, "fail", "cas", [3, 4]),
    )
    assert check(etcd, "etcd").valid is False  # the compare did match: it cannot fail


def test_info_write_may_happen_late_or_never() -> None:
    late = h(
        (1, "invoke", "write", 2),
        (1, "info", "write", 2),
        (2, "invoke", "read", None),
        (2, "ok", "read", None),
        (3, "invoke", "read", None),
        (3, "ok", "read", 2),
    )
    assert check(late, "register").valid is True
    never = h((1, "invoke", "write", 2), (1, "info", "write", None))
    assert check(never, "register").valid is True
    before_invoke = h(
        (2, "invoke", "read", None),
        (2, "ok", "read", 2),
        (1, "invoke", "write", 2),
        (1, "info", "write", 2),
    )
    assert check(before_invoke, "register").valid is False


def test_keys_are_independent_partitions() -> None:
    history = h(
        (1, "invoke", "write", 1, "a"),
        (1, "ok", "write", 1, "a"),
        (2, "invoke", "read", None, "b"),
        (2, "ok", "read", None, "b"),
        (2, "invoke", "read", None, "a"),
        (2, "ok", "read", 1, "a"),
    )
    result = check(history, "register")
    assert result.valid is True and result.details["partitions"] == 2


def test_nemesis_ops_are_ignored() -> None:
    history = h(
        ("nemesis", "info", "start", None),
        (1, "invoke", "write", 1),
        (1, "ok", "write", 1),
        ("nemesis", "info", "stop", None),
    )
    assert check(history, "register").valid is True


# Other models ------------------------------------------------------------------------


def test_mutex_owner_semantics() -> None:
    ok = h(
        (1, "invoke", "acquire", None),
        (1, "ok", "acquire", None),
        (1, "invoke", "release", None),
        (1, "ok", "release", None),
        (2, "invoke", "acquire", None),
        (2, "ok", "acquire", None),
    )
    assert check(ok, "mutex").valid is True
    foreign_release = h(
        (1, "invoke", "acquire", None),
        (1, "ok", "acquire", None),
        (2, "invoke", "release", None),
        (2, "ok", "release", None),
    )
    assert check(foreign_release, "mutex").valid is False
    double = h(
        (1, "invoke", "acquire", None),
        (1, "ok", "acquire", None),
        (2, "invoke", "acquire", None),
        (2, "ok", "acquire", None),
    )
    result = check(double, "mutex")
    assert result.valid is False
    assert "held by process 1" in " ".join(explain(result))
    reentrant = h(
        (1, "invoke", "acquire", None),
        (1, "ok", "acquire", None),
        (1, "invoke", "acquire", None),
        (1, "ok", "acquire", None),
    )
    assert check(reentrant, "mutex").valid is False
    # An unknown acquire may not have happened: the next holder is fine...
    unknown_then_other = h(
        (1, "invoke", "acquire", None),
        (1, "info", "acquire", None),
        (2, "invoke", "acquire", None),
        (2, "ok", "acquire", None),
    )
    assert check(unknown_then_other, "mutex").valid is True
    # ...and a failed one did not: releasing after it is releasing a lock not held.
    failed_then_release = h(
        (1, "invoke", "acquire", None),
        (1, "fail", "acquire", None),
        (1, "invoke", "release", None),
        (1, "ok", "release", None),
    )
    assert check(failed_then_release, "mutex").valid is False


def test_kv_appends_and_gets() -> None:
    history = h(
        (1, "invoke", "append", "a", "k"),
        (2, "invoke", "append", "b", "k"),
        (1, "ok", "append", "a", "k"),
        (2, "ok", "append", "b", "k"),
        (3, "invoke", "get", None, "k"),
        (3, "ok", "get", "ba", "k"),
    )
    assert check(history, "kv").valid is True
    bad = h(*history_events_with_get("ab|"))
    assert check(bad, "kv").valid is False


def history_events_with_get(value: str) -> list[tuple[Any, ...]]:
    return [
        (1, "invoke", "append", "a", "k"),
        (1, "ok", "append", "a", "k"),
        (2, "invoke", "append", "b", "k"),
        (2, "ok", "append", "b", "k"),
        (3, "invoke", "get", None, "k"),
        (3, "ok", "get", value, "k"),
    ]


def test_multi_register_reads_see_one_state() -> None:
    history = h(
        (1, "invoke", "write", {"x": 1, "y": 1}),
        (1, "ok", "write", {"x": 1, "y": 1}),
        (2, "invoke", "read", {"x": None, "y": None}),
        (2, "ok", "read", {"x": 1, "y": 1}),
        (3, "invoke", "txn", [["read", "x", None], ["write", "y", 2]]),
        (3, "ok", "txn", [["read", "x", 1], ["write", "y", 2]]),
    )
    assert check(history, "multi-register").valid is True
    torn = h(
        (1, "invoke", "write", {"x": 1, "y": 1}),
        (1, "ok", "write", {"x": 1, "y": 1}),
        (2, "invoke", "read", None),
        (2, "ok", "read", {"x": 1, "y": None}),
    )
    assert check(torn, "multi-register").valid is False


# API and budgets ---------------------------------------------------------------------


def test_unknown_model_and_unknown_op_raise_model_error() -> None:
    with pytest.raises(ModelError, match="choose one of"):
        check(h(), "nope")
    with pytest.raises(ModelError, match="does not know"):
        check(h((1, "invoke", "frobnicate", 1), (1, "ok", "frobnicate", 1)), "register")


def test_model_object_is_accepted() -> None:
    assert check(h(), MODELS["etcd"]).details["model"] == "etcd"


def test_malformed_history_is_unknown_not_valid() -> None:
    result = check(h((1, "ok", "write", 1)), "register")
    assert result.valid == UNKNOWN
    assert "malformed" in result.details["reason"]


def test_details_and_empty_history() -> None:
    result = check(h(), "register")
    assert result.valid is True
    for key in ("valid", "model", "partitions", "steps", "model_steps", "configs", "ops"):
        assert key in result.details


@dataclass(frozen=True)
class Bag:
    """A test model without hints: ``add`` always succeeds, ``check`` never does."""

    name: str = "bag"

    def init(self) -> Hashable:
        return frozenset()

    def call(self, invoke: Op, completion: Op | None) -> Call | None:
        return Call((invoke.f, invoke.value), None, outcome(completion) == "ok")

    def step(self, state: Any, input: Any, output: Any) -> tuple[bool, Hashable]:
        f, v = input
        return (True, state | {v}) if f == "add" else (False, state)

    def partition(self, history: History) -> list[tuple[Any, History]]:
        return by_key(history)


def test_an_invalid_partition_is_found_beside_a_hopeless_one() -> None:
    """A partition that cannot finish (2^40 subsets of concurrent adds before an
    impossible check) must not hide a refutation in another, bigger one."""
    events = hopeless()
    for i in range(300):
        events += [(100, "invoke", "add", i, "quick"), (100, "ok", "add", i, "quick")]
    events += [(100, "invoke", "check", None, "quick"), (100, "ok", "check", None, "quick")]
    result = check(h(*events), Bag(), time_limit=20)
    assert result.valid is False
    assert result.details["counterexample"]["partition"] == "quick"
    assert result.details["elapsed_s"] < 5


def hopeless(key: str = "slow", n: int = 40) -> list[tuple[Any, ...]]:
    """``n`` concurrent adds, then a check that never succeeds: 2^n configurations."""
    events: list[tuple[Any, ...]] = [(p, "invoke", "add", p, key) for p in range(n)]
    events.append((n, "invoke", "check", None, key))
    events += [(p, "ok", "add", p, key) for p in range(n)]
    events.append((n, "ok", "check", None, key))
    return events


def test_time_budget_exhausted_is_unknown() -> None:
    result = check(h(*hopeless()), Bag(), time_limit=0.2)
    assert result.valid == UNKNOWN
    assert "time limit" in result.details["reason"]
    assert "time limit" in explain(result)[0]
    assert result.details["elapsed_s"] < 2


def test_memory_budget_exhausted_is_unknown() -> None:
    result = check(h(*hopeless()), Bag(), time_limit=20, max_configs=2000)
    assert result.valid == UNKNOWN
    assert "memory limit" in result.details["reason"]


def test_without_explanation_the_verdict_is_the_same_and_no_counterexample_is_built() -> None:
    history = h(
        (1, "invoke", "write", 1),
        (1, "ok", "write", 1),
        (3, "invoke", "read", None),
        (3, "ok", "read", 2),
    )
    full = check(history, "register")
    bare = check(history, "register", explain=False)
    assert full.valid is bare.valid is False
    assert "counterexample" in full.details and "counterexample" not in bare.details
    assert bare.summary == "Not linearizable (register model): 2 operations."
    assert explain(bare) == [bare.summary]
    assert 0 < bare.details["verdict_s"] <= bare.details["elapsed_s"]
