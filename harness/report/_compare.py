"""The comparison matrix: targets (and lock implementations) by faults, across many runs.

``compare(paths)`` reads run directories (or finds them below parent folders) and puts
each run in the cell of its target and workload (row) and its faults (column). A cell
over several runs pools them: its verdict is the worst, its counts are sums, its danger
window and handover delay the longest, its latency quantiles and availability are
computed over all their operations together. ``render_matrix_table`` draws it for the
terminal; ``harness.report.write_matrix_html`` as a page.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from checkers import guarded
from checkers.discovery import NAME as DISCOVERY
from checkers.expiry import ExpiryRule
from checkers.result import Validity, worst
from checkers.windows import record_windows
from clusters.releases import DEFAULT_SUITE
from core.errors import HarnessError
from core.run_json import check_results
from core.short_text import DASH, ms, pct, secs
from core.store import RESULTS_FILE
from harness.recorded import checked_test
from harness.report._metrics import QUANTILES, OpStats, op_stats, pooled
from harness.report._runs import RunInfo, find_run_dirs, load_run, verdict_word
from workloads.workload_registry import WORKLOADS

_STYLE = {"valid": "green", "invalid": "bold red", "unknown": "yellow", "not checked": "dim"}


@dataclass(frozen=True, slots=True)
class RunMetrics:
    """One run's numbers for the matrix."""

    run: RunInfo
    stats: OpStats
    violations: int
    stale_accepted: int
    stale_rejected: int
    danger_window_s: float | None
    handover_delay_s: float | None
    handover_rule: str | None = None
    """The service's documented expiry rule its handovers were measured by
    (``checkers.expiry``), in a few words; None: a lease ends at its deadline."""
    detection_s: tuple[float, ...] = ()
    """Service registration: each dead instance's time until every discovery client
    stopped listing it (``checkers.discovery``)."""
    watch: WatchNumbers | None = None


@dataclass(frozen=True, slots=True)
class WatchNumbers:
    """A watch run's deliveries (``checkers.watch_delivery``, ``watch_latency``)."""

    delivered: int = 0
    missed: int = 0
    stale_final: int = 0
    """Watchers that settled on a stale value."""
    compactions: int = 0
    handled: int = 0
    latency_p99_ms: float | None = None

    @classmethod
    def of(cls, checkers: dict[str, Any]) -> WatchNumbers | None:
        """From a run's results; None for a run without watch results."""
        watchers = (checkers.get("watch-delivery") or {}).get("watchers")
        if not isinstance(watchers, list):
            return None
        ws = [w for w in watchers if isinstance(w, dict)]
        p99 = (checkers.get("watch-latency") or {}).get("p99")

        def total(name: str) -> int:
            return sum(int(w.get(name) or 0) for w in ws)

        return cls(
            total("delivered"),
            total("missed"),
            sum(bool(w.get("stale_final")) for w in ws),
            total("compactions"),
            total("handled"),
            float(p99) if isinstance(p99, (int, float)) else None,
        )

    @classmethod
    def pool(cls, runs: Sequence[WatchNumbers]) -> WatchNumbers:
        """Several runs': counts summed, the highest p99."""
        p99s = [r.latency_p99_ms for r in runs if r.latency_p99_ms is not None]
        return cls(
            sum(r.delivered for r in runs),
            sum(r.missed for r in runs),
            sum(r.stale_final for r in runs),
            sum(r.compactions for r in runs),
            sum(r.handled for r in runs),
            max(p99s, default=None),
        )

    def line(self) -> str:
        p99 = DASH if self.latency_p99_ms is None else f"{self.latency_p99_ms:g} ms"
        return (
            f"{self.delivered} delivered, {self.missed} missed, {self.stale_final} stale "
            f"final, compactions {self.handled}/{self.compactions} handled, p99 {p99}"
        )


@dataclass(frozen=True, slots=True)
class Cell:
    """The runs of one target and faults combination, pooled."""

    runs: tuple[RunMetrics, ...]

    @property
    def valid(self) -> Validity | None:
        """The worst verdict (None when no run was checked)."""
        checked = [m.run.valid for m in self.runs if m.run.valid is not None]
        return worst(checked) if checked else None

    @property
    def verdict(self) -> str:
        return verdict_word(self.valid)

    @property
    def stats(self) -> OpStats:
        return pooled(m.stats for m in self.runs)

    def total(self, name: str) -> int:
        """The sum of an integer field (violations, stale_accepted, stale_rejected)."""
        return sum(int(getattr(m, name)) for m in self.runs)

    def longest(self, name: str) -> float | None:
        """The largest value of a duration field (danger_window_s, handover_delay_s)."""
        values = [getattr(m, name) for m in self.runs if getattr(m, name) is not None]
        return max(values, default=None)

    def lines(self) -> list[tuple[str, str]]:
        """The cell as (label, text) lines, the same in the terminal and on the page."""
        watches = [m.watch for m in self.runs if m.watch is not None]
        rules = self.service_rules()
        servers = self.servers()
        verdict, *numbers = self._lines()
        blamed = self.attributions()
        return (
            [verdict]
            + ([("whose", "; ".join(blamed))] if blamed else [])
            + ([("server", "; ".join(servers))] if servers else [])
            + numbers
            + ([("watches", WatchNumbers.pool(watches).line())] if watches else [])
            + ([("service rules", rules)] if rules else [])
        )

    def attributions(self) -> list[str]:
        """Whose doing each run's first violation was (``checkers.attribution``), once
        each: ``design (tooz-etcd3gw 9.1.0)``."""
        said: dict[str, None] = {}
        for m in self.runs:
            a = (m.run.results or {}).get("attribution")
            if isinstance(a, dict):
                who = " ".join(str(x) for x in (a.get("library"), a.get("version")) if x)
                said[f"{a.get('party')}" + (f" ({who})" if who else "")] = None
        return list(said)

    def servers(self) -> list[str]:
        """The exact servers its runs ran, as their nodes said (``RunInfo.server``)."""
        return sorted({m.run.server for m in self.runs if m.run.server is not None})

    def service_rules(self) -> str:
        """The service's rules its runs recorded (test.json's ``service_rules``): what a
        number in the cell depends on, e.g. Consul's lock-delay set to 0 s against its
        default of 15 s, or its session TTL a lower bound (a handover up to one TTL late
        is its rule, not slowness)."""
        said: dict[str, None] = {}
        for m in self.runs:
            for r in m.run.test.get("service_rules") or ():
                if isinstance(r, dict) and isinstance(r.get("setting"), str):
                    default = r.get("default")
                    was = f" (default {default})" if isinstance(default, str) else ""
                    said[f"{r['setting']} {r.get('value')}{was}"] = None
        return "; ".join(said)

    def _lines(self) -> list[tuple[str, str]]:
        stats = self.stats
        quantiles = " / ".join(ms(stats.latency_quantile(q)) for q in QUANTILES)
        return [
            ("verdict", self._verdict_line()),
            *self._detection(),
            ("violations", str(self.total("violations"))),
            (
                "stale writes",
                f"{self.total('stale_accepted')} accepted, {self.total('stale_rejected')} rejected",
            ),
            ("danger window", secs(self.longest("danger_window_s"))),
            ("handover delay", self._handover()),
            ("latency p50/p95/p99", quantiles),
            (
                "availability",
                f"{pct(stats.availability_clear)} outside faults, "
                f"{pct(stats.availability_in_fault)} during",
            ),
        ]

    def to_dict(self) -> dict[str, Any]:
        """The cell's numbers as JSON values (``harness compare --json``): what its lines
        say, unrounded; durations in seconds, availability as a fraction, None where the
        runs measured nothing."""
        stats = self.stats
        watches = [m.watch for m in self.runs if m.watch is not None]
        return {
            "verdict": self.verdict,
            "servers": self.servers(),
            "runs": [str(m.run.path) for m in self.runs],
            "invalid_runs": sum(m.run.valid is False for m in self.runs),
            "rate": self.rate() if self.repeated else None,
            "violations": self.total("violations"),
            "stale_accepted": self.total("stale_accepted"),
            "stale_rejected": self.total("stale_rejected"),
            "danger_window_s": self.longest("danger_window_s"),
            "handover_delay_s": self.longest("handover_delay_s"),
            "handover_rules": sorted({m.handover_rule for m in self.runs if m.handover_rule}),
            "latency_s": {f"p{round(q * 100)}": stats.latency_quantile(q) for q in QUANTILES},
            "availability_outside_faults": stats.availability_clear,
            "availability_during_faults": stats.availability_in_fault,
            "detection_s": sorted(t for m in self.runs for t in m.detection_s),
            "deliveries": asdict(WatchNumbers.pool(watches)) if watches else None,
        }

    def _handover(self) -> str:
        """The longest handover delay, and the service's expiry rule it was measured by
        (a Consul handover within its documented 2 x TTL is no delay)."""
        rules = sorted({m.handover_rule for m in self.runs if m.handover_rule})
        delay = secs(self.longest("handover_delay_s"))
        return f"{delay} ({'; '.join(rules)})" if rules else delay

    def _detection(self) -> list[tuple[str, str]]:
        """Detection times of dead instances, when the runs measured any."""
        times = sorted(t for m in self.runs for t in m.detection_s)
        if not times:
            return []
        return [("detection", f"{secs(times[0])} to {secs(times[-1])} ({len(times)} deaths)")]

    @property
    def repeated(self) -> bool:
        """Whether its runs are repeats of a scenario (``harness run --repeat``): the
        cell then gives their rate, not one verdict."""
        return any(isinstance(m.run.test.get("repeat"), dict) for m in self.runs)

    def rate(self) -> str:
        """``k/N invalid`` over its runs, and the seeds of the invalid ones."""
        bad = [m.run for m in self.runs if m.run.valid is False]
        seeds = ", ".join(str(r.test.get("seed")) for r in bad)
        return f"{len(bad)}/{len(self.runs)} invalid" + (f" (seeds {seeds})" if bad else "")

    def _verdict_line(self) -> str:
        n, bad = len(self.runs), sum(m.run.valid is False for m in self.runs)
        if self.repeated:
            return self.rate()
        if n == 1:
            return self.verdict.upper()
        return (
            f"{self.verdict.upper()} ({bad} of {n} runs invalid)"
            if bad
            else (f"{self.verdict.upper()} ({n} runs)")
        )


@dataclass(frozen=True, slots=True)
class Matrix:
    """Rows (``target (lock) · workload``) by columns (faults) of cells."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    cells: dict[tuple[str, str], Cell]

    def cell(self, row: str, column: str) -> Cell | None:
        return self.cells.get((row, column))

    @property
    def runs(self) -> int:
        return sum(len(c.runs) for c in self.cells.values())

    def to_dict(self) -> dict[str, Any]:
        """The matrix as JSON values: its rows, columns, and each cell that holds runs."""
        return {
            "runs": self.runs,
            "rows": list(self.rows),
            "columns": list(self.columns),
            "cells": [
                {"row": row, "column": column, **cell.to_dict()}
                for (row, column), cell in sorted(self.cells.items())
            ],
        }


def compare(run_dirs: Sequence[Path]) -> Matrix:
    """The matrix of the given run directories, or of every run below given folders.

    Raises HarnessError when no run directory is found.
    """
    dirs = find_run_dirs(Path(p) for p in run_dirs)
    if not dirs:
        raise HarnessError(
            f"no run directory (a folder with test.json) in {', '.join(map(str, run_dirs))}: "
            "pass run directories or a results folder"
        )
    grouped: dict[tuple[str, str], list[RunMetrics]] = {}
    for d in dirs:
        m = run_metrics(d)
        grouped.setdefault((row_label(m.run), m.run.fault_label), []).append(m)
    rows = sorted({r for r, _ in grouped})
    columns = sorted({c for _, c in grouped}, key=lambda c: (c != "none", c))
    return Matrix(tuple(rows), tuple(columns), {k: Cell(tuple(v)) for k, v in grouped.items()})


def check_test_json(run_dir: Path) -> None:
    """A run's test.json, and its results.json when it was checked, must be JSON objects
    whose fields have their types (``core.run_json``); anything else is a one-line
    HarnessError naming the file and the field."""
    checked_test(_json_of(run_dir / "test.json"), run_dir / "test.json")
    if os.path.lexists(run_dir / RESULTS_FILE):
        check_results(_json_of(run_dir / RESULTS_FILE), run_dir / RESULTS_FILE)


def _json_of(path: Path) -> Any:
    """The JSON value of the regular file ``path``, or a one-line HarnessError."""
    if not path.is_file():
        raise HarnessError(f"{path}: not a regular file; fix or leave out that run")
    try:
        return json.loads(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise HarnessError(
            f"{path}: not readable JSON ({type(e).__name__}); fix or leave out that run"
        ) from None


def row_label(run: RunInfo) -> str:
    """``target (lock) · workload``, plus ``fencing off`` for a run of a workload with
    fencing (``Workload.options``) run without it: the one setting that decides whether a
    stale holder does harm; the Debian release of a server other than the default one
    (``bookworm``: another version, another row); and the sim's bugs injected (``bug
    stale-read``)."""
    label = f"{run.target_label} · {run.workload}"
    workload = WORKLOADS.get(run.workload)
    fenced = workload is not None and "fencing" in workload.options
    if fenced and run.options.get("fencing") is False:
        label += " · fencing off"
    if run.release is not None and run.release != DEFAULT_SUITE:
        label += f" · {run.release}"  # another version of the service: its own row
    bugs = run.options.get("sim_bugs")
    if isinstance(bugs, list) and bugs:  # a service with a bug injected is another service
        label += " · bug " + ",".join(map(str, bugs))
    return label


def run_metrics(run_dir: Path) -> RunMetrics:
    """One run's verdict, violations, stale writes, handovers and operation stats."""
    from harness.analysis import load_record

    check_test_json(run_dir)
    run = load_run(run_dir)
    try:
        record = load_record(run_dir)
        stats = op_stats(record.history, record_windows(record))
    except (HarnessError, ValueError):  # no or malformed history: the verdict still counts
        stats = OpStats()
    checkers = run.checkers
    mutex = checkers.get("mutex") or {}
    handovers = mutex.get("handovers") or []
    stale = mutex or checkers.get(guarded.NAME) or {}  # a lock-free run: late writes
    return RunMetrics(
        run=run,
        stats=stats,
        violations=sum(_violations(r) for r in checkers.values()),
        stale_accepted=len(stale.get("stale_accepted") or ()),
        stale_rejected=len(stale.get("stale_rejected") or ()),
        danger_window_s=_max(h.get("danger_window_s") for h in handovers),
        handover_delay_s=_max(h.get("handover_delay_s") for h in handovers),
        handover_rule=_handover_rule(handovers),
        detection_s=tuple(
            float(t)
            for t in (checkers.get(DISCOVERY) or {}).get("detection_s") or ()
            if isinstance(t, int | float)
        ),
        watch=WatchNumbers.of(checkers),
    )


def _handover_rule(handovers: Iterable[Any]) -> str | None:
    """The expiry rule a run's handovers were measured by, in a few words (None: none)."""
    for h in handovers:
        rule = h.get("expiry_rule") if isinstance(h, dict) else None
        if isinstance(rule, dict) and isinstance(rule.get("ttls"), int | float):
            return ExpiryRule(float(rule["ttls"]), str(rule.get("target") or "the service")).short()
    return None


def render_matrix_table(matrix: Matrix) -> Table:
    """The matrix as a rich Table, for ``console.print``."""
    table = Table(title=f"Comparison of {matrix.runs} runs", show_lines=True)
    table.add_column("target · workload", style="bold", no_wrap=True)
    for c in matrix.columns:
        table.add_column(c, overflow="fold")
    for r in matrix.rows:
        cells: list[Text | str] = [r]
        for c in matrix.columns:
            cell = matrix.cell(r, c)
            cells.append(_cell_text(cell) if cell is not None else Text(DASH, style="dim"))
        table.add_row(*cells)
    return table


def _cell_text(cell: Cell) -> Text:
    text = Text()
    for i, (label, value) in enumerate(cell.lines()):
        if i:
            text.append("\n")
        if label == "verdict":
            text.append(value, style=_STYLE.get(cell.verdict, ""))
        else:
            text.append(f"{label}: ", style="dim")
            text.append(value)
    return text


def _violations(result: dict[str, Any]) -> int:
    listed = result.get("violations")
    if listed:
        return len(listed)
    return 1 if result.get("valid") is False else 0


def _max(values: Iterable[Any]) -> float | None:
    nums = [float(v) for v in values if isinstance(v, (int, float))]
    return max(nums, default=None)
