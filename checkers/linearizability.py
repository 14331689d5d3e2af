"""The linearizability checker: is there a legal sequential order of the operations that
respects real time?

``check(history, model)`` returns a ``CheckResult`` whose ``valid`` is True, False or
"unknown" (out of time or memory, or a malformed history: never True without proof).
``explain(result)`` gives its plain sentences. Models are chosen by name from
``checkers.linear.models.MODELS`` (``register``, ``cas-register``, ``etcd``, ``kv``,
``mutex``, ``multi-register``) or passed as objects following ``checkers.linear.model``.

How: the model splits the history into independent partitions (by key); each partition
is searched with Wing & Gong's algorithm, Lowe's memoization and complete reductions
(``checkers.linear.search``); partitions are interleaved so that any invalid one is found
quickly, and the first invalid one ends the check (``checkers.linear.schedule``).

``details`` holds: ``valid``, ``model``, ``ops`` (operations searched), ``partitions``,
``partitions_checked``, ``steps`` (search nodes), ``model_steps`` (distinct model
transitions computed), ``configs`` (memoized configurations), ``elapsed_s``; ``reason``
when unknown; ``counterexample`` when invalid (see ``checkers.linear.counterexample``) and
``named_anomalies``, the one named anomaly it shows (``checkers.anomalies``: a stale read or a
lost update when ``checkers.linear.stale`` proves one, else non-linearizable), whose
sentence is the summary;
``counterexample_unknown`` says why an invalid verdict comes without its counterexample
(the budget ran out while building it);
``unknown_partitions`` lists partitions without a verdict; ``workers`` the processes that
shared the partitions out, when more than this one did; ``unique_values_partitions`` the
big partitions decided by the unique-values fast path (``checkers.linear.unique``).
``verdict_s`` is the time to the verdict; ``elapsed_s`` adds the counterexample's
(``explain=False`` skips building it); ``phases_s`` splits ``elapsed_s`` into ``partition``,
``prepare`` (the problems built), ``search`` and ``result`` (totals, the counterexample);
a history the register path decided has ``registers`` (its one pass) and ``result``, and
``path`` says ``registers``.
"""

from __future__ import annotations

import gc
import resource
import time
from typing import TYPE_CHECKING, Any, Final

from checkers.linear import registers
from checkers.linear.model import Model, ModelError
from checkers.linear.models import MODELS, get_model
from checkers.linear.models.register import RegisterModel
from checkers.result import UNKNOWN, CheckResult
from core.formats.budget import Budget, OutOfBudget
from core.history import History, MalformedHistory
from core.ops import NEMESIS

if TYPE_CHECKING:
    from checkers.anomalies import Anomaly
    from checkers.linear.prepare import Problem
    from checkers.linear.search import SearchResult
    from checkers.record import RunRecord

# What only an invalid or unknown verdict needs (naming the anomaly, the counterexample),
# the general path (which a register history the register path decides never runs) and
# the worker processes of a big history are imported where they are used: a check of one
# small valid file should not pay for them at start-up.

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "MODELS",
    "ModelError",
    "check",
    "check_record",
    "explain",
    "unknown_reason",
    "verdict_summary",
]

CHECKER: Final = "linearizability"
DEFAULT_MAX_MEMORY: Final = 1 << 30
"""Bytes of memoized configurations allowed across active searches (estimated)."""
DEFAULT_MODEL: Final = "register"
"""The model of a run whose options name none: a register that starts empty (nil) and
where a failed compare-and-set did not happen."""
DEFAULT_TIME_LIMIT: Final = 300.0
"""Seconds a run's check may search when it is given no limit."""
_PART: Final = "_invalid_partition"
"""A detail ``_general`` leaves for ``check``, which pops it: the invalid partition
(its label and its history)."""


def check(
    history: History,
    model: str | Model,
    time_limit: float | None = None,
    *,
    max_memory: int | None = DEFAULT_MAX_MEMORY,
    max_configs: int | None = None,
    explain: bool = True,
    parallel: bool = True,
    register_path: bool = True,
    budget: Budget | None = None,
    shrink: bool = False,
) -> CheckResult:
    """Check a history against a model within ``time_limit`` seconds (None: no limit)
    and a memory budget for memoized configurations: ``max_memory`` bytes (estimated)
    and, optionally, ``max_configs`` configurations; and within ``budget`` (the check's
    time and memory, ``harness check --time-limit --memory-limit``), which every search
    polls between steps and against which the structures they grow are accounted (by
    default, the address space's cap only, where the process has one). Out of any of
    them: "unknown", with the reason. With
    ``explain`` (the default), an invalid result carries its counterexample. With
    ``parallel`` (the default), a big history's partitions are shared out among worker
    processes when that pays (``checkers.linear.parallel``). With ``register_path`` (the
    default), a register model's history is decided by ``checkers.linear.registers``
    where it can be; the general path otherwise. With ``shrink``, an invalid result
    carries ``shrunk``: the fewest operations of its failing partition that still cannot
    be ordered (``checkers.linear.shrink``, within what is left of the time limit).

    Raises ModelError for an unknown model name or an operation the model does not know.
    The cyclic garbage collector is paused meanwhile: the check makes no reference
    cycles, and collections would traverse the whole history again and again.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        started = time.perf_counter()
        deadline = None if time_limit is None else started + time_limit
        m = get_model(model)
        try:
            if register_path and max_configs is None and isinstance(m, RegisterModel):
                # A small history's search cannot run away: no cap to look up for it.
                small = budget is None and registers.small(history.ops)
                guard = None if small else _or_cap(budget)
                d = registers.decide(
                    history.ops, m.initial, m.fail_cas_happened, m.nil_read_any, deadline, guard
                )
                if d is not None:
                    meter = _or_cap(budget) if d.valid is False else None  # for its explanation
                    result = _decided(history, m, d, started, deadline, max_memory, explain, meter)
                    if not shrink or d.valid:
                        return result
                    label = d.invalid_label
                    part = History(op for op in history if op.is_client and op.key == label)
                    return _shrunk(result, history, m, (label, part), deadline, meter)
            meter = _or_cap(budget)
            result = _general(
                history, m, started, deadline, max_configs, max_memory, explain, parallel, meter
            )
            found = result.details.pop(_PART, None)
            if not shrink or found is None:
                return result
            return _shrunk(result, history, m, found, deadline, meter)
        except OutOfBudget as e:
            return _out_of_budget(m.name, str(e))
    finally:
        if paused:
            gc.enable()


def check_record(record: RunRecord) -> CheckResult:
    """The run's client operations against the model its options name (``model``;
    a register that starts empty by default), within the check's time limit. A named
    anomaly that a rule the run recorded of its service allows (test.json's
    ``service_rules``) is given that rule as its cause, with the evidence its clients
    recorded of the servers that answered (``checkers.classify.classify_read``). An
    invalid result carries its shrunk counterexample (``shrunk``)."""
    model = record.option("model", DEFAULT_MODEL)
    history = record.history.client_ops()
    limit = record.time_limit(DEFAULT_TIME_LIMIT)
    reused = None
    if record.proven:
        history, reused = _resumed(history, model, record, limit)
    result = check(history, model, limit, budget=record.limits.budget, shrink=True)
    return _caused(result if reused is None else _with_reused(result, reused), record)


def _resumed(
    history: History, model: str, record: RunRecord, limit: float | None
) -> tuple[History, dict[str, Any]]:
    """``history`` without the keys proven from where the check during the run left them
    (``checkers.linear.resume``), and what was reused (half the time limit at most)."""
    from checkers.linear.resume import resume

    m = get_model(model)
    budget = record.limits.budget

    def valid(sub: History, seconds: float | None) -> Any:
        return check(sub, m, seconds, explain=False, parallel=False, budget=budget).valid

    seconds = DEFAULT_TIME_LIMIT / 2 if limit is None else limit / 2
    return resume(history, m, record.proven, valid, seconds)


def _with_reused(result: CheckResult, reused: dict[str, Any]) -> CheckResult:
    """``result`` of the keys not proven during the run, with those that were
    (``reused``): its operations those searched, its partitions all, ``resumed`` saying
    how many were checked from where the check during the run had proven them."""
    d = {**result.details, "resumed": reused}
    n = reused["partitions"]
    if not n or "partitions" not in d:  # nothing reused, or unknown before any partition
        return CheckResult(result.checker, result.valid, result.summary, d, result.applicable)
    d["ops"] = d.get("ops", 0) + reused["searched"]
    d["partitions"] += n
    d["partitions_checked"] = d.get("partitions_checked", 0) + n
    summary = result.summary
    if result.valid is True:
        before = reused["ops"] - reused["searched"]
        summary = verdict_summary(True, d, []).rstrip(".") + (
            f" searched ({n} of {d['partitions']} partitions from where the check during the"
            f" run had proven them: {before:,} operations before it)."
        )
    return CheckResult(result.checker, result.valid, summary, d, result.applicable)


def _caused(result: CheckResult, record: RunRecord) -> CheckResult:
    """``result`` with its first named anomaly's cause, when a recorded rule explains it:
    ``classification`` beside the anomaly, and its sentence (the summary) the story's
    claim, then the cause."""
    from checkers.anomalies import KEY

    found = result.details.get(KEY) if result.valid is False else None
    if not found or not found[0].get("claim"):
        return result
    a = found[0]
    rule = next(
        (
            r
            for r in record.test.get("service_rules") or ()
            if isinstance(r, dict) and r.get("explains") == a.get("kind")
        ),
        None,
    )
    if rule is None:
        return result
    from checkers.anomalies import named
    from checkers.classify import classify_read
    from checkers.served import ServedIndex

    served = ServedIndex(record.events)
    roles = {x.get("role"): x for x in a.get("involved") or ()}

    def answer(role: str) -> Any:
        x = roles.get(role) or {}
        return served.lookup(x.get("process"), x.get("invoke_time"), x.get("complete_time"))

    c = classify_read(
        rule, str(record.option("target", "the service")), answer("read"), answer("overwrite")
    )
    sentence = named(a["kind"], f"{a['claim']} Cause: {c.label}: {c.evidence}.", a.get("key"))
    caused = {**a, "sentence": sentence, "classification": c.to_dict()}
    details = {**result.details, KEY: [caused, *found[1:]]}
    return CheckResult(result.checker, result.valid, sentence, details, result.applicable)


def _general(
    history: History,
    m: Model,
    started: float,
    deadline: float | None,
    max_configs: int | None,
    max_memory: int | None,
    explain: bool,
    parallel: bool,
    meter: Budget | None,
) -> CheckResult:
    """The check by the general path: partitions, problems, searches. OutOfBudget past
    ``meter``."""
    from checkers.linear.prepare import partitions, problem
    from checkers.linear.schedule import SKIPPED
    from checkers.linear.schedule import Budget as Limits
    from checkers.linear.solve import Solved

    budget = Limits(deadline, max_configs, max_memory, meter)
    parts = partitions(history, m)
    partitioned = time.perf_counter()
    workers = 1
    if parallel:  # not for a counterexample's search: its module is not imported then
        from checkers.linear.parallel import workers_for

        workers = workers_for(len(history), len(parts))
    try:
        probs: list[Problem] = []
        for label, part in parts:
            if deadline is not None and time.perf_counter() > deadline:
                spent = time.perf_counter() - started
                limit = None if meter is None else meter.time_limit
                return _out_of_time(m.name, spent, len(probs), len(parts), limit)
            if meter is not None:
                meter.poll("preparing the partitions", len(probs))
            probs.append(problem(part, m, label))
        prepared = time.perf_counter()
        if workers > 1:
            from checkers.linear.parallel import check_problems

            solved = None
            outcomes = check_problems(probs, m, budget, explain, workers)
        else:
            solved = Solved(probs, m, budget)
            outcomes = solved.outcomes
    except MalformedHistory as e:
        reason = f"malformed history: {e}"
        bad = {"valid": UNKNOWN, "model": m.name, "reason": reason}
        return CheckResult(CHECKER, UNKNOWN, f"Unknown: {reason}.", bad)
    searched = time.perf_counter()
    # The worst verdict (invalid, then unknown, then valid) and the totals, in one pass.
    results = [o.result for o in outcomes]
    valid: Any = True
    invalid = -1
    checked = steps = model_steps = configs = ops = fast = 0
    for i, r in enumerate(results):
        v = r.valid
        if v is True:
            checked += 1
        elif v is False:
            checked += 1
            if invalid < 0:
                invalid = i
                valid = False
        elif valid is True:
            valid = UNKNOWN
        steps += r.steps
        model_steps += r.model_steps
        configs += r.configs
        ops += outcomes[i].ops
        fast += outcomes[i].fast
    details: dict[str, Any] = {
        "valid": valid,
        "model": m.name,
        "ops": ops,
        "partitions": len(parts),
        "partitions_checked": checked,
        "steps": steps,
        "model_steps": model_steps,
        "configs": configs,
    }
    details["verdict_s"] = round(time.perf_counter() - started, 6)
    if workers > 1:
        details["workers"] = workers
    if fast:
        details["unique_values_partitions"] = fast
    if invalid >= 0:
        details[_PART] = parts[invalid]  # for ``check``, which pops it
    if invalid >= 0 and explain:
        from checkers.anomalies import KEY

        try:  # the verdict stands without its counterexample when the budget runs out
            cx = solved.explain(invalid) if solved is not None else outcomes[invalid].counterexample
            if cx is not None:
                details["counterexample"] = cx
                details[KEY] = [_name(probs[invalid], m, cx).to_dict()]
        except OutOfBudget as e:
            details["counterexample_unknown"] = str(e)
    if checked < len(results):
        from checkers.linear.counterexample import jsonable

        unknown = [
            {"partition": jsonable(parts[i][0]), "reason": r.reason}
            for i, r in enumerate(results)
            if r.valid == UNKNOWN and r.reason != SKIPPED
        ]
        if unknown:
            details["unknown_partitions"] = unknown
            if valid == UNKNOWN:
                details["reason"] = unknown_reason(unknown, len(parts))
    ended = time.perf_counter()
    details["elapsed_s"] = round(ended - started, 6)
    details["phases_s"] = {
        "partition": partitioned - started,
        "prepare": prepared - partitioned,
        "search": searched - prepared,
        "result": ended - searched,
    }
    return CheckResult(CHECKER, valid, verdict_summary(valid, details, results), details)


def _decided(
    history: History,
    m: Model,
    d: registers.Decided,
    started: float,
    deadline: float | None,
    max_memory: int | None,
    explain: bool,
    meter: Budget | None,
) -> CheckResult:
    """The result of a history the register path decided. An invalid partition is
    searched again by the general path, alone, for its counterexample and the anomaly it
    shows (the verdict stands whatever that search finds in the time and memory left)."""
    verdict_s = round(time.perf_counter() - started, 6)
    details: dict[str, Any] = {
        "valid": d.valid,
        "model": m.name,
        "ops": d.ops,
        "partitions": d.partitions,
        "partitions_checked": d.checked,
        "steps": d.steps,
        "model_steps": d.steps,
        "configs": d.configs,
        "verdict_s": verdict_s,
        "path": "registers",
    }
    if not d.valid and explain:
        from checkers.anomalies import KEY

        label = d.invalid_label
        part = History(op for op in history if op.process != NEMESIS and op.key == label)
        try:
            sub = _general(
                part, m, time.perf_counter(), deadline, None, max_memory, True, False, meter
            )
        except OutOfBudget as e:
            details["counterexample_unknown"] = str(e)
        else:
            for key in ("counterexample", KEY):
                if key in sub.details:
                    details[key] = sub.details[key]
    ended = time.perf_counter()
    details["elapsed_s"] = round(ended - started, 6)
    # The register path reads, partitions and searches in one pass: one phase, named so.
    details["phases_s"] = {"registers": verdict_s, "result": ended - started - verdict_s}
    return CheckResult(CHECKER, d.valid, verdict_summary(d.valid, details, []), details)


def _shrunk(
    result: CheckResult,
    history: History,
    m: Model,
    found: tuple[Any, History],
    deadline: float | None,
    meter: Budget | None,
) -> CheckResult:
    """The invalid ``result`` of ``history`` with ``shrunk`` in its details: its invalid
    partition (``found``: its label and history) shrunk (``checkers.linear.shrink``)
    within the check's ``deadline`` and ``meter``, and confirmed by the plain search; or
    ``shrunk_error``, why there is none."""
    from checkers.ddmin import bound
    from checkers.linear.counterexample import jsonable
    from checkers.linear.shrink import shrink as shrink_partition

    label, part = found
    meter = bound(meter)  # at a run's end too: never past a memory limit

    def fails(sub: History, seconds: float | None) -> bool | None:
        got = check(sub, m, seconds, explain=False, parallel=False, budget=meter).valid
        return None if got == UNKNOWN else got is False

    s = shrink_partition(part, m, label, fails, deadline, meter)
    total = sum(1 for op in history if op.type == "invoke" and op.process != NEMESIS)
    if not s.confirmed:
        how = "did not" if s.confirmed is False else "could not, within its steps,"
        why = (
            f"the plain search {how} confirm that the {s.operations} operations it shrank "
            "to cannot be ordered"
        )
        return _with(result, shrunk_error=why)
    shrunk = {
        "key": jsonable(label),
        "operations": s.operations,
        "of": total,
        "key_operations": s.of,
        "ops": [op.to_dict() for op in s.ops],
        "minimal": s.minimal,
        "checks": s.checks,
        "elapsed_s": s.elapsed_s,
        "confirmed_by": "the plain search",
        "sentence": shrunk_sentence(s.operations, total, s.why_not),
    }
    if s.why_not:
        shrunk["not_minimal"] = s.why_not
    return _with(result, shrunk=shrunk)


def shrunk_sentence(operations: int, of: int, why_not: str = "") -> str:
    """``4 of 1,204 operations still cannot be ordered`` (and why it is not minimal)."""
    words = "operation" if operations == 1 else "operations"
    said = f"{operations:,} of {of:,} {words} still cannot be ordered"
    return f"{said}, {why_not}" if why_not else said


def _with(result: CheckResult, **more: Any) -> CheckResult:
    """``result`` with ``more`` in its details."""
    details = {**result.details, **more}
    return CheckResult(result.checker, result.valid, result.summary, details, result.applicable)


def _out_of_time(
    model: str, spent: float, prepared: int, n: int, limit: float | None = None
) -> CheckResult:
    """The result of a check whose time ran out while preparing its partitions (``spent``
    seconds into it: the limit it was given may be what was left of a larger one, the
    budget's ``limit``, which reading the file took its share of: named when known)."""
    out = f"out of the time limit ({limit:g} s)" if limit else f"out of time after {spent:.3g} s"
    reason = (
        f"{out} while preparing the partitions ({prepared} of {n} prepared"
        f"{f', {spent:.3g} s into the check' if limit else ''}; raise --time-limit)"
    )
    details = {"valid": UNKNOWN, "model": model, "reason": reason, "partitions": n}
    return CheckResult(CHECKER, UNKNOWN, f"Unknown ({model} model): {reason}.", details)


def _or_cap(budget: Budget | None) -> Budget | None:
    """``budget``, or for a check given none, the address space's cap where the process
    has one (None otherwise: nothing to poll; the searches keep the deadline)."""
    if budget is not None:
        return budget
    if resource.getrlimit(resource.RLIMIT_AS)[0] == resource.RLIM_INFINITY:
        return None
    return Budget()


def _out_of_budget(model: str, reason: str) -> CheckResult:
    """The result of a check that ran out of its budget (time or memory) before a
    verdict."""
    details = {"valid": UNKNOWN, "model": model, "reason": reason}
    return CheckResult(CHECKER, UNKNOWN, f"Unknown ({model} model): {reason}.", details)


def _name(prob: Problem, m: Model, cx: dict[str, Any]) -> Anomaly:
    """The anomaly an invalid partition shows: a stale read or lost update when real time
    and the model prove one, else the counterexample's first sentence, bounded."""
    from checkers.linear.stale import name_partition, nonlinearizable

    failed = (cx.get("op") or {}).get("index")
    return name_partition(prob, m, failed) or nonlinearizable(cx)


def explain(result: CheckResult) -> list[str]:
    """Plain sentences for a result of ``check``: for an invalid one, the named anomaly's
    sentence, then the counterexample's next sentences, each bounded (the full chain
    stays in ``details["counterexample"]``)."""
    from checkers.anomalies import KEY, bounded

    d = result.details
    if result.valid is False and d.get(KEY):
        rest = (d.get("counterexample") or {}).get("sentences", [])[1:]
        return [str(d[KEY][0]["sentence"]), *(bounded(str(x)) for x in rest[:2])]
    return [result.summary]


def unknown_reason(unknown: list[dict[str, Any]], n: int) -> str:
    """The reason of a check whose ``unknown`` partitions (each a ``partition`` and its
    ``reason``) of ``n`` had no verdict: the first one's, and how many there were."""
    first = unknown[0]["reason"]
    if n == 1:
        return str(first)
    return f"{len(unknown)} of {n} partitions without a verdict: {first}"


def verdict_summary(valid: Any, d: dict[str, Any], results: list[SearchResult]) -> str:
    """The one-line summary of a result ``valid`` with the details ``d`` (its model, ops,
    partitions, named anomalies or reason), as the check and a streamed check say it."""
    parts = d["partitions"]
    where = f" in {parts} partitions" if parts != 1 else ""
    if valid is True:
        return f"Linearizable ({d['model']} model): {d['ops']} operations{where}."
    if valid is False:
        from checkers.anomalies import KEY

        if d.get(KEY):
            return str(d[KEY][0]["sentence"])
        return f"Not linearizable ({d['model']} model): {d['ops']} operations{where}."
    return f"Unknown ({d['model']} model): {d.get('reason', 'no verdict')}."
