"""Issue 16's budgets: --time-limit covers reading and preparing, --memory-limit ends in
unknown with the reason, and running out of memory anyway is exit 255 with one line built
beforehand (never 1, never a chain of tracebacks)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from test_cli import run

from checkers.linear.simulate import iter_simulated
from core.formats.budget import Budget, OutOfBudget, parse_size
from harness import checkcmd
from harness.cli import EXIT_CRASH


def no_memory(*args: object, **kwargs: object) -> object:
    """A stand-in for a step that runs out of memory."""
    raise MemoryError


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A linearizable register history of 60,000 events over 50 keys."""
    path = tmp_path_factory.mktemp("big") / "history.jsonl"
    with open(path, "w") as f:
        for op in iter_simulated("register", 30_000, processes=10, keys=50, seed=5):
            f.write(op.to_json() + "\n")
    (path.parent / "test.json").write_text('{"model": "register"}\n')
    return path


def test_the_time_limit_covers_reading(capsys: pytest.CaptureFixture[str], big: Path) -> None:
    """A limit shorter than the reading (about 30 ms for these 60,000 events here: a limit
    of 50 ms, once enough, no longer is) ends it, unknown, with how far it got."""
    started = time.perf_counter()
    code, out, _ = run(capsys, "check", "--time-limit", "0.002", str(big))
    assert time.perf_counter() - started < 2.0
    assert code == 2, out
    assert "out of the time limit (0.002 s) while reading, after " in out


def test_the_time_limit_covers_preparing(big: Path) -> None:
    """Out of time between the partitions' preparation steps: unknown, with the reason."""
    from checkers import linearizability
    from core.formats import read_history

    history, model = read_history(big)
    result = linearizability.check(history, model, 1e-9)
    assert result.valid == "unknown"
    assert "while preparing the partitions" in (result.details["reason"])


def test_the_memory_limit_ends_in_unknown(capsys: pytest.CaptureFixture[str], big: Path) -> None:
    code, out, _ = run(capsys, "check", "--memory-limit", "1M", str(big))
    assert code == 2
    assert "out of the memory limit (1 MiB) while reading, after 0 ops; raise --memory-limit" in out


def test_a_budget_says_what_ran_out() -> None:
    with pytest.raises(OutOfBudget, match=r"out of the memory limit \(1 MiB\) while reading"):
        Budget(None, 1 << 20).check("reading", 7)
    assert parse_size("2G") == 2 << 30 and parse_size("512MiB") == 512 << 20


@pytest.mark.parametrize(
    ("where", "name", "line"),
    [
        (checkcmd.linearizability, "check", "while checking {} after 60000 ops"),
        (checkcmd, "read_file", "while reading {}"),
        (checkcmd, "check_paths", ""),  # main's handler: nothing known of the file
    ],
)
def test_out_of_memory_is_255_and_one_prepared_line(
    capfd: pytest.CaptureFixture[str],
    big: Path,
    monkeypatch: pytest.MonkeyPatch,
    where: object,
    name: str,
    line: str,
) -> None:
    """Issue 16: out of memory exited 1 after a 47-line chain of MemoryErrors."""
    monkeypatch.setattr(where, name, no_memory)
    code, _, err = run(capfd, "check", str(big))  # the line is written to fd 2 directly
    assert code == EXIT_CRASH
    said = f" {line.format(big)}" if line else ""
    assert err == f"harness: out of memory{said}; try --memory-limit or fewer files\n"
