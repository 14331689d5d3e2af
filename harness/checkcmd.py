"""``harness check PATH...``: run directories get all their checkers; history files get the
linearizability checker, with the model implied by their format unless ``--model`` says.

Per path one line: the verdict and the time to it (reading excluded, and the
counterexample's building too: ``explain_ms``), or the one-line error of a path that is not
a history (on stderr); then the total. With ``--json``, one JSON object per path per line
(``file``, ``valid``, ``check_ms``, ``explain_ms``, ``search``: ``compiled`` or ``plain``,
which search ran; ``read``: ``in memory`` or ``streamed``, how a history file was read,
``harness.checkstream``...; ``error`` for a bad one).
The explanation follows for invalid files. The exit code is 254 if any path was bad
input, else the worst verdict.

Each path has its own budget (``--time-limit``, ``--memory-limit``) for reading,
preparing and checking: out of it, the verdict is unknown with the reason. A check that
runs out of memory anyway ends at once with exit 255 and one line, written from a message
built beforehand (allocating then could fail again).
A run directory's ``results.json`` is written where ``--out`` says, else into the run
directory when it can be; either way the output says where, or why not. It is never
written through a symbolic link (``core.writes``): a link in its way is said on stderr
and makes the exit code 254, the verdict still said.

A Jepsen store directory (``history.edn`` and Jepsen's own ``results.edn``) is checked as
its ``history.edn`` is, with the model ``--model`` names or its format implies; Jepsen's
verdict is said under ours (``jepsen said valid? true``).

With ``--html OUT`` each path also gets its report page (``harness.report``: where, see
``report_targets``): a history file's timeline per key, its longest partial
linearizations step by step and its counterexample; a run directory's run report. The
report machinery is imported only then: a plain check does not pay for it. A page that
cannot be written is said on stderr and makes the exit code 254.

With ``--shrink OUT`` (one path), an invalid history's failing partition is shrunk to the
fewest operations that still cannot be ordered (``checkers.linear.shrink``), within the
path's budget, and written to OUT in the input's format (``core.formats.writers``; a run
directory's as our JSONL), never through a link: ``shrunk: 4 of 1,204 operations still
cannot be ordered: OUT``. ``harness check OUT`` gives the same verdict (with the same
``--model``: a JSONL history's model comes from the test.json beside it, which OUT has
not, so the line names the model to pass). A valid or unknown history writes nothing and
says so; OUT that cannot be written is said on stderr and makes the exit code 254.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TextIO

from checkers import linearizability
from checkers.result import UNKNOWN, CheckResult, exit_code, worst
from core import compiled
from core.errors import EXIT_BAD_INPUT, EXIT_CRASH, HarnessError
from core.formats import Budget, FormatError, OutOfBudget, Read, read_file
from core.formats.errors import FilePath
from core.history import History

if TYPE_CHECKING:
    from pathlib import Path

    from core.formats.jepsen_store import JepsenVerdict
    from core.ops import Op
    from harness.checkstream import Streaming

# Printed as plain lines (no rich: its import is most of a small check's start-up), the
# verdict's word coloured as rich would on a terminal.
_COLOURS = {True: ("valid", 32), False: ("invalid", 31), UNKNOWN: ("unknown", 33)}
_OOM = "harness: out of memory while {} {}{}; try --memory-limit or fewer files\n"


def _model_of(workload: str) -> str | None:
    """The model of ``workload``'s histories, from the workload registry (imported only for
    a history whose test.json names its workload: checking a file should not load them)."""
    from workloads.workload_registry import workload_models

    return workload_models().get(workload)


class _Checked(NamedTuple):
    """A history file checked: what its outcome says and its report page shows."""

    outcome: dict[str, Any]
    read: Read
    model: str
    result: CheckResult


def _check_file(
    path: FilePath,
    model: str | None,
    budget: Budget,
    oom: list[bytes],
    shrink: bool = False,
    streaming: Streaming | None = None,
) -> _Checked:
    """A history file's outcome: read within ``budget``, checked with what is left of it
    (with ``shrink``, its counterexample shrunk too); streamed where ``streaming`` and its
    size call for it (``harness.checkstream``)."""
    said: tuple[str, ...] = ()
    try:
        if streaming is not None:
            from harness.checkstream import check_streamed

            s = check_streamed(path, model, budget, streaming, _model_of, shrink)
            if s.result is not None:
                outcome = _outcome(path, s.model, s.result, s.check_ms, s.ops, s.notes)
                read = Read(History(()), s.model, "jsonl", s.notes)
                return _Checked({**outcome, "read": "streamed"}, read, s.model, s.result)
            said = s.notes
        read = read_file(path, budget, model_of=_model_of)
    except FormatError as e:
        raise HarnessError(str(e)) from None
    if shrink:
        _can_write(path, read.format)
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
            budget=budget,
            shrink=shrink,
        )
    except linearizability.ModelError as e:
        raise HarnessError(f"{_where(path, read, e.op)}: {e}") from None
    ms = (time.perf_counter() - started) * 1000
    outcome = _outcome(path, chosen, result, ms, len(history), (*read.notes, *said))
    return _Checked({**outcome, "read": "in memory"}, read, chosen, result)


def _outcome(
    path: FilePath, model: str, result: CheckResult, ms: float, ops: int, notes: tuple[str, ...]
) -> dict[str, Any]:
    """A checked history file's outcome: ``result`` of its ``ops`` by ``model``, checked
    in ``ms`` milliseconds (its counterexample's building included: said apart)."""
    verdict_ms = result.details.get("verdict_s", ms / 1000) * 1000
    return {
        "file": str(path),
        "valid": result.valid,
        "check_ms": round(min(ms, verdict_ms), 3),
        "explain_ms": round(max(0.0, ms - verdict_ms), 3),
        "model": model,
        "search": "compiled" if compiled.active() else "plain",
        "ops": ops,
        "summary": result.summary,
        "explanation": linearizability.explain(result) if result.valid is False else [],
        "details": result.details,
        "notes": list(notes),
    }


def _can_write(path: FilePath, fmt: str) -> None:
    """Refuse (one line) ``--shrink`` of a history in a format without a writer."""
    from core.formats.writers import WRITERS

    if fmt not in WRITERS:
        raise HarnessError(
            f"{path}: --shrink cannot write the {fmt} format; it writes {', '.join(WRITERS)}"
        )


def _shrink_to(outcome: dict[str, Any], fmt: str, model: str, given: bool, out: Path) -> None:
    """Write the shrunk history of a checked path's ``outcome`` to ``out`` in ``fmt``
    (``core.writes``: never through a link) and say so (``shrunk``), or why not
    (``shrunk_error``: not written, the exit code 254; else ``shrunk``: nothing to
    shrink). ``given``: whether ``--model`` named the model (else OUT's check needs it,
    where its format does not imply it)."""
    from core.formats import DEFAULT_MODELS
    from core.formats.writers import render
    from core.ops import Op
    from core.writes import write_text

    details = outcome["details"]
    if outcome["model"] == "run":
        details = details["checkers"].get(linearizability.CHECKER) or {}
        model = str(details.get("model", model))
    shrunk = details.get("shrunk")
    if outcome["valid"] is not False or not isinstance(shrunk, dict):
        why = details.get("shrunk_error") or (
            "the history is linearizable"
            if outcome["valid"] is True
            else "no linearizability violation to shrink"
        )
        outcome["shrunk"] = f"not shrunk: {why}; {out} not written"
        return
    ops = [Op.from_dict(d) for d in shrunk["ops"]]
    try:
        write_text(out, render(fmt, ops))
    except (HarnessError, OSError) as e:
        outcome["shrunk_error"] = f"shrunk history not written: {getattr(e, 'strerror', e)}"
        return
    line = f"shrunk: {shrunk['sentence']}: {out}"
    if not given and DEFAULT_MODELS.get(fmt) != model:
        line += f" (check it with --model {model})"
    outcome["shrunk"] = line


def _where(path: FilePath, read: Read, op: Op | None) -> str:
    """``path:LINE`` of the op a model could not read (``path`` alone without one)."""
    if op is None:
        return str(path)
    from core.formats import op_line  # only an error needs it

    line = op_line(path, read.format, read.history.ops, op)
    return str(path) if line is None else f"{path}:{line}"


def _check_dir(
    path: Path, time_limit: float | None, budget: Budget, out: Path | None
) -> dict[str, Any]:
    """A run directory's outcome: all its checkers; its results.json written where it can."""
    from checkers.attribution import attribution_line
    from harness import analysis  # a run directory's checkers: not needed for a file

    started = time.perf_counter()
    results = analysis.check_run(path, time_limit, write=False, budget=budget)
    ms = (time.perf_counter() - started) * 1000
    explanation = [
        r.get("summary", "") for r in results["checkers"].values() if r.get("valid") is False
    ]
    explanation += _broken_evidence(results)
    explanation += _unknowns(results)
    if isinstance(results.get("attribution"), dict):
        explanation.append(f"whose: {attribution_line(results['attribution'])}")
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
        "changed": list(results.get("changed_since_run", [])),
        **_write_results(path, results, out),
    }


def _broken_evidence(results: dict[str, Any]) -> list[str]:
    """One line per broken record of a run (``checkers.evidence``), naming the checkers
    it made unknown."""
    out = []
    for sentence in (results.get("evidence") or {}).get("broken", {}).values():
        names = [
            name for name, r in results["checkers"].items() if sentence in (r.get("evidence") or ())
        ]
        if names:
            out.append(f"unknown ({', '.join(names)}): {sentence}")
    return out


def _unknowns(results: dict[str, Any]) -> list[str]:
    """One line per checker that could not decide for a reason of its own (out of time or
    memory, a crash): ``linearizability: Unknown (register model): out of the memory
    limit ...``. One that a broken record made unknown is said with that record
    (``_broken_evidence``)."""
    return [
        f"{name}: {r.get('summary', '')}"
        for name, r in results["checkers"].items()
        if r.get("valid") == UNKNOWN and not r.get("evidence")
    ]


def _write_results(run_dir: Path, results: dict[str, Any], out: Path | None) -> dict[str, str]:
    """Write a run's results.json (into ``out``, else the run directory) and say where
    (``written``); where it cannot be written, say why and go on (a check needs no write
    access). A link in the way is refused (``results_error``: the exit code is 254)."""
    from core.store import RESULTS_FILE, write_json  # a run directory's: not a file's
    from core.writes import WriteRefused

    target, root = run_dir / RESULTS_FILE, None
    if out is not None:
        where = run_dir.resolve()  # <test name>/<timestamp>: both, or two tests collide
        target, root = out / where.parent.name / where.name / RESULTS_FILE, out
    try:
        if root is not None and not os.path.lexists(root):
            root.mkdir(parents=True)  # the folder named: its own links are the user's
        write_json(target, results, root=root, parents=True)
    except WriteRefused as e:
        return {"results_error": f"results not written: {e}"}
    except OSError as e:
        return {
            "written": f"results not written to {target} ({e.strerror}); pass --out DIR to "
            "keep them"
        }
    return {"written": f"results: {target}"}


def _unknown(path: FilePath, reason: str) -> dict[str, Any]:
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
    path: FilePath,
    *,
    model: str | None,
    time_limit: float | None,
    memory_limit: int | None,
    out: Path | None,
    oom: list[bytes],
    html: Path | None = None,
    shrink: Path | None = None,
    streaming: Streaming | None = None,
) -> dict[str, Any]:
    """One path's outcome; HarnessError (one line) if it is not a history, run directory
    or Jepsen store. ``oom[0]`` holds the line to print if memory runs out meanwhile.
    With ``html``, its report page is written there: the outcome's ``report`` says where,
    or ``report_error`` why not. With ``shrink``, its shrunk history is written there
    (``_shrink_to``). A history file is streamed as ``streaming`` says
    (``harness.checkstream``; never with ``html``: its page draws the whole history).
    A history file's path goes by ``os.path`` (``FilePath``); a directory's by ``pathlib``."""
    budget = Budget(time_limit, memory_limit)
    is_dir = os.path.isdir(path)
    oom[0] = _OOM.format("reading or checking" if is_dir else "reading", path, "").encode()
    checked = None
    fmt = "jsonl"  # a run directory's shrunk history: our JSONL
    try:
        if is_dir:
            outcome, fmt = _check_directory(
                path, model, time_limit, budget, out, oom, html, shrink is not None, streaming
            )
        else:
            if streaming is not None:  # its scratch folder: --spill-dir, else --out, else TMPDIR
                on = streaming.mode if html is None else False
                streaming = streaming._replace(mode=on, spill=streaming.spill or out)
            checked = _check_file(path, model, budget, oom, shrink is not None, streaming)
            outcome, fmt = checked.outcome, checked.read.format
    except OutOfBudget as e:
        outcome = _unknown(path, str(e))
        if not os.path.isdir(path):  # a streamed check says its own (``harness.checkstream``)
            outcome["read"] = "in memory"
        if html is not None:
            outcome["report"] = "no report: the history was not read within the budget"
    if checked is not None and html is not None:
        _report(outcome, html, lambda: _file_page(path, checked))
    if shrink is not None:
        _shrink_to(outcome, fmt, outcome["model"], model is not None, shrink)
    return outcome


def _check_directory(
    named: FilePath,
    model: str | None,
    time_limit: float | None,
    budget: Budget,
    out: Path | None,
    oom: list[bytes],
    html: Path | None,
    shrink: bool,
    streaming: Streaming | None,
) -> tuple[dict[str, Any], str]:
    """A directory's outcome (a Jepsen store's, or a run directory's: all its checkers)
    and the format of its history (``check_path``)."""
    from pathlib import Path

    path = Path(named)
    if _is_store(path):
        return _check_store(path, model, budget, oom, html, shrink)
    outcome = _check_dir(path, time_limit, budget, out)
    if streaming is not None and streaming.mode:
        outcome["notes"].append("--stream reads history files; a run directory is read in memory")
    if html is not None:
        _report(outcome, html, lambda: _run_page(path, outcome["details"]))
    return outcome, "jsonl"


def _is_store(path: Path) -> bool:
    """Whether the directory ``path`` is a Jepsen store (imported only for a directory)."""
    from core.formats.jepsen_store import is_store

    return is_store(path)


def _check_store(
    path: Path,
    model: str | None,
    budget: Budget,
    oom: list[bytes],
    html: Path | None,
    shrink: bool,
) -> tuple[dict[str, Any], str]:
    """A Jepsen store's outcome, its history.edn checked, Jepsen's verdict beside it; and
    the format of its history."""
    from core.formats.jepsen_store import STORE_HISTORY, read_verdict

    checked = _check_file(path / STORE_HISTORY, model, budget, oom, shrink)
    jepsen = read_verdict(path, budget)
    checked.outcome.update(file=str(path), jepsen={"valid": jepsen.valid, "said": jepsen.said})
    if html is not None:
        _report(checked.outcome, html, lambda: _file_page(path, checked, jepsen))
    return checked.outcome, checked.read.format


def _file_page(path: FilePath, checked: _Checked, jepsen: JepsenVerdict | None = None) -> str:
    """The report page of a checked history file (``path``: as named)."""
    from pathlib import Path

    from harness.report import FileCheck, render_file_report

    read = checked.read
    return render_file_report(
        FileCheck(
            Path(path), read.history, read.format, checked.model, checked.result, read.notes, jepsen
        )
    )


def _run_page(run_dir: Path, results: dict[str, Any]) -> str:
    """The run report of a run directory, with the results just checked."""
    from harness.report import render_report

    return render_report(run_dir, results)


def _report(outcome: dict[str, Any], target: Path, render: Callable[[], str]) -> None:
    """Write the page ``render()`` makes to ``target``; the outcome says where
    (``report``), or why it is not written (``report_error``)."""
    from harness.report import write_page

    try:
        outcome["report"] = f"report: {write_page(target, render())}"
    except HarnessError as e:
        outcome["report_error"] = f"report not written: {e}"


def check_paths(
    paths: list[str],
    *,
    model: str | None,
    time_limit: float | None,
    as_json: bool,
    memory_limit: int | None = None,
    out: str | None = None,
    html: str | None = None,
    shrink: str | None = None,
    streaming: Streaming | None = None,
) -> int:
    """Check every path, each on its own line; the exit code (see the module's docstring).
    ``html``: ``--html OUT``, checked before any path is; ``shrink``: ``--shrink OUT``,
    for one path only; ``streaming``: how history files are read."""
    if shrink is not None and len(paths) != 1:
        print(
            f"harness: --shrink writes one history: give one PATH, not {len(paths)}",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    pages: list[Path | None] = [None] * len(paths)
    if html is not None:
        from harness.report import report_targets

        pages = list(report_targets(paths, html))
    stream = sys.stdout
    colour = _colour_on(stream)
    verdicts = []
    bad = unwritten = 0
    total_ms = 0.0
    oom = [b""]
    for p, page in zip(paths, pages, strict=True):
        try:
            outcome = check_path(
                as_named(p),
                model=model,
                time_limit=time_limit,
                memory_limit=memory_limit,
                out=_path(out),
                oom=oom,
                html=page,
                shrink=_path(shrink),
                streaming=streaming,
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
        for refused in ("results_error", "report_error", "shrunk_error"):
            if refused in outcome:
                unwritten += 1
                print(f"harness: {p}: {outcome[refused]}", file=sys.stderr, flush=True)
    overall = worst(verdicts)
    if not as_json:
        word = _word(overall, colour) if verdicts else "none"
        failed = f", {bad} not checked (bad input)" if bad else ""
        failed += f", {unwritten} file(s) not written" if unwritten else ""
        stream.write(
            f"total: {len(paths)} file(s), {total_ms:.1f} ms checking, verdict {word}{failed}\n"
        )
        stream.flush()
    return EXIT_BAD_INPUT if bad or unwritten else exit_code(overall)


def as_named(path: str) -> str:
    """``path`` as ``pathlib`` says it (``str(Path(path))``: no ``.`` part, no empty one,
    no trailing slash, a leading ``//`` kept), without importing it: the outcome's
    ``file`` and every message name a file so, as before the readers took names."""
    root = "//" if path[:2] == "//" and path[:3] != "///" else "/" if path[:1] == "/" else ""
    return root + "/".join(part for part in path.split("/") if part and part != ".") or "."


def _path(named: str | None) -> Path | None:
    """The ``pathlib.Path`` of an option's folder or file, when given (imported only then)."""
    if named is None:
        return None
    from pathlib import Path

    return Path(named)


def report_store(store: Path, model: str | None) -> int:
    """``harness report STORE``: a Jepsen store checked as ``harness check`` checks it,
    its report page written into it (``report.html``); the exit code is the check's."""
    from core.formats.budget import default_memory_limit
    from harness.report import REPORT_FILE

    return check_paths(
        [str(store)],
        model=model,
        time_limit=None,
        as_json=False,
        memory_limit=default_memory_limit(),
        html=str(store / REPORT_FILE),
    )


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
        f"({out['check_ms']:.1f} ms, {out['ops']} ops, {out['model']}"
        f"{', streamed' if out.get('read') == 'streamed' else ''})"
    ]
    lines += [f"    {line}" for line in out["explanation"]]
    if out["valid"] == UNKNOWN and out["details"].get("reason"):
        lines.append(f"    {out['details']['reason']}")
    lines += [f"    note: {note}" for note in out["notes"]]
    lines += [f"    changed: {line}" for line in out.get("changed", ())]
    if out.get("jepsen"):
        lines.append(f"    {out['jepsen']['said']}")
    lines += [f"    {out[k]}" for k in ("written", "report", "shrunk") if out.get(k)]
    stream.write("\n".join(lines) + "\n")
    stream.flush()
