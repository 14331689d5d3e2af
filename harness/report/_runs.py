"""Run directories as summaries: what the index, the comparison and JUnit need of a run.

A ``RunInfo`` is read from ``test.json`` and ``results.json`` only, never from the
history, so listing a folder of a thousand runs stays cheap. ``find_run_dirs`` turns a mix
of run directories and parent folders into the run directories below them (a folder is a
run directory when it holds ``test.json``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from checkers.result import INTERRUPTED, Validity
from checkers.result import verdict_word as result_word
from core.run_json import TestJsonError, check_results
from core.store import HISTORY_FILE, RESULTS_FILE, TEST_FILE, read_json
from harness.recorded import checked_test

_STAMP = re.compile(r"(\d{8}T\d{6})(Z?)")
NOT_CHECKED = "not checked"
NOT_APPLICABLE = "n/a"


@dataclass(frozen=True, slots=True)
class RunInfo:
    """One run's configuration and verdicts. ``valid`` is None when the run was never
    checked (no ``results.json``)."""

    path: Path
    name: str
    options: dict[str, Any] = field(default_factory=dict)
    test: dict[str, Any] = field(default_factory=dict)
    results: dict[str, Any] | None = None
    date: datetime | None = None

    @property
    def when(self) -> str:
        """The run's start in words: ``2026-12-05 13:12:54 UTC``, or ``... (local time)``
        for an older run directory, whose name has no zone; empty when unknown."""
        if self.date is None:
            return ""
        text = self.date.strftime("%Y-%m-%d %H:%M:%S")
        return f"{text} UTC" if self.date.tzinfo is not None else f"{text} (local time)"

    @property
    def target(self) -> str:
        return str(self.options.get("target") or "?")

    @property
    def lock(self) -> str | None:
        lock = self.options.get("lock")
        return str(lock) if lock else None

    @property
    def workload(self) -> str:
        return str(self.options.get("workload") or "?")

    @property
    def faults(self) -> tuple[str, ...]:
        """The injected faults, without ``none``."""
        return tuple(str(n) for n in self.options.get("nemesis") or () if n != "none")

    @property
    def fault_label(self) -> str:
        return "+".join(self.faults) or "none"

    @property
    def target_label(self) -> str:
        """The target with its lock implementation, if one was chosen: ``redis (redlock)``."""
        return f"{self.target} ({self.lock})" if self.lock else self.target

    @property
    def release(self) -> str | None:
        """The Debian release its server came from, as test.json's ``versions`` recorded
        it (``--server-version``; None: a run without one, the sim's or an older one)."""
        release = (self.test.get("versions") or {}).get("release")
        return str(release) if release else None

    @property
    def server(self) -> str | None:
        """The exact server that ran, as its node said: the package and its version
        where dpkg installed it (``etcd-server 3.4.23-4+b4``), else the server's own
        version line, with the release (None: no release recorded)."""
        if self.release is None:
            return None
        versions = self.test.get("versions") or {}
        said = versions.get(f"{self.target} package") or versions.get(self.target) or "?"
        return f"{said} ({self.release})"

    @property
    def seed(self) -> Any:
        return self.test.get("seed", self.options.get("seed"))

    @property
    def valid(self) -> Validity | None:
        if self.results is None:
            return None
        v: Validity = self.results.get("valid", "unknown")
        return v

    @property
    def verdict(self) -> str:
        """``valid``, ``invalid``, ``unknown``, ``interrupted`` (cut short, no violation
        found in what was recorded) or ``not checked``."""
        if self.results is not None and self.results.get("verdict") == INTERRUPTED:
            return INTERRUPTED
        return verdict_word(self.valid)

    @property
    def interrupted(self) -> str | None:
        """How the run was cut short, in words; None when it finished."""
        stop = (self.results or {}).get("interrupted")
        return str(stop.get("text") or INTERRUPTED) if isinstance(stop, dict) else None

    @property
    def checkers(self) -> dict[str, dict[str, Any]]:
        """Each checker's result dict from ``results.json`` (empty when not checked)."""
        if self.results is None:
            return {}
        out: dict[str, dict[str, Any]] = self.results.get("checkers", {})
        return out

    @property
    def ops(self) -> int | None:
        return None if self.results is None else self.results.get("ops")


def verdict_word(valid: Validity | None) -> str:
    """The word for a validity: valid, invalid, unknown, or ``not checked`` for None."""
    return NOT_CHECKED if valid is None else result_word(valid)


def is_run_dir(path: Path) -> bool:
    return (path / TEST_FILE).is_file() or (path / HISTORY_FILE).is_file()


def find_run_dirs(paths: Iterable[Path]) -> list[Path]:
    """Every run directory given or found below the given folders, each once, in path
    order. Symlinked folders (``results/latest``) are not followed, so no run is listed
    twice."""
    found: dict[Path, None] = {}
    for p in paths:
        if is_run_dir(p):
            found.setdefault(p.resolve(), None)
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = sorted(d for d in dirs if not (Path(root) / d).is_symlink())
            if TEST_FILE in files:
                found.setdefault(Path(root).resolve(), None)
                dirs[:] = []  # a run directory holds no other run
    return sorted(found)


def load_run(run_dir: Path) -> RunInfo:
    """The summary of a run directory; missing or unreadable files leave fields empty, as
    does a test.json or results.json whose fields are not of their types
    (``core.run_json``)."""
    test = _read(run_dir / TEST_FILE) or {}
    results = _read(run_dir / RESULTS_FILE)
    try:
        checked_test(test, run_dir / TEST_FILE)
    except TestJsonError:
        test = {}
    try:
        results = check_results(results, run_dir / RESULTS_FILE) if results else None
    except TestJsonError:
        results = None  # as if never checked: `harness check RUN` writes it again
    options = test.get("options") or {}
    name = str(test.get("name") or run_dir.name)
    return RunInfo(run_dir, name, options, test, results, _date(run_dir))


def _read(path: Path) -> dict[str, Any] | None:
    try:
        data = read_json(path)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _date(run_dir: Path) -> datetime | None:
    """The run's start: the store's timestamp in the folder name (UTC when it ends in
    ``Z``; an older folder's, without it, is the local time of the machine that wrote it,
    kept without a zone), else test.json's mtime (UTC)."""
    m = _STAMP.search(run_dir.name)
    if m:
        try:
            date = datetime.strptime(m.group(1), "%Y%m%dT%H%M%S")
        except ValueError:
            pass
        else:
            return date.replace(tzinfo=UTC) if m.group(2) else date
    try:
        return datetime.fromtimestamp((run_dir / TEST_FILE).stat().st_mtime, tz=UTC)
    except OSError:
        return None
