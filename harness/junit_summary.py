"""JUnit XML as a Markdown table, for a CI job's summary (``$GITHUB_STEP_SUMMARY``).

One row per testcase: its name, what it found (a suite run's verdict, or a test's
outcome), whether that was expected, its time and, for each one that did not pass, the
one-sentence reason and where its report is. Reads the suites' ``junit.xml`` and pytest's
``--junitxml`` alike.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from core.errors import HarnessError
from core.formats.errors import FormatError
from core.formats.files import read_bytes

MAX_ROWS = 200
"""Rows shown per file: beyond them, only the failures (a summary page has a size cap)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One testcase as the summary shows it."""

    name: str
    found: str
    passed: bool
    seconds: float
    reason: str = ""
    report: str = ""


def _reason(text: str) -> str:
    """The first line of a message, cut to one sentence a table cell can hold."""
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= 300 else line[:297] + "..."


def rows_of(path: Path) -> tuple[str, list[Row]]:
    """A JUnit file's suite name and its testcases; a file that is not JUnit XML is a
    one-line ``HarnessError``."""
    try:  # a regular file only: a FIFO would block, a device never end
        root = ET.fromstring(read_bytes(path, give="give a JUnit XML file"))
    except FormatError as e:
        raise HarnessError(str(e)) from None
    except ET.ParseError as e:
        raise HarnessError(f"{path}: not a JUnit XML file ({e})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise HarnessError(f"{path}: not a JUnit XML file (its root is <{root.tag}>)")
    rows = []
    for case in root.iter("testcase"):
        props = {p.get("name"): p.get("value", "") for p in case.iter("property")}
        bad = next((case.find(k) for k in ("failure", "error") if case.find(k) is not None), None)
        skipped = case.find("skipped")
        if bad is not None:
            found = bad.tag
        elif skipped is not None:
            found = "skipped"
        else:
            found = "passed"
        detail = bad if bad is not None else skipped
        reason = _reason(detail.get("message") or detail.text or "") if detail is not None else ""
        name = case.get("name", "?")
        cls = case.get("classname", "")
        rows.append(
            Row(
                name=f"{cls}.{name}" if cls and not cls.startswith("suite.") else name,
                found=props.get("verdict") or found,
                passed=bad is None,
                seconds=float(case.get("time") or 0),
                reason=reason,
                report=props.get("report", ""),
            )
        )
    return root.get("name") or path.stem, rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(paths: Iterable[Path]) -> str:
    """The summary of JUnit files: per file a count line and a table."""
    out: list[str] = []
    for path in paths:
        suite, rows = rows_of(path)
        failed = [r for r in rows if not r.passed]
        out.append(f"### {_cell(suite)}: {len(rows) - len(failed)} of {len(rows)} as expected")
        out.append(f"`{path}`")
        out.append("")
        shown = rows if len(rows) <= MAX_ROWS else failed
        if len(shown) < len(rows):
            out.append(f"({len(rows) - len(shown)} passing testcases not listed)")
            out.append("")
        if shown:
            out.append("| run | found | as expected | s | reason (when not) | report |")
            out.append("| --- | --- | --- | ---: | --- | --- |")
            for r in shown:
                out.append(
                    f"| {_cell(r.name)} | {_cell(r.found)} | {'yes' if r.passed else '**no**'} "
                    f"| {r.seconds:.1f} | {_cell(r.reason)} | {_cell(r.report)} |"
                )
        out.append("")
    return "\n".join(out)
