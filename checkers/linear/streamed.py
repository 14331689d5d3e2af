"""The linearizability check of a register history split by key on disk
(``core.formats.spill``): each key's partition read back and checked alone, one at a
time, so that a history bigger than memory is checked in the memory of its biggest key.

A register model's keys are independent (P-compositionality): the history is
linearizable iff every key's partition is. Each is checked by
``checkers.linearizability.check`` as the in-memory check checks it: the register path
(``registers.py``, its C twin), the general search where that path gives up. The result
is the one the in-memory check gives the same file. The keys are ranked as the register
path ranks its partitions (fewest kept operations first, then in order of appearance);
the first invalid one in that order is the one named, searched again by the general path
for its counterexample and the anomaly it shows (and shrunk, when asked); the totals
(operations, partitions, partitions checked, steps, configurations) are counted as that
path counts them. Where the register path gave up on a key, the in-memory check would
have searched the whole history by the general path, which names the first invalid key
in order of appearance: so does this one, and its totals are the sums over the keys.

One budget holds for the whole file (``--time-limit``, ``--memory-limit``). Out of it
before an invalid key was found: unknown, with the reason; after one: invalid, that key,
with how many keys were left unchecked (``keys_unchecked``).
"""

from __future__ import annotations

import time
from typing import Any, Final, NamedTuple, Protocol

from checkers import linearizability
from checkers.linear.model import Model
from checkers.linear.models import get_model
from checkers.linearizability import shrunk_sentence, unknown_reason, verdict_summary
from checkers.result import UNKNOWN, CheckResult
from core.formats.budget import Budget, OutOfBudget
from core.history import History

__all__ = ["Keys", "check_keys"]

DOING: Final = "checking the keys one at a time"


class Keys(Protocol):
    """A history split by key: its keys in order of first appearance, each key's ops
    (without the nemesis's) read back by ``part``; ``invocations``: its clients'
    invocations (what a shrunk history is said to be a part of)."""

    labels: list[Any]
    invocations: int

    def part(self, label: Any) -> History: ...


class _Key(NamedTuple):
    """One key checked: the operations its check weighed, its place in the file, its
    label and result."""

    kept: int
    order: int
    label: Any
    result: CheckResult


def check_keys(
    keys: Keys, model: str | Model, budget: Budget, *, shrink: bool = False
) -> CheckResult:
    """The check of every key of ``keys`` against ``model`` within ``budget``, one key in
    memory at a time (see the module's docstring). With ``shrink``, an invalid result
    carries ``shrunk`` as the in-memory check's does."""
    m = get_model(model)
    started = time.perf_counter()
    done: list[_Key] = []
    stopped = ""
    for order, label in enumerate(keys.labels):
        try:
            budget.check(DOING)
            part = keys.part(label)
        except OutOfBudget as e:
            stopped = str(e)
            break
        r = linearizability.check(
            part, m, budget.time_left(), explain=False, parallel=False, budget=budget
        )
        done.append(_Key(r.details.get("ops", 0), order, label, r))
        del part
    registers = all(k.result.details.get("path") == "registers" for k in done)
    ranked = sorted(done) if registers else done  # (kept, order): the register path's order
    rank, first = next(
        ((i, k) for i, k in enumerate(ranked) if k.result.valid is False), (len(ranked), None)
    )
    if first is None and stopped:
        return _unknown(m.name, stopped, len(keys.labels), len(done))
    counted = ranked if first is None or not registers else ranked[: rank + 1]
    details: dict[str, Any] = {
        "valid": first is None,
        "model": m.name,
        "ops": sum(k.kept for k in done),
        "partitions": len(keys.labels),
        "partitions_checked": sum(1 for k in counted if k.result.valid is not UNKNOWN),
        "steps": sum(k.result.details.get("steps", 0) for k in counted),
        "model_steps": sum(k.result.details.get("model_steps", 0) for k in counted),
        "configs": sum(k.result.details.get("configs", 0) for k in counted),
        "verdict_s": round(time.perf_counter() - started, 6),
    }
    if registers:
        details["path"] = "registers"
    if stopped:
        details["keys_unchecked"] = f"{len(keys.labels) - len(done)} keys not checked: {stopped}"
    summary = ""
    if first is not None:
        summary = _explain(keys, m, first.label, budget, shrink, details)
    else:
        unknown = [k for k in done if k.result.valid == UNKNOWN]
        if unknown:
            from checkers.linear.counterexample import jsonable

            listed = [
                {"partition": jsonable(k.label), "reason": k.result.details.get("reason")}
                for k in unknown
            ]
            details.update(
                valid=UNKNOWN, unknown_partitions=listed, reason=unknown_reason(listed, len(done))
            )
    details["elapsed_s"] = round(time.perf_counter() - started, 6)
    valid = details["valid"]
    return CheckResult(
        linearizability.CHECKER, valid, summary or verdict_summary(valid, details, []), details
    )


def _explain(
    keys: Keys, m: Model, label: Any, budget: Budget, shrink: bool, details: dict[str, Any]
) -> str:
    """Put the invalid key ``label``'s counterexample and named anomaly (and, with
    ``shrink``, its shrunk history) in ``details``, searched as the in-memory check
    searches them; the summary they make ("" where there is none)."""
    from checkers.anomalies import KEY

    left = budget.memory_left()
    limit = linearizability.DEFAULT_MAX_MEMORY
    explained = linearizability.check(
        keys.part(label),
        m,
        budget.time_left(),
        max_memory=limit if left is None else min(left, limit),
        budget=budget,
        shrink=shrink,
    )
    got = explained.details
    for name in ("counterexample", KEY, "counterexample_unknown", "shrunk_error"):
        if name in got:
            details[name] = got[name]
    shrunk = got.get("shrunk")
    if shrunk is not None:  # said of the whole history, as the in-memory check says it
        of = keys.invocations
        sentence = shrunk_sentence(shrunk["operations"], of, shrunk.get("not_minimal", ""))
        details["shrunk"] = {**shrunk, "of": of, "sentence": sentence}
    return explained.summary if KEY in got else ""


def _unknown(model: str, reason: str, partitions: int, checked: int) -> CheckResult:
    """The result of a check whose budget ran out before any key was found invalid."""
    details = {
        "valid": UNKNOWN,
        "model": model,
        "reason": reason,
        "partitions": partitions,
        "partitions_checked": checked,
    }
    return CheckResult(
        linearizability.CHECKER, UNKNOWN, f"Unknown ({model} model): {reason}.", details
    )
