"""JUnit XML for CI: one testcase per run, judged against what was expected of it.

A run passes when its verdict is the expected one (by default: valid). It is a
``<failure>`` when the verdict differs (an invalid run expected valid, or a valid run
expected to catch a bug), and an ``<error>`` when the verdict is unknown or missing: the
run proved nothing either way. The message is the run's one-sentence summary; the body
holds every checker's verdict and explanation, and where the run and its report are.

Suites pass their own ``Case`` records (a name, a verdict, an expectation); run
directories become cases through ``case_for``.

Times are starts, in ISO 8601 in UTC with the zone (``2026-01-01T12:00:00+00:00``): the
suite's ``timestamp`` is when the suite began (the caller knows it; else its first case's
start), and each testcase's start is its ``started`` property, where the format lets a
testcase say more than its name and time.
"""

from __future__ import annotations

import io
import json
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from checkers.result import Validity
from core.store import HISTORY_FILE
from core.writes import write_bytes
from harness.report._runs import RunInfo, find_run_dirs, load_run, verdict_word
from harness.report._verdict import checker_verdicts, headline


@dataclass(frozen=True, slots=True)
class Case:
    """One testcase. ``valid`` None: no verdict (not checked)."""

    name: str
    classname: str
    valid: Validity | None
    expected: Validity = True
    summary: str = ""
    details: str = ""
    time_s: float = 0.0
    properties: dict[str, str] = field(default_factory=dict)
    started: datetime | None = None
    """When the case began (a naive datetime is local time); None: not known."""

    @property
    def outcome(self) -> str:
        """``passed``, ``failure`` or ``error``."""
        if self.valid == self.expected:
            return "passed"
        if self.valid is None or self.valid not in (True, False):
            return "error"
        return "failure"


def case_for(run: Path | RunInfo, expected: Validity = True) -> Case:
    """The testcase of a run directory."""
    info = run if isinstance(run, RunInfo) else load_run(Path(run))
    lines = [f"{v.checker}: {v.word}: {v.sentence}" for v in checker_verdicts(info.results)]
    lines += [p for v in checker_verdicts(info.results) for p in v.explanation[1:]]
    report = info.path / "report.html"
    lines.append(f"run directory: {info.path}")
    if report.exists():
        lines.append(f"report: {report}")
    props = {
        "target": info.target_label,
        "workload": info.workload,
        "faults": info.fault_label,
        "seed": str(info.seed),
        "path": str(info.path),
    }
    return Case(
        name=f"{info.name}/{info.path.name}",
        classname=f"harness.{info.target}.{info.workload}",
        valid=info.valid,
        expected=expected,
        summary=headline(info.results),
        details="\n".join(lines),
        time_s=_duration_s(info),
        properties=props,
        started=info.date,
    )


def write_junit(
    runs: Iterable[Path | RunInfo | Case],
    path: Path,
    *,
    expect: Mapping[str, Validity] | None = None,
    suite: str = "harness",
    started: datetime | None = None,
) -> Path:
    """Write JUnit XML for runs (run directories or folders holding them, RunInfo) or
    ready cases; return ``path``.

    ``expect`` maps a test name, a run directory's name or its path to the expected
    verdict (True, False or "unknown"); anything not in it is expected valid. ``started``:
    when the suite began (None: its earliest case's start, else now).
    """
    items: list[Case | RunInfo] = []
    for r in runs:
        if isinstance(r, (Case, RunInfo)):
            items.append(r)
        else:  # a run directory, or a folder of them
            items += [load_run(d) for d in find_run_dirs([Path(r)])]
    cases = [r if isinstance(r, Case) else case_for(r, _expected(r, expect or {})) for r in items]
    root = ET.Element("testsuites", name=suite)
    starts = [c.started for c in cases if c.started is not None]
    began = started or min(starts, key=utc_iso, default=None) or datetime.now(UTC)
    ts = ET.SubElement(root, "testsuite", name=suite, timestamp=utc_iso(began))
    for c in cases:
        _testcase(ts, c)
    counts = {
        "tests": str(len(cases)),
        "failures": str(sum(c.outcome == "failure" for c in cases)),
        "errors": str(sum(c.outcome == "error" for c in cases)),
        "skipped": "0",
        "time": f"{sum(c.time_s for c in cases):.3f}",
    }
    for el in (root, ts):
        el.attrib.update({k: v for k, v in counts.items() if el is ts or k != "skipped"})
    ET.indent(root)
    xml = io.BytesIO()
    ET.ElementTree(root).write(xml, encoding="utf-8", xml_declaration=True)
    return write_bytes(Path(path), xml.getvalue())  # whole, never through a link


def _testcase(parent: ET.Element, c: Case) -> None:
    el = ET.SubElement(
        parent, "testcase", name=c.name, classname=c.classname, time=f"{c.time_s:.3f}"
    )
    properties = dict(c.properties)
    if c.started is not None:
        properties["started"] = utc_iso(c.started)
    if properties:
        props = ET.SubElement(el, "properties")
        for k, v in properties.items():
            ET.SubElement(props, "property", name=k, value=v)
    got, want = verdict_word(c.valid), verdict_word(c.expected)
    if c.outcome != "passed":
        kind = "failure" if c.outcome == "failure" else "error"
        bad = ET.SubElement(
            el, kind, message=c.summary or f"verdict {got}", type=f"{got} (expected {want})"
        )
        bad.text = c.details
    elif c.details:
        ET.SubElement(el, "system-out").text = c.details


def utc_iso(when: datetime) -> str:
    """``when`` in ISO 8601 in UTC with its zone, to the second (a naive datetime is
    taken as local time)."""
    return when.astimezone(UTC).isoformat(timespec="seconds")


def _expected(run: RunInfo, expect: Mapping[str, Validity]) -> Validity:
    for key in (str(run.path), str(run.path.resolve()), run.path.name, run.name):
        if key in expect:
            return expect[key]
    return True


def _duration_s(info: RunInfo) -> float:
    """Seconds from the workload's start to the last recorded operation."""
    last = _last_op_time(info.path / HISTORY_FILE)
    start = info.test.get("workload_start_ns")
    start = start if isinstance(start, int) and not isinstance(start, bool) else 0
    return max(0.0, (last - start) / 1e9) if last is not None else 0.0


def _last_op_time(history: Path) -> int | None:
    """The time of the last complete line of a history, read from its tail only (None
    unless it is a regular file: a FIFO would block)."""
    try:
        if not history.is_file():
            return None
        with open(history, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 8192))
            tail = f.read().split(b"\n")
    except OSError:
        return None
    for raw in reversed(tail):
        try:
            t = json.loads(raw).get("time")
        except (ValueError, AttributeError):
            continue
        if isinstance(t, int):
            return t
    return None
