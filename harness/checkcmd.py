"""``harness check PATH...``: run directories get all their checkers; history files get the
linearizability checker, with the model implied by their format unless ``--model`` says.

Per file one line: the verdict and the time to it (reading excluded, and the
counterexample's building too: ``explain_ms``); then the total. With ``--json``, one JSON
object per file per line (``file``, ``valid``, ``check_ms``, ``explain_ms``...).
The explanation follows for invalid files. The exit code is the worst verdict.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from checkers import linearizability
from checkers.result import UNKNOWN, exit_code, worst
from harness import analysis
from harness.errors import HarnessError
from harness.formats import FormatError, read_history

_WORDS = {True: "[green]valid[/]", False: "[red]invalid[/]", UNKNOWN: "[yellow]unknown[/]"}


def _check_file(path: Path, model: str | None, time_limit: float | None) -> dict[str, Any]:
    try:
        history, default_model = read_history(path)
    except FormatError as e:
        raise HarnessError(str(e)) from None
    chosen = model or default_model
    if not chosen:
        raise HarnessError(
            f"{path}: the format does not imply a model; pass --model (register, "
            "cas-register, etcd, kv, mutex, multi-register)"
        )
    started = time.perf_counter()
    try:
        result = linearizability.check(history, chosen, time_limit)
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
        "ops": len(history),
        "summary": result.summary,
        "explanation": linearizability.explain(result) if result.valid is False else [],
        "details": result.details,
    }


def _check_dir(path: Path, time_limit: float | None) -> dict[str, Any]:
    started = time.perf_counter()
    results = analysis.check_run(path, time_limit)
    ms = (time.perf_counter() - started) * 1000
    explanation = [r.get("summary", "") for r in results["checkers"].values()
                   if r.get("valid") is False]
    return {"file": str(path), "valid": results["valid"], "check_ms": round(ms, 3),
            "explain_ms": 0.0, "model": "run", "ops": results["ops"], "summary": "",
            "explanation": explanation, "details": results}


def check_paths(
    paths: list[str], *, model: str | None, time_limit: float | None, as_json: bool,
    console: Console,
) -> int:
    verdicts = []
    total_ms = 0.0
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise HarnessError(f"{p}: no such file or directory")
        if path.is_dir() and not (path / "history.jsonl").exists():
            raise HarnessError(f"{p}: a directory without history.jsonl; pass a run directory "
                               "or history files")
        out = _check_dir(path, time_limit) if path.is_dir() else _check_file(
            path, model, time_limit)
        verdicts.append(out["valid"])
        total_ms += out["check_ms"]
        if as_json:
            slim = {k: v for k, v in out.items() if k != "details"}
            slim["reason"] = out["details"].get("reason")
            print(json.dumps(slim, default=str), flush=True)
            continue
        console.print(f"{escape(str(path))}: {_WORDS.get(out['valid'], out['valid'])} "
                      f"({out['check_ms']:.1f} ms, {out['ops']} ops, {out['model']})",
                      highlight=False, soft_wrap=True)
        for line in out["explanation"]:
            console.print(f"    {escape(line)}", highlight=False, soft_wrap=True)
        if out["valid"] == UNKNOWN and out["details"].get("reason"):
            reason = escape(str(out["details"]["reason"]))
            console.print(f"    {reason}", highlight=False, soft_wrap=True)
    overall = worst(verdicts)
    if not as_json:
        console.print(f"total: {len(paths)} file(s), {total_ms:.1f} ms checking, verdict "
                      f"{_WORDS.get(overall, overall)}", highlight=False, soft_wrap=True)
    return exit_code(overall)
