"""Suites: a TOML file of runs, each with the outcome it should have.

A suite file::

    [suite]
    name = "smoke"
    [defaults]            # any `harness run` option, for every run
    time_limit = 10
    [[run]]
    name = "etcd-lock-fenced"
    target = "etcd"
    workload = "lock"
    nemesis = ["client-pause"]
    fencing = true
    expect = "valid"      # valid | invalid | unknown
    [[run]]
    name = "etcd-lock-unfenced"
    ...
    expect = "invalid"
    violation = "stale-write-accepted"   # optional: which anomaly must be found
    cause = "lease-expired-while-paused" # optional: the cause one of them must be given
    [[run]]
    name = "sim-stale-read-rate"
    repeat = 5            # optional: run it 5 times, seeds seed, seed+1, ...
    pass_rule = "most"    # all (default) | most | any: how many runs must be valid
    repeat_seed = "next"  # next (default) | same: the seed of each run
    [[run]]
    name = "etcd-lock-kill"
    server_version = ["bookworm", "trixie"]  # a run per release: etcd-lock-kill-bookworm...

A run with ``repeat = N`` is one scenario run N times (``harness.repeat``): its outcome
is the pass rule's (valid when it passed; else invalid when a run was, else unknown), its
JUnit test case one whose message gives the rate (``2/5 invalid``), and a violation or
cause asked for must be found in one of its invalid runs.

``expect`` may list outcomes that all meet it (``["valid", "invalid"]``: a run whose
service allows an anomaly it rarely shows); ``violation`` and ``cause`` are then what an
invalid outcome must have been found for (``cause = "documented-rule"``: the service's
documented rule, ``checkers.classify``).

``harness suite run FILE`` runs them in order, keeps going after a failure, and writes
into ``<out>/suite-<suite>/<UTC timestamp>/``: every run's directory, ``index.html``, the comparison
matrix (``matrix.html``), ``junit.xml`` and ``suite.json``. It exits non-zero only when an
outcome differs from its expectation.
"""

from __future__ import annotations

import fnmatch
import os
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from checkers import election, fencing, ids, mutex
from checkers.anomalies import KEY
from checkers.classify import CAUSES
from core.errors import HarnessError
from core.formats.errors import FormatError
from core.formats.files import read_text
from core.option_checks import OptionError, check_name
from core.options import FIELDS, OLD_EXTRA, RunOptions
from core.store import read_json, utc_stamp, write_json
from core.writes import make_dirs
from harness.repeat import DEFAULT_PASS_RULE, PASS_RULES, REPEATS, SEED_MODES, Rate
from harness.report import Case, headline
from harness.terminal import Terminal, heading
from harness.validate import Checked, check_run, decide

EXPECTATIONS = ("valid", "invalid", "unknown")


def verdict_word(valid: Any) -> str:
    return "valid" if valid is True else "invalid" if valid is False else "unknown"


def _checker(results: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = results.get("checkers", {}).get(name, {})
    return found


def _holdings(results: dict[str, Any]) -> dict[str, Any]:
    """The mutual-exclusion result of a lock run, or the election result of an election."""
    return _checker(results, mutex.NAME) or _checker(results, election.NAME)


def _invalid(name: str) -> Callable[[dict[str, Any]], bool]:
    return lambda r: _checker(r, name).get("valid") is False


# Named anomalies a suite can require, each a predicate on results.json.
VIOLATIONS: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    "stale-write-accepted": (
        "the protected resource accepted a write from a holder that had lost the lock",
        lambda r: bool(_holdings(r).get("stale_accepted")),
    ),
    "stale-write-rejected": (
        "fencing rejected a stale holder's write",
        lambda r: bool(_holdings(r).get("stale_rejected")),
    ),
    "two-holders": (
        "two clients held the lock at once while the earlier lease was still valid",
        lambda r: (
            any(o.get("kind") == "lease-valid" for o in _holdings(r).get("overlaps", []))
            or _checker(r, "mutex-linearizability").get("valid") is False
        ),
    ),
    "nonlinearizable": (
        "the history is not linearizable (e.g. a stale read)",
        _invalid("linearizability"),
    ),
    "stale-read": (
        "a read returned a value that had been overwritten",
        _invalid("linearizability"),
    ),
    "fencing-violation": ("the service granted a token that did not increase", _invalid("fencing")),
    "election-violation": (
        "two leaders in one epoch, or epochs that did not increase",
        _invalid(election.NAME),
    ),
    "duplicate-id": (
        "an id handed out twice",
        lambda r: bool(_checker(r, ids.NAME).get("duplicate_ids")),
    ),
}


class SuiteError(HarnessError):
    """A suite file that cannot be run; the message names the file, run and fix."""


@dataclass(frozen=True)
class SuiteRun:
    """One run of a suite: its options and what it should find."""

    name: str
    options: RunOptions
    expect: str = "valid"
    """The outcome it must have, or several joined by " or " (``expected``)."""
    violation: str | None = None
    cause: str | None = None
    repeat: int | None = None
    """Runs of the scenario (``harness.repeat``); None: one run."""
    pass_rule: str = DEFAULT_PASS_RULE
    repeat_seed: str = "next"
    checked: Checked | None = None
    """The run checked and decided when the suite was loaded, what it runs (None: loaded
    only to learn what it needs, or an outcome read back)."""

    @property
    def expected(self) -> tuple[str, ...]:
        """The outcomes that meet the expectation."""
        return tuple(self.expect.split(" or "))


def found_causes(results: dict[str, Any]) -> set[str]:
    """The causes ``checkers.classify`` gave the overlaps and accepted stale writes of a
    lock or election run, its fencing numbers granted again, the anomalies of the
    linearizability checker and the duplicate ids a power cut explains."""
    h = _holdings(results)
    found = [g.get("classification") for g in h.get("overlap_groups", ())]
    found += [g.get("accepted_because") for g in h.get("overlap_groups", ())]
    found += [s.get("classification") for s in h.get("stale_accepted", ())]
    found += [a.get("classification") for a in _checker(results, fencing.NAME).get("anomalies", ())]
    found += [a.get("classification") for a in _checker(results, "linearizability").get(KEY, ())]
    found += [d.get("classification") for d in _checker(results, ids.NAME).get("duplicates", ())]
    return {c["cause"] for c in found if isinstance(c, dict) and c.get("cause")}


@dataclass
class Outcome:
    """What one run found, against what it should have."""

    run: SuiteRun
    valid: Any = None
    met: bool = False
    why: str = ""
    run_dir: str | None = None
    seconds: float = 0.0
    error: str | None = None
    reason: str = ""
    """The run's own one sentence (its verdict and the first reason for it)."""
    started: datetime | None = None
    """When the run began (UTC), for its JUnit testcase."""
    rate: Rate | None = None
    """A repeated run's runs and pass rule (``SuiteRun.repeat``)."""

    def to_dict(self) -> dict[str, Any]:
        repeat = {"repeat": self.rate.to_dict()} if self.rate is not None else {}
        return {
            **repeat,
            "name": self.run.name,
            "expect": self.run.expect,
            "violation": self.run.violation,
            "valid": self.valid,
            "met": self.met,
            "why": self.why,
            "run_dir": self.run_dir,
            "seconds": round(self.seconds, 1),
            "error": self.error,
            "reason": self.reason,
            "cause": self.run.cause,
            "started": self.started.isoformat() if self.started else None,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], run_dir: str | None) -> Outcome:
        """The outcome ``to_dict`` recorded, its run now in ``run_dir`` (``harness merge``
        copies runs from where they were made); ``KeyError`` or ``TypeError`` when ``d``
        is not one."""
        run = SuiteRun(d["name"], RunOptions(), d["expect"], d["violation"], d.get("cause"))
        started = d.get("started")
        was = d.get("run_dir")

        def where(recorded: str | None) -> str | None:
            """A repeated run's directory, inside the outcome's folder, where it is now."""
            if not (recorded and was and run_dir) or not recorded.startswith(f"{was}/"):
                return recorded
            return run_dir + recorded[len(was) :]

        repeat = d.get("repeat")
        return cls(
            run,
            valid=d["valid"],
            met=bool(d["met"]),
            why=str(d["why"]),
            run_dir=run_dir,
            seconds=float(d["seconds"]),
            error=d["error"],
            reason=str(d.get("reason") or ""),
            started=datetime.fromisoformat(started) if started else None,
            rate=Rate.from_dict(repeat, where) if repeat is not None else None,
        )

    def junit_case(self, suite: str) -> Case:
        """The run as a JUnit testcase: a failure's message is why the expectation was not
        met and the run's own sentence; its body says where the run and its report are."""
        report = Path(self.run_dir) / "report.html" if self.run_dir else None
        lines = [f"expected: {self.run.expect}", f"found: {self.why}"]
        lines += [f"reason: {self.reason}"] if self.reason else []
        lines += [f"run directory: {self.run_dir}"] if self.run_dir else []
        lines += [f"report: {report}"] if report is not None and report.exists() else []
        summary = self.why
        if not self.met and self.reason and self.reason not in self.why:
            summary = f"{self.why}. {self.reason}"
        verdict = verdict_word(self.valid) if self.error is None else "error"
        props = {"verdict": verdict, "run_dir": self.run_dir or "", "report": str(report or "")}
        return Case(
            name=self.run.name,
            classname=f"suite.{suite}",
            valid=self.met,
            expected=True,
            summary=summary,
            time_s=self.seconds,
            details="\n".join(lines),
            properties={k: v for k, v in props.items() if v},
            started=self.started,
        )


@dataclass
class Suite:
    name: str
    runs: list[SuiteRun] = field(default_factory=list)


MAX_DEPTH = 32
"""The deepest nesting of arrays and tables a suite file may have: a suite's values are
at most a list inside a table; far deeper would exhaust the TOML reader's recursion."""


class TooDeep(ValueError):
    """TOML nested deeper than ``MAX_DEPTH``."""


def parse_toml(text: str) -> dict[str, Any]:
    """``text`` read as TOML, nesting deeper than ``MAX_DEPTH`` refused (``TooDeep``, one
    line): the reader's own recursion running out, or what it read measured."""
    try:
        data = tomllib.loads(text)
    except RecursionError:
        raise TooDeep(_too_deep()) from None
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:  # without recursion: what was read may be nearly as deep as the limit
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise TooDeep(_too_deep())
        inner = value.values() if isinstance(value, dict) else value
        stack += [(v, depth + 1) for v in inner if isinstance(v, dict | list)]
    return data


def _too_deep() -> str:
    return (
        f"nested more than {MAX_DEPTH} arrays or tables deep: a suite's values are "
        "numbers, names and lists of names; flatten it"
    )


def load_suite(path: Path, *, check: bool = True) -> Suite:
    """Parse and validate a suite file; every problem is one line naming the run. Each
    run is checked and decided here, once, as ``harness run`` would (``check_run``: its
    ``checked``, which running it runs); with ``check`` False only the workload's defaults
    are decided (``harness.validate.decide``), to learn what the runs need before this
    machine has it (``harness.host_packages``)."""
    if path.is_dir():
        raise SuiteError(f"{path} is a folder: pass a suite file, e.g. suites/smoke.toml")
    if not os.path.lexists(path):
        from core.option_checks import nearest
        from harness.packaged import suite_names

        near = nearest(path.name, suite_names()) if path.parent == Path() else None
        raise SuiteError(
            f"unknown suite {str(path)!r}; did you mean {near!r}?"
            if near
            else f"{path}: no such suite file (the shipped suites, by name: harness suite list)"
        )
    try:  # a regular file only: a FIFO or a device would block or never end
        data = parse_toml(read_text(path, give="give a suite file"))
    except FormatError as e:
        raise SuiteError(str(e)) from None
    except tomllib.TOMLDecodeError as e:
        raise SuiteError(f"{path}: not valid TOML ({e})") from None
    except TooDeep as e:
        raise SuiteError(f"{path}: {e}") from None
    suite_table, defaults = data.get("suite", {}), data.get("defaults", {})
    runs = data.get("run", [])
    if not (
        isinstance(suite_table, dict)
        and isinstance(defaults, dict)
        and isinstance(runs, list)
        and all(isinstance(r, dict) for r in runs)
    ):
        raise SuiteError(
            f"{path}: [suite] and [defaults] are tables and [[run]] an array of tables"
        )
    name = str(suite_table.get("name", path.stem))
    try:
        check_name(name, "the suite name")
    except OptionError as e:
        raise SuiteError(f"{path}: {e}") from None
    defaults = dict(defaults)
    suite = Suite(name)
    seen: set[str] = set()
    for entry in _by_version(runs, defaults, path):
        run_name = str(entry.pop("name"))
        if run_name in seen:
            raise SuiteError(f"{path}: two runs are named {run_name!r}; names must be unique")
        seen.add(run_name)
        expected = entry.pop("expect", "valid")
        expect = " or ".join(map(str, expected)) if isinstance(expected, list) else str(expected)
        violation = entry.pop("violation", None)
        cause = entry.pop("cause", None)
        if cause is not None and cause not in CAUSES:
            raise SuiteError(
                f"{path}: run {run_name!r}: unknown cause {cause!r}; "
                f"choose from {', '.join(CAUSES)}"
            )
        if not expect or any(e not in EXPECTATIONS for e in expect.split(" or ")):
            raise SuiteError(
                f"{path}: run {run_name!r}: expect must be one of "
                f"{', '.join(EXPECTATIONS)} (or a list of them), not {expected!r}"
            )
        if violation is not None and violation not in VIOLATIONS:
            raise SuiteError(
                f"{path}: run {run_name!r}: unknown violation {violation!r}; "
                f"choose from {', '.join(VIOLATIONS)}"
            )
        merged = {**defaults, **entry}
        repeat = _repeat_of(merged, f"{path}: run {run_name!r}")
        unknown = sorted(set(merged) - set(FIELDS) - {OLD_EXTRA})
        if unknown:
            raise SuiteError(
                f"{path}: run {run_name!r}: unknown option(s) {', '.join(unknown)}"
                f"; options are the fields of `harness run` (e.g. time_limit, "
                "nemesis, fencing)"
            )
        try:  # the name a run is given by default is not one the user wrote
            given = RunOptions.from_mapping(merged)
            named = given if "name" in merged else given.with_(name=f"{name}-{run_name}")
            checked = check_run(named) if check else None
            opts = checked.options if checked is not None else decide(named)
        except (HarnessError, TypeError) as e:  # TypeError: a value of the wrong kind
            raise SuiteError(f"{path}: run {run_name!r}: {e}") from None
        suite.runs.append(
            SuiteRun(run_name, opts, expect, violation, cause, *repeat, checked=checked)
        )
    if not suite.runs:
        raise SuiteError(f"{path}: no [[run]] tables: a suite lists the runs it makes")
    return suite


def _by_version(
    runs: list[dict[str, Any]], defaults: dict[str, Any], path: Path
) -> list[dict[str, Any]]:
    """The runs, named (``run-N`` when unnamed), a run with a list of server versions
    (``server_version = ["bookworm", "trixie"]``, its own or the defaults') made one run
    per version with the version in its name (``etcd-lock-bookworm``)."""
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(runs, start=1):
        named = {**entry, "name": entry.get("name", f"run-{i}")}
        versions = named.get("server_version", defaults.get("server_version"))
        if not isinstance(versions, list):
            out.append(named)
            continue
        if not versions:
            raise SuiteError(
                f"{path}: run {named['name']!r}: server_version lists no versions; "
                "name one or more, or leave it out"
            )
        out += [{**named, "name": f"{named['name']}-{v}", "server_version": v} for v in versions]
    return out


def _repeat_of(merged: dict[str, Any], where: str) -> tuple[int | None, str, str]:
    """A run's ``repeat``, ``pass_rule`` and ``repeat_seed`` (taken out of ``merged``):
    checked, each one line naming ``where`` and what may be given."""
    repeat = merged.pop("repeat", None)
    rule = merged.pop("pass_rule", None)
    seed_mode = merged.pop("repeat_seed", None)
    if repeat is None:
        if rule is not None or seed_mode is not None:
            raise SuiteError(f"{where}: pass_rule and repeat_seed shape repeat = N: add it")
        return None, DEFAULT_PASS_RULE, "next"
    try:
        REPEATS.check(repeat)
    except OptionError as e:
        raise SuiteError(f"{where}: {str(e).replace('--repeat', 'repeat')}") from None
    for key, value, allowed in (
        ("pass_rule", rule, tuple(PASS_RULES)),
        ("repeat_seed", seed_mode, SEED_MODES),
    ):
        if value is not None and value not in allowed:
            raise SuiteError(f"{where}: {key} must be one of {', '.join(allowed)}, not {value!r}")
    return int(repeat), rule or DEFAULT_PASS_RULE, seed_mode or "next"


def judge(run: SuiteRun, results: dict[str, Any]) -> tuple[bool, str]:
    """Whether a run's results meet its expectation, and why (one sentence)."""
    word = verdict_word(results.get("valid"))
    if word not in run.expected:
        return False, f"expected {run.expect}, got {word}"
    why = f"{word}, as expected"
    if len(run.expected) > 1 and word != "invalid":
        return True, why  # the violation and cause asked for are an invalid outcome's
    if run.violation is not None:
        description, found = VIOLATIONS[run.violation]
        if not found(results):
            return False, f"{word} as expected, but not because {description}"
        why = f"{word}: {description}"
    if run.cause is not None:
        causes = found_causes(results)
        if run.cause not in causes:
            return False, (
                f"{why}, but not for the cause {run.cause} (given: "
                f"{', '.join(sorted(causes)) or 'none'})"
            )
        why += f" ({run.cause})"
    return True, why


def select(suite: Suite, only: str | None) -> list[SuiteRun]:
    if not only:
        return suite.runs
    return [r for r in suite.runs if fnmatch.fnmatch(r.name, only) or only in r.name]


def run_suite(
    path: Path,
    term: Terminal,
    *,
    only: str | None = None,
    out: str = "results",
    list_only: bool = False,
    shard: tuple[int, int] | None = None,
    durations: Path | None = None,
) -> int:
    """Run a suite file, or with ``shard`` (I, N) its I-th of N shards
    (``harness.shard``); exit 0 when every outcome met its expectation, else 1."""
    from harness.orchestrate import run_test
    from harness.shard import sharded

    suite = load_suite(path)
    runs = select(suite, only)
    record = provenance(path, runs)
    if shard is not None:
        runs, record["shard"] = sharded(runs, shard, durations)
    if list_only:
        table = Table("run", "target", "workload", "faults", "expect", title=suite.name)
        for r in runs:
            table.add_row(
                r.name,
                r.options.target,
                r.options.workload,
                ",".join(r.options.faults.nemesis),
                r.expect + (f" ({r.violation})" if r.violation else "") + _repeat_words(r),
            )
        if term.as_json:
            term.answer({"suite": suite.name, "runs": [_listed(r) for r in runs]})
        else:
            term.out.print(table)
        return 0
    if not record["runs"]:
        raise SuiteError(f"no run of {path} matches {only!r}; see --list")
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)  # the folder named: its own links are the user's
    base = make_dirs(root / f"suite-{suite.name}" / utc_stamp(), root=root)
    suite_started = datetime.now(UTC)
    record["started"] = suite_started.isoformat()
    outcomes: list[Outcome] = []
    for r in runs:
        heading(term.err, f"{suite.name}: {r.name} (expect {r.expect})")
        started = time.monotonic()
        o = Outcome(r, started=datetime.now(UTC))
        try:
            if r.repeat is not None:
                _repeated(o, base, term)
            else:
                res = run_test(_checked(r).placed(str(base)), term)
                o.run_dir = str(res.run_dir)
                results = read_json(res.run_dir / "results.json")
                o.valid = results.get("valid")
                o.met, o.why = judge(r, results)
                o.reason = headline(results)
        except HarnessError as e:
            o.error, o.why = str(e), f"could not run: {e}"
        except Exception as e:  # one broken run must not stop the suite
            o.error, o.why = f"{type(e).__name__}: {e}", f"crashed: {type(e).__name__}: {e}"
        o.seconds = time.monotonic() - started
        outcomes.append(o)
        term.out.print(f"[{'green' if o.met else 'red'}]{r.name}: {o.why}[/]")
    write_outputs(suite.name, base, outcomes, term.out, suite_started, record)
    met = all(o.met for o in outcomes)
    if term.as_json:
        term.answer(
            {
                "suite": suite.name,
                "dir": str(base),
                "met": met,
                "outcomes": [o.to_dict() for o in outcomes],
            }
        )
    return 0 if met else 1


def _repeated(o: Outcome, base: Path, term: Terminal) -> None:
    """A suite run with ``repeat = N``: its runs (``harness.repeat``), the scenario's
    outcome the pass rule's, met as a single run's is (``judge``), a violation or cause
    asked for found in one of its invalid runs; the rate leads why."""
    from harness.orchestrate import run_test
    from harness.repeat import run_repeated

    r = o.run
    assert r.repeat is not None
    rate, folder = run_repeated(
        _checked(r).placed(str(base)),
        r.repeat,
        lambda checked, facts: run_test(checked, term, repeat=facts),
        term,
        pass_rule=r.pass_rule,
        seed_mode=r.repeat_seed,
    )
    o.rate, o.run_dir = rate, str(folder)
    o.valid = {0: True, 1: False}.get(rate.exit_code(), "unknown")
    rule = f"{rate.rate()}, pass rule {r.pass_rule}"
    invalid = [Path(x.run_dir) for x in rate.runs if x.valid is False and x.run_dir]
    judged = [judge(r, read_json(d / "results.json")) for d in invalid]
    if o.valid is False and judged:
        o.met, o.why = next((j for j in judged if j[0]), judged[0])
    else:
        o.met, o.why = judge(r, {"valid": o.valid})
    o.why = f"{rule}: {o.why}"
    o.reason = "; ".join(rate.lines()[1:])


def _checked(r: SuiteRun) -> Checked:
    """The run as loaded, checked and decided (``load_suite``), to run as it is."""
    assert r.checked is not None, "a suite loaded with check=False is not run"
    return r.checked


def _repeat_words(r: SuiteRun) -> str:
    """`` x5, pass rule most`` for a repeated run ("" for one run)."""
    return "" if r.repeat is None else f" x{r.repeat}, pass rule {r.pass_rule}"


def _listed(r: SuiteRun) -> dict[str, Any]:
    """A suite's run as ``suite run --list --json`` lists it."""
    return {
        "repeat": r.repeat,
        "pass_rule": r.pass_rule if r.repeat is not None else None,
        "name": r.name,
        "target": r.options.target,
        "workload": r.options.workload,
        "faults": list(r.options.faults.nemesis),
        "expect": r.expect,
        "violation": r.violation,
    }


def provenance(path: Path, runs: list[SuiteRun]) -> dict[str, Any]:
    """What a suite result records of what made it (``harness.provenance``): the suite
    file's digest, the harness's commit and the entries chosen, for ``harness merge``."""
    from harness.provenance import source_commit, suite_digest

    return {
        "digest": suite_digest(path),
        "commit": source_commit(),
        "runs": [r.name for r in runs],
    }


def write_outputs(
    suite: str,
    base: Path,
    outcomes: list[Outcome],
    console: Console,
    started: datetime,
    record: dict[str, Any],
) -> None:
    """Write a suite result into ``base`` (``suite.json`` with ``record`` in it, JUnit,
    the index and the matrix) and print its tables: a suite's run and ``harness merge``."""
    from harness.report import (
        compare,
        render_matrix_table,
        write_index,
        write_junit,
        write_matrix_html,
    )

    write_json(
        base / "suite.json",
        {"suite": suite, **record, "outcomes": [o.to_dict() for o in outcomes]},
    )
    cases = [o.junit_case(suite) for o in outcomes]
    write_junit(cases, base / "junit.xml", suite=suite, started=started)
    write_index(base)
    dirs = [Path(o.run_dir) for o in outcomes if o.run_dir]
    if dirs:
        matrix = compare(dirs)
        write_matrix_html(matrix, base / "matrix.html")
        console.print(render_matrix_table(matrix))
    table = Table("run", "expected", "found", "met", "s", title=f"suite {suite}")
    for o in outcomes:
        table.add_row(
            o.run.name,
            o.run.expect + (f" ({o.run.violation})" if o.run.violation else ""),
            verdict_word(o.valid) if o.error is None else "error",
            "[green]yes[/]" if o.met else f"[red]no[/] {o.why}",
            f"{o.seconds:.0f}",
        )
    console.print(table)
    console.print(f"suite results in {base} (index.html, matrix.html, junit.xml)")
