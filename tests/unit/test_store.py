"""The run store: op-by-op appends that survive a crash, run directories, latest link."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from core.ops import Op
from core.store import (
    HistoryWriter,
    StoreError,
    new_run_dir,
    read_history_jsonl,
    read_jsonl,
    utc_stamp,
)


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


def test_run_directories_are_named_in_utc_with_the_zone_marked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever the machine's zone: 1 s after the epoch is 19700101T000001Z."""
    monkeypatch.setenv("TZ", "Asia/Kathmandu")  # UTC+05:45: local time would differ
    time.tzset()
    try:
        assert new_run_dir(tmp_path, "t", now=1).name == "19700101T000001Z"
        assert utc_stamp(1_764_940_374) == "20251205T131254Z"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_each_test_folder_has_a_latest_link_to_its_newest_run(tmp_path: Path) -> None:
    a1 = new_run_dir(tmp_path, "a", now=0)
    b = new_run_dir(tmp_path, "b", now=0)
    a2 = new_run_dir(tmp_path, "a", now=0)
    assert (tmp_path / "a" / "latest").resolve() == a2.resolve() != a1.resolve()
    assert (tmp_path / "b" / "latest").resolve() == b.resolve()
    assert (tmp_path / "latest").resolve() == a2.resolve()
    assert os.readlink(tmp_path / "a" / "latest") == a2.name  # relative: the folder moves
    assert os.readlink(tmp_path / "latest") == f"a/{a2.name}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b", "latest"]  # no tmp left


def test_a_latest_link_pointing_outside_is_replaced_never_written_through(
    tmp_path: Path,
) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    (out / "t").mkdir(parents=True)
    outside.mkdir()
    (outside / "keep").write_text("x")
    for link in (out / "latest", out / "t" / "latest", out / "t" / f".latest-{os.getpid()}"):
        link.symlink_to(outside, target_is_directory=True)
    run = new_run_dir(out, "t", now=0)
    assert sorted(p.name for p in outside.iterdir()) == ["keep"]  # nothing written there
    assert (out / "t" / "latest").resolve() == run.resolve() == (out / "latest").resolve()
    assert not (out / "t" / f".latest-{os.getpid()}").exists()


def test_a_file_or_folder_named_latest_is_left_alone(tmp_path: Path) -> None:
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "mine").write_text("x")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "latest").write_text("notes")
    run = new_run_dir(tmp_path, "t", now=0)
    assert run.is_dir() and (tmp_path / "latest" / "mine").read_text() == "x"
    assert (tmp_path / "t" / "latest").read_text() == "notes"


def test_a_test_folder_that_is_a_symlink_is_refused(tmp_path: Path) -> None:
    """``--name latest`` would otherwise write into the previous run's directory, and a
    linked test folder anywhere outside the output folder."""
    (tmp_path / "elsewhere").mkdir()
    new_run_dir(tmp_path / "out", "t", now=0)
    (tmp_path / "out" / "away").symlink_to(tmp_path / "elsewhere")
    for name in ("latest", "away"):
        with pytest.raises(StoreError, match="is a symbolic link: a run is never written"):
            new_run_dir(tmp_path / "out", name, now=0)
    assert list((tmp_path / "elsewhere").iterdir()) == []
