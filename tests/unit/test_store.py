"""The run store: op-by-op appends that survive a crash, run directories, latest link."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.ops import Op
from core.store import HistoryWriter, new_run_dir, read_history_jsonl, read_jsonl


def test_history_writer_appends_and_reads_back(tmp_path: Path) -> None:
    ops = [Op(i, i * 10, 0, t, "write", 1) for i, t in enumerate(["invoke", "ok"])]
    with HistoryWriter(tmp_path / "h.jsonl") as w:
        w.write(ops[0])
        # visible on disk before the writer closes: a crash now loses nothing
        assert read_history_jsonl(tmp_path / "h.jsonl")[0] == ops[0]
        w.write(ops[1])
    assert list(read_history_jsonl(tmp_path / "h.jsonl")) == ops


def test_a_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    p = tmp_path / "h.jsonl"
    p.write_text(
        '{"index":0,"time":0,"process":0,"type":"invoke","f":"read","value":null}\n'
        '{"index":1,"time":5,"proc'
    )
    assert len(read_history_jsonl(p)) == 1


def test_a_bad_line_in_the_middle_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "h.jsonl"
    p.write_text('{"a": 1}\nnot json\n{"b": 2}\n')
    with pytest.raises(ValueError, match=":2: not a JSON object"):
        list(read_jsonl(p))


def test_new_run_dirs_are_unique_and_latest_follows(tmp_path: Path) -> None:
    a = new_run_dir(tmp_path, "t", now=0)
    b = new_run_dir(tmp_path, "t", now=0)
    assert a != b and a.is_dir() and b.is_dir()
    assert (tmp_path / "latest").resolve() == b.resolve()
