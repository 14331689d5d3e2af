"""``harness check PATH...``: run directories get all their checkers; history files get the
linearizability checker, with the model implied by their format unless ``--model`` says.

Per path one line: the verdict and the time to it (reading excluded, and the
counterexample's building too: ``explain_ms``), or the one-line error of a path that is not
a history (on stderr); then the total. With ``--json``, one JSON object per path per line
(``file``, ``valid``, ``check_ms``, ``explain_ms``, ``search``: ``compiled`` or ``plain``,
which search ran...; ``error`` for a bad one).
The explanation follows for invalid files. The exit code is 254 if any path was bad
input, else the worst verdict.

Each path has its own budget (``--time-limit``, ``--memory-limit``) for reading,
preparing and checking: out of it, the verdict is unknown with the reason. A check that
runs out of memory anyway ends at once with exit 255 and one line, written from a message
built beforehand (allocating then could fail again).
A run directory's ``results.json`` is written where ``--out`` says, else into the run
directory when it can be; either way the output says where, or why not.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from checkers import linearizability
from checkers.result import UNKNOWN, exit_code, worst
from core import compiled
from core.errors import EXIT_BAD_INPUT, EXIT_CRASH, HarnessError
from core.formats import Budget, FormatError, OutOfBudget, read_file
from core.store import RESULTS_FILE, write_json

# Printed as plain lines (no rich: its import is most of a small check's start-up), the
# verdict's word coloured as rich would on a terminal.
_COLOURS = {True: ("valid", 32), False: ("invalid", 31), UNKNOWN: ("unknown", 33)}
_OOM = "harness: out of memory while {} {}{}; try --memory-limit or fewer files\n"


def _model_of(workload: str) -> str | None:
    """The model of ``workload``'s histories, from the workload registry (imported only for
    a history whose test.json names its workload: checking a file should not load them)."""
    from workloads.registry import workload_models

    return workload_models().get(workload)


def _check_file(path: Path, model: str | None, budget: Budget, oom: list[bytes]) -> dict[str, Any]:
    """A history file's outcome: read within ``budget``, checked with what is left of it."""
    try:
        read = read_file(path, budget, model_of=_model_of)
    except FormatError as e:
        raise HarnessError(str(e)) from None
    history = read.history
    oom[0] = _OOM.format("checking", path, f" after {len(history)} ops").encode()
    chosen = model or read.model
    if not chosen:
        raise HarnessError(
            f"{path}: the format does not imply a model; pass --model (register, "
            "cas-register, etcd, kv, mutex, multi-register)"
        )
    left = budget.memory_left()
    started = time.perf_counter()
    try:
        result = linearizability.check(
            history,
            chosen,
            budget.time_left(),
            max_memory=linearizability.DEFAULT_MAX_MEMORY
            if left is None
            else min(left, linearizability.DEFAULT_MAX_MEMORY),
        )
    except linearizability.ModelError as e:
        raise HarnessError(f"{path}: {e}") from None
    ms = (time.perf_counter() - started) * 1000
    verdict_ms = result.details.get("verdict_s", ms / 1000) * 1000
    return {
        "file": str(path),
        "valid": result.valid,
        "check_ms": round(min(ms, verdict_ms), 3),
        "explain_ms": round(max(0.0, ms - verdict_ms), 3),
        "model": chosen,
        "search": "compiled" if compiled.active() else "plain",
        "ops": len(history),
        "summary": result.summary,
        "explanation": linearizability.explain(result) if result.valid is False else [],
        "details": result.details,
        "notes": list(read.notes),
    }


def _check_dir(
    path: Path, time_limit: float | None, budget: Budget, out: Path | None
) -> dict[str, Any]:
    """A run directory's outcome: all its checkers; its results.json written where it can."""
    from harness import analysis  # a run directory's checkers: not needed for a file

    started = time.perf_counter()
    results = analysis.check_run(path, time_limit, write=False, budget=budget)
    ms = (time.perf_counter() - started) * 1000
    explanation = [
        r.get("summary", "") for r in results["checkers"].values() if r.get("valid") is False
    ]
    return {
        "file": str(path),
        "valid": results["valid"],
        "check_ms": round(ms, 3),
        "explain_ms": 0.0,
        "model": "run",
        "ops": results["ops"],
        "summary": "",
        "explanation": explanation,
        "details": results,
        "notes": list(results.get("notes", [])),
        "written": _write_results(path, results, out),
    }


def _write_results(run_dir: Path, results: dict[str, Any], out: Path | None) -> str:
    """Write a run's results.json (into ``out``, else the run directory) and say where;
    where it cannot be written, say why and go on (a check needs no write access)."""
    target = run_dir / RESULTS_FILE
    if out is not None:
        where = run_dir.resolve()  # <test name>/<timestamp>: both, or two tests collide
        target = out / where.parent.name / where.name / RESULTS_FILE
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        write_json(target, results)
    except OSError as e:
        return f"results not written to {target} ({e.strerror}); pass --out DIR to keep them"
    return f"results: {target}"


def _unknown(path: Path, reason: str) -> dict[str, Any]:
    """The outcome of a path whose budget ran out before its verdict."""
    return {
        "file": str(path),
        "valid": UNKNOWN,
        "check_ms": 0.0,
        "explain_ms": 0.0,
        "model": "-",
        "ops": 0,
        "summary": f"Unknown: {reason}.",
        "explanation": [],
        "details": {"valid": UNKNOWN, "reason": reason},
        "notes": [],
    }


def check_path(
    path: Path,
    *,
    model: str | None,
    time_limit: float | None,
    memory_limit: int | None,
    out: Path | None,
    oom: list[bytes],
) -> dict[str, Any]:
    """One path's outcome; HarnessError (one line) if it is not a history or run
    directory. ``oom[0]`` holds the line to print if memory runs out meanwhile."""
    budget = Budget(time_limit, memory_limit)
    oom[0] = _OOM.format("reading or checking" if path.is_dir() else "reading", path, "").encode()
    try:
        if path.is_dir():
            return _check_dir(path, time_limit, budget, out)
        return _check_file(path, model, budget, oom)
    except OutOfBudget as e:
        return _unknown(path, str(e))


def check_paths(
    paths: list[str],
    *,
    model: str | None,
    time_limit: float | None,
    as_json: bool,
    memory_limit: int | None = None,
    out: str | None = None,
) -> int:
    """Check every path, each on its own line; the exit code (see the module's docstring)."""
    stream = sys.stdout
    colour = _colour_on(stream)
    verdicts = []
    bad = 0
    total_ms = 0.0
    oom = [b""]
    for p in paths:
        try:
            outcome = check_path(
                Path(p),
                model=model,
                time_limit=time_limit,
                memory_limit=memory_limit,
                out=None if out is None else Path(out),
                oom=oom,
            )
        except HarnessError as e:
            bad += 1
            _say_error(p, str(e), as_json)
            continue
        except MemoryError:
            os.write(2, oom[0])  # built beforehand: nothing to allocate now
            return EXIT_CRASH
        verdicts.append(outcome["valid"])
        total_ms += outcome["check_ms"]
        _say(outcome, as_json, stream, colour)
    overall = worst(verdicts)
    if not as_json:
        word = _word(overall, colour) if verdicts else "none"
        failed = f", {bad} not checked (bad input)" if bad else ""
        stream.write(
            f"total: {len(paths)} file(s), {total_ms:.1f} ms checking, verdict {word}{failed}\n"
        )
        stream.flush()
    return EXIT_BAD_INPUT if bad else exit_code(overall)


def _say_error(path: str, message: str, as_json: bool) -> None:
    sys.stdout.flush()
    if as_json:
        print(json.dumps({"file": path, "valid": None, "error": message}), flush=True)
    print(f"harness: {message}", file=sys.stderr, flush=True)


def _colour_on(out: TextIO) -> bool:
    """Whether to colour the verdicts: on a terminal, unless NO_COLOR is set (or TERM is
    dumb), as rich decides."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(os.environ.get("FORCE_COLOR")) or out.isatty()


def _word(valid: Any, colour: bool) -> str:
    word, code = _COLOURS.get(valid, (str(valid), 0))
    return f"\x1b[{code}m{word}\x1b[0m" if colour and code else word


def _say(out: dict[str, Any], as_json: bool, stream: TextIO, colour: bool) -> None:
    if as_json:
        slim = {k: v for k, v in out.items() if k != "details"}
        slim["reason"] = out["details"].get("reason")
        print(json.dumps(slim, default=str), file=stream, flush=True)
        return
    lines = [
        f"{out['file']}: {_word(out['valid'], colour)} "
        f"({out['check_ms']:.1f} ms, {out['ops']} ops, {out['model']})"
    ]
    lines += [f"    {line}" for line in out["explanation"]]
    if out["valid"] == UNKNOWN and out["details"].get("reason"):
        lines.append(f"    {out['details']['reason']}")
    lines += [f"    note: {note}" for note in out["notes"]]
    if out.get("written"):
        lines.append(f"    {out['written']}")
    stream.write("\n".join(lines) + "\n")
    stream.flush()
