"""Where ``--html OUT`` puts report pages and how one is written: atomically, beside itself,
never through a symbolic link; an OUT that cannot be used is refused in one line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from core.errors import HarnessError
from harness.report._out import page_names, report_targets, write_page


def _leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp"))


def test_a_page_is_written_whole_and_no_temporary_file_stays(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert write_page(out, "<p>é</p>") == out
    assert out.read_text(encoding="utf-8") == "<p>é</p>"
    write_page(out, "second")
    assert out.read_text() == "second"
    assert _leftovers(tmp_path) == []


def test_a_page_is_readable_as_the_umask_allows(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        write_page(tmp_path / "r.html", "x")
    finally:
        os.umask(old)
    assert (tmp_path / "r.html").stat().st_mode & 0o777 == 0o644


def test_a_failed_rename_leaves_the_old_page_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "r.html"
    out.write_text("old")

    def full(src: object, dst: object, **dir_fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(HarnessError, match=r"r\.html: the report could not be written \(No space"):
        write_page(out, "new")
    assert out.read_text() == "old"
    assert _leftovers(tmp_path) == []


def test_a_page_is_never_written_through_a_symbolic_link(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    link = tmp_path / "r.html"
    link.symlink_to(victim)
    with pytest.raises(HarnessError, match="a symbolic link"):
        write_page(link, "new")
    assert victim.read_text() == "keep" and link.is_symlink()
    dangling = tmp_path / "d.html"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(HarnessError, match="a symbolic link"):
        write_page(dangling, "new")
    assert not (tmp_path / "nowhere").exists()


def test_a_page_whose_directory_is_missing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="does not exist"):
        write_page(tmp_path / "no" / "r.html", "x")
    assert list(tmp_path.iterdir()) == []


def test_one_path_writes_the_page_out_names(tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    assert report_targets(["a/x.log"], str(out)) == [out]
    assert not out.exists()  # named, not made


def test_one_path_and_an_existing_directory_writes_into_it(tmp_path: Path) -> None:
    assert report_targets(["a/x.log"], str(tmp_path)) == [tmp_path / "x.log.html"]


def test_several_paths_make_the_directory_and_number_a_name_met_again(tmp_path: Path) -> None:
    out = tmp_path / "pages"
    got = report_targets(["a/x.log", "b/x.log", "c.edn", "a/x.log"], str(out))
    assert out.is_dir()
    assert [p.name for p in got] == ["x.log.html", "x.log-2.html", "c.edn.html", "x.log-3.html"]
    assert all(p.parent == out for p in got)


def test_page_names_of_directories_and_the_current_one() -> None:
    assert page_names(["store/latest/", "."]) == ["latest.html", f"{Path.cwd().name}.html"]


@pytest.mark.parametrize("paths", [["x"], ["x", "y"]])
def test_an_out_whose_parent_is_missing_is_refused_in_one_line(
    tmp_path: Path, paths: list[str]
) -> None:
    out = tmp_path / "no" / "out"
    with pytest.raises(HarnessError) as e:
        report_targets(paths, str(out))
    assert "\n" not in str(e.value)
    assert f"--html {out}: its directory {out.parent} does not exist" in str(e.value)
    assert not (tmp_path / "no").exists()


def test_a_file_as_out_for_several_paths_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "f.html"
    out.write_text("x")
    with pytest.raises(HarnessError, match="2 paths need a directory"):
        report_targets(["a", "b"], str(out))


@pytest.mark.parametrize("paths", [["x"], ["x", "y"]])
def test_a_link_as_out_is_refused(tmp_path: Path, paths: list[str]) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(HarnessError, match="a symbolic link"):
        report_targets(paths, str(link))
    assert list(real.iterdir()) == []
