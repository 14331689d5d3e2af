"""Checking a run directory: load its records, run the workload's checkers, write results.

The same code serves the end of ``harness run`` and ``harness check RUN_DIR``, so a run
cut short by a crash is checked exactly as a finished one. Checkers are pure functions of
the ``RunRecord`` (``check_record``); which ones run is decided by the workload recorded
in ``test.json`` (``workloads.workload_registry``), and the fault-effect checker runs on every run.
A checker's verdict counts only on records that hold together (``checkers.evidence``:
what reading each file found is in ``RunRecord.readings``); the record files' digests
taken at the run let a later check say which file changed since.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from checkers import evidence, faults, linearizability, load
from checkers.anomalies import KEY, other
from checkers.attribution import attribution_line
from checkers.linear.model import ModelError
from checkers.record import Checker, Limits, Reading, RunRecord
from checkers.result import (
    INTERRUPTED,
    UNKNOWN,
    CheckResult,
    exit_code,
    overall,
    verdict_word,
)
from core import digests
from core.errors import HarnessError
from core.formats import Budget, FormatError, op_line
from core.formats.jsonl import read_history_jsonl, truncation_note
from core.store import (
    EVENTS_FILE,
    HISTORY_FILE,
    RESOURCE_FILE,
    RESULTS_FILE,
    TEST_FILE,
    read_json,
    read_records,
    write_json,
)
from harness.recorded import checked_test

MAX_RUN_NS = 7 * 24 * 3600 * 10**9
"""A run's history spans at most a week: a time beyond is corrupt, and would make the
per-second statistics (one bucket a second) as big as the number."""

log = logging.getLogger("harness.check")


def load_record(run_dir: Path, budget: Budget | None = None) -> RunRecord:
    """Read a run directory's records (strictly: ``core.formats``); a missing side log
    is empty. HarnessError (one line) for a record that cannot be read; OutOfBudget when
    ``budget`` runs out while reading the history. The truncated last line a killed run
    leaves in its history is left out (``RunRecord.notes`` says so)."""
    if not os.path.lexists(run_dir / HISTORY_FILE):
        raise HarnessError(
            f"{run_dir} has no {HISTORY_FILE}: pass a run directory, or a Jepsen store "
            "directory (history.edn)"
        )
    try:
        history, cut = read_history_jsonl(run_dir / HISTORY_FILE, budget, MAX_RUN_NS)
        test = read_json(run_dir / TEST_FILE) if os.path.lexists(run_dir / TEST_FILE) else {}
        test = checked_test(test, run_dir / TEST_FILE)

        readings = {evidence.HISTORY: Reading(HISTORY_FILE, True, len(history), cut)}

        def side(kind: str, name: str) -> list[dict[str, Any]]:
            p = run_dir / name
            if not os.path.lexists(p):
                readings[kind] = Reading(name, False)
                return []
            rows, cut_line = read_records(p)
            readings[kind] = Reading(name, True, len(rows), cut_line)
            if cut_line is not None:
                notes.append(truncation_note(p, cut_line))
            return rows

        notes: list[str] = []
        if cut is not None:
            notes.append(truncation_note(run_dir / HISTORY_FILE, cut))
        # A service log test.json names is the run's word that its service kept one; one
        # filled in from the target's spec (an older run) may never have been collected.
        said = "service_log" in test
        test = recorded_facts(test)
        log = service_log(test)
        kept = log is not None and (said or os.path.lexists(run_dir / log))
        service = side(evidence.SERVICE, log) if kept and log is not None else []
        resource = side(evidence.RESOURCE, RESOURCE_FILE)
        events = side(evidence.EVENTS, EVENTS_FILE)
        record = RunRecord(history, resource, events, test, service, notes=notes, readings=readings)
    except FormatError as e:
        raise HarnessError(str(e)) from None
    return record


def recorded_facts(test: dict[str, Any]) -> dict[str, Any]:
    """``test`` (a test.json) with the facts about its run that runs recorded before
    they were written to test.json filled in from its target's spec:
    ``linearizable_locks`` (False for a target the registry no longer has) and
    ``service_log`` (None for it). ``test`` itself is left as it is."""
    if "linearizable_locks" in test and "service_log" in test:
        return test
    from clusters.target_registry import TARGETS

    options = test.get("options")
    name = options.get("target") if isinstance(options, dict) else None
    spec = TARGETS.get(name) if isinstance(name, str) else None
    return {
        "linearizable_locks": spec is not None and spec.linearizable_locks,
        "service_log": spec.service_log if spec is not None else None,
        **test,
    }


def service_log(test: dict[str, Any]) -> str | None:
    """Where the run's service wrote its own event log, relative to the run directory
    (test.json's ``service_log``, or its target's spec for an older run); None: none.
    HarnessError (one line) for a recorded path outside the run directory."""
    log = recorded_facts(test)["service_log"]
    if log is None:
        return None
    if not isinstance(log, str) or Path(log).is_absolute() or ".." in Path(log).parts:
        raise HarnessError(f"{TEST_FILE}: service_log {log!r} is not a path in the run directory")
    return log


def checkers_for(record: RunRecord) -> list[Checker]:
    """The checkers of the run's workload (a run that names none: linearizability of its
    client operations), plus the fault-effect checker, and the load floor's when the run
    asked for one (``--min-rate``)."""
    from workloads.workload_registry import WORKLOADS

    name = record.options.get("workload")
    workload = WORKLOADS.get(name) if isinstance(name, str) else None
    checks = workload.checks(record) if workload else [linearizability.check_record]
    floor = [load.check_record] if record.option("min_rate") is not None else []
    return [*checks, faults.check_record, *floor]


def check_run(
    run_dir: Path,
    time_limit: float | None = None,
    *,
    write: bool = True,
    budget: Budget | None = None,
    at_run: bool = False,
    proven: Mapping[Any, Any] | None = None,
) -> dict[str, Any]:
    """Check a run directory and (with ``write``) write its ``results.json``; returns the
    results. ``budget`` bounds reading the history (OutOfBudget).

    Each checker whose records are broken (``checkers.evidence``: missing, cut short,
    fewer than the others imply) is unknown with the reason. ``at_run``: the check that
    ends the run, which records the digest of each record file (``record_digests``);
    any later check keeps the run's digests, recomputes them and says which file changed
    since (``changed_since_run``). ``proven``: what the check during the run proved
    (``RunRecord.proven``), which the check that ends the run starts from. The verdict is
    always the one the files as they are now give; a change is said beside it, not folded
    into it: the evidence checks above are what judge whether the records still hold
    together."""
    run_digests = None if at_run else _run_digests(run_dir)
    record = load_record(run_dir, budget)
    if budget is not None:
        time_limit = budget.time_left()
    record = replace(record, limits=Limits(time_limit, budget), proven=proven or {})
    checks = checkers_for(record)
    gone = _test_gone(run_dir, run_digests)
    if gone:  # every checker rests on test.json (which ones run, on which model): none runs
        results = [
            evidence.unknown_for(CheckResult(_name_of(c), UNKNOWN), [gone], ran=False)
            for c in checks
        ]
    else:
        results = _run_checkers(run_dir, record, checks)
    kinds = [k for r in results for k in evidence.needs(r.checker)]
    broken = evidence.problems(record, kinds)
    results = [evidence.guard(r, broken) for r in results]
    if gone:
        broken = {**broken, "test": gone}
    valid = overall(results)
    out: dict[str, Any] = {
        "valid": valid,
        "verdict": verdict_word(valid),
        "test": record.test.get("name"),
        "status": record.test.get("status"),
        "ops": len(record.history),
        "checkers": {r.checker: r.to_dict() for r in results},
    }
    stop = interruption(record.test)
    if stop is not None:
        # What was recorded was checked: a violation in it is real, but finding none
        # proves less than the run set out to, so it is never valid.
        out["interrupted"] = stop
        out["checked_valid"] = valid
        if valid is not False:
            out["valid"], out["verdict"] = UNKNOWN, INTERRUPTED
    blamed = first_attribution(out["checkers"])
    if blamed is not None:
        out["attribution"] = blamed  # whose doing the first violation was (checkers.blame)
    if isinstance(record.test.get("load"), dict):
        out["load"] = record.test["load"]  # the rate achieved, the harness's CPU for it
    if record.notes:
        out["notes"] = list(record.notes)
    said = {"broken": broken, "unchecked": evidence.unchecked(record, kinds)}
    if any(said.values()):
        out["evidence"] = {k: v for k, v in said.items() if v}
    out.update(_digests_of(run_dir, record, run_digests, at_run))
    if write:
        write_json(run_dir / RESULTS_FILE, out)
    return out


def _run_digests(run_dir: Path) -> dict[str, str] | None:
    """The digests the run recorded in its results.json (None: none, or no results.json
    that can be read: then nothing is compared)."""
    path = run_dir / RESULTS_FILE
    if not os.path.lexists(path):
        return None
    try:
        return digests.recorded(read_json(path))
    except (FormatError, OSError):
        return None


def _test_gone(run_dir: Path, run: dict[str, str] | None) -> str | None:
    """The sentence saying the run's test.json is gone (None: it is there, or the run
    recorded no digest of it). Without it the run's workload, model, target and options
    are not known: its checkers ran on defaults that may not be the run's, so none of
    their verdicts is the run's."""
    if run is None or TEST_FILE not in run or os.path.lexists(run_dir / TEST_FILE):
        return None
    return (
        f"{TEST_FILE} is gone since the run, so its workload, model and options are not "
        "known (put it back to check the run)"
    )


def _digests_of(
    run_dir: Path, record: RunRecord, run: dict[str, str] | None, at_run: bool
) -> dict[str, Any]:
    """results.json's digest fields: at the run, the record files' digests; later, the
    digests the run recorded (``run``), kept as they were, and the files changed since.
    A run that recorded none (older, or killed before its check) is left without: a
    digest taken now would not be the run's."""
    names = [TEST_FILE, *(r.file for r in record.readings.values())]
    if not at_run and run is None:
        return {}
    # every file the run recorded is compared, read by this check or not (without
    # test.json, the target's own records are not read, yet they are still there)
    names += [n for n in run or () if n not in names and digests.inside(n)]
    try:
        now = digests.digests(run_dir, names)
    except FormatError as e:
        return {"changed_since_run": [f"the records' digests could not be taken: {e}"]}
    if run is None:
        return {"record_digests": now}
    changed = digests.changes(run, now)
    return {"record_digests": run, **({"changed_since_run": changed} if changed else {})}


def _run_checkers(run_dir: Path, record: RunRecord, checks: list[Checker]) -> list[CheckResult]:
    """Each checker's result; a crash is its unknown, never a verdict."""
    results: list[CheckResult] = []
    for checker in checks:
        started = time.perf_counter()
        try:
            r = checker(record)
        except MemoryError:
            raise  # out of memory is exit 255 with its line built beforehand, not a verdict
        except Exception as e:  # a checker crash is not a verdict
            if isinstance(e, ModelError):
                _refuse_unreadable(run_dir, record, e)
            name = _name_of(checker)
            r = CheckResult(name, "unknown", f"the checker crashed: {type(e).__name__}: {e}")
        results.append(r)
        r.details.setdefault("check_ms", round((time.perf_counter() - started) * 1000, 3))
        log.info("checker %s: %s in %s ms", r.checker, verdict_word(r.valid), r.details["check_ms"])
        if r.valid is False and KEY not in r.details:  # every violation carries a kind
            told = r.details.get("violations") or [r.summary]
            r.details[KEY] = [other(r.checker, str(v)).to_dict() for v in told]
    return results


def _refuse_unreadable(run_dir: Path, record: RunRecord, e: ModelError) -> None:
    """HarnessError (one line naming the line) when the model could not read an op of
    the run's history (a register read returning a map): that is no history, and no
    verdict is drawn from it. An op a checker made itself is left to be its crash."""
    line = None if e.op is None else op_line(run_dir, "jsonl", record.history.ops, e.op)
    if line is not None:
        raise HarnessError(f"{run_dir / HISTORY_FILE}:{line}: {e}") from None


def _name_of(checker: Checker) -> str:
    """A checker's name for a crash: its module's (every ``check_record`` is named alike)."""
    name = getattr(checker, "__name__", "checker")
    return checker.__module__.rpartition(".")[2] if name == "check_record" else name


def interruption(test: dict[str, Any]) -> dict[str, Any] | None:
    """How a run was cut short (signal, seconds into the run, words), from its test.json;
    None for a run that finished. A run still "running" is one whose harness died; a
    "crashed" one says how (``harness.orchestrate``: a full disk, say)."""
    status = test.get("status")
    if status == "running":
        return {
            "signal": None,
            "at_s": None,
            "text": "the harness stopped before the run finished (killed or crashed)",
        }
    if status in ("crashed", "failed"):
        crash = test.get(status)
        at_s = crash.get("at_s") if isinstance(crash, dict) else None
        error = crash.get("error") if isinstance(crash, dict) else None
        at = f" at {at_s:.1f} s" if isinstance(at_s, (int, float)) else ""
        what = "the harness crashed" if status == "crashed" else "the run could not go on"
        return {"signal": None, "at_s": at_s, "text": f"{what}{at}: {error}"}
    if status != "interrupted":
        return None
    info = test.get("interrupted")
    signame = info.get("signal") if isinstance(info, dict) else info
    at_s = info.get("at_s") if isinstance(info, dict) else None
    text = f"interrupted by {signame or 'a signal'}"
    if isinstance(at_s, (int, float)):
        text += f" at {at_s:.1f} s"
        total = (test.get("options") or {}).get("time_limit")
        recovery = (test.get("options") or {}).get("recovery_time") or 0
        if isinstance(total, (int, float)):
            text += f" of {total + recovery:.0f} s"
    return {"signal": signame, "at_s": at_s, "text": text}


def summary(results: dict[str, Any], run_dir: Path) -> dict[str, Any]:
    """A run's results.json without the checkers' details: where the run is, its verdict,
    status and exit code, each checker's verdict and sentence (``harness run --json``, a
    suite's ``--json``)."""
    checkers = results.get("checkers") or {}
    out = {
        "run_dir": str(run_dir),
        "report": str(run_dir / "report.html"),
        **{k: v for k, v in results.items() if k != "checkers"},
        "exit_code": exit_code_of(results),
        "checkers": {
            name: {"valid": r.get("valid"), "summary": r.get("summary")}
            for name, r in checkers.items()
            if isinstance(r, dict)
        },
    }
    return out


def exit_code_of(results: dict[str, Any]) -> int:
    return exit_code(results["valid"])


_STYLES = {
    "valid": "bold green",
    "invalid": "bold red",
    "unknown": "bold yellow",
    INTERRUPTED: "bold yellow",
}


def _verdict(word: str) -> str:
    return f"[{_STYLES[word]}]{word.upper() if word == 'invalid' else word}[/]"


def first_attribution(checkers: dict[str, Any]) -> dict[str, Any] | None:
    """Whose doing the first named violation was, when its checker said
    (``checkers.attribution``; a lock library's run)."""
    for r in checkers.values():
        for anomaly in (r.get(KEY) or []) if isinstance(r, dict) else []:
            if isinstance(anomaly, dict) and isinstance(anomaly.get("attribution"), dict):
                return dict(anomaly["attribution"])
    return None


def verdict_line(results: dict[str, Any]) -> str:
    """The run's verdict in one line, saying when and how it was cut short, and whose
    doing its first violation was when that is known."""
    word = str(results.get("verdict") or verdict_word(results["valid"]))
    stop = results.get("interrupted")
    blamed = results.get("attribution")
    if stop is None and isinstance(blamed, dict):
        return f"verdict: {_verdict(word)} - {escape(attribution_line(blamed))}"
    if stop is None:
        return f"verdict: {_verdict(word)}"
    if word == INTERRUPTED:
        return (
            f"verdict: [{_STYLES[word]}]{stop['text']}[/]: no violation in what was "
            "recorded, but the run did not finish, so it proves less than asked "
            f"(exit {exit_code_of(results)})"
        )
    return f"verdict: {_verdict(word)} ({stop['text']}; the violation is in what was recorded)"


def console_line(r: dict[str, Any]) -> str:
    """What a person reads first of a checker's result: the named anomaly's sentence (and
    how many more there are: the checker's ``violations_total`` when it names only the
    first few) for a violation, else its summary."""
    named = r.get(KEY)
    if r.get("valid") is not False or not named:
        return str(r.get("summary", ""))
    total = r.get("violations_total")
    more = (total if isinstance(total, int) and total >= len(named) else len(named)) - 1
    tail = f" ({more} more violation{'s' * (more > 1)}: see the report)" if more else ""
    return f"{named[0]['sentence']}{tail}"


def print_results(results: dict[str, Any], console: Console) -> None:
    """One line per checker with its summary (its first violation, named), each record
    file changed since the run, then the verdict."""
    for name, r in results["checkers"].items():
        word = "n/a" if r.get("applicable") is False else verdict_word(r["valid"])
        shown = "[bold]n/a[/]" if word == "n/a" else _verdict(word)
        console.print(f"  {name}: {shown} - ", end="", highlight=False, soft_wrap=True)
        console.print(console_line(r), highlight=False, soft_wrap=True, markup=False)
    for line in results.get("changed_since_run") or ():
        console.print(f"  changed: {line}", highlight=False, soft_wrap=True, markup=False)
    console.print(verdict_line(results), highlight=False, soft_wrap=True)


def report_run(run_dir: str, console: Console) -> int:
    """Re-check a run directory and print its results."""
    d = Path(run_dir)
    if not d.is_dir():
        raise HarnessError(
            f"{run_dir} is not a directory: pass a run directory, e.g. results/latest"
        )
    results = check_run(d)
    print_results(results, console)
    return exit_code_of(results)
