"""The comparison matrix: targets by faults, from run directories or parent folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from core.errors import HarnessError
from harness.report import compare, render_matrix_table, write_matrix_html
from tests.support.synthetic import demo_runs, lock_run


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return demo_runs(tmp_path_factory.mktemp("results"))


def test_rows_are_targets_and_columns_are_faults(runs: dict[str, Path]) -> None:
    m = compare([runs["lock-fenced"].parents[1]])  # the results folder
    assert m.runs == 4
    assert m.rows == ("sim · cas-register", "sim · lock", "sim · lock · fencing off")
    assert m.columns == ("none", "client-pause", "partition")
    assert m.cell("sim · lock", "none") is None


def test_a_cell_holds_verdict_stale_writes_and_handover(runs: dict[str, Path]) -> None:
    m = compare([runs["lock-fenced"], runs["lock-unfenced"]])
    bad = m.cell("sim · lock · fencing off", "client-pause")
    good = m.cell("sim · lock", "client-pause")
    assert bad is not None and good is not None
    assert bad.valid is False and good.valid is True
    assert (bad.total("stale_accepted"), bad.total("stale_rejected")) == (1, 0)
    assert (good.total("stale_accepted"), good.total("stale_rejected")) == (0, 1)
    assert bad.total("violations") == 1 and good.total("violations") == 0
    assert bad.longest("danger_window_s") == pytest.approx(4.1, abs=0.5)
    assert 0 <= (good.longest("handover_delay_s") or -1) < 0.1


def test_latency_and_availability_come_from_the_operations(runs: dict[str, Path]) -> None:
    m = compare([runs["cas-valid"]])
    cell = m.cell("sim · cas-register", "partition")
    assert cell is not None
    stats = cell.stats
    p50, p99 = stats.latency_quantile(0.5), stats.latency_quantile(0.99)
    assert p50 is not None and p99 is not None and 0 < p50 <= p99
    # operations during partitions fail more often
    assert stats.availability_clear is not None and stats.availability_in_fault is not None
    assert stats.availability_in_fault < stats.availability_clear


def test_runs_of_one_cell_are_pooled(tmp_path: Path) -> None:
    a = lock_run(tmp_path / "a" / "20260101T000000", fencing=False)
    b = lock_run(tmp_path / "b" / "20260101T000000", fencing=False, pause_for_s=7)
    from harness.analysis import check_run

    check_run(a)
    check_run(b)
    cell = compare([tmp_path]).cell("sim · lock · fencing off", "client-pause")
    assert cell is not None and len(cell.runs) == 2
    assert cell.total("stale_accepted") == 2
    assert dict(cell.lines())["verdict"] == "INVALID (2 of 2 runs invalid)"


def test_the_matrix_renders_in_the_terminal_and_as_a_page(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    m = compare([runs["lock-fenced"].parents[1]])
    console = Console(record=True, width=200)
    console.print(render_matrix_table(m))
    text = console.export_text()
    assert "client-pause" in text and "INVALID" in text and "latency p50/p95/p99" in text
    page = write_matrix_html(m, tmp_path / "matrix.html").read_text()
    assert "<script src" not in page and 'class="matrix"' in page
    assert "../" in page  # runs linked relative to the page


def test_no_run_found_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="no run directory"):
        compare([tmp_path])


def test_a_cell_says_the_service_rules_its_runs_recorded(tmp_path: Path) -> None:
    """Issue 30: the lock matrix showed Consul's handover delay as if Consul were slow,
    not its rule (a session TTL is a lower bound) nor the lock-delay the harness set."""
    import json

    from clusters.consul.spec import RULES
    from harness.analysis import check_run

    run = lock_run(tmp_path / "r" / "20260101T000000", fencing=False)
    test = json.loads((run / "test.json").read_text())
    test["service_rules"] = [r.to_dict() for r in RULES]
    (run / "test.json").write_text(json.dumps(test))
    check_run(run)
    (cell,) = compare([tmp_path]).cells.values()
    said = dict(cell.lines())["service rules"]
    assert said == "session lock-delay 0 s (default 15 s); session TTL a lower bound"
