"""Issue 29: nothing is ever written through a symbolic link.

Links of every kind (to a file outside the output root, dangling, to a folder outside,
and a folder on the way that is a link) are planted at every name the harness writes;
each write is refused in one line (exit 254 from the command line), the link is left as
it was, and nothing outside the output root changes (the outside tree is hashed before
and after). ``harness serve`` writes nothing at all. The only links the harness replaces
are its own ``latest`` links, and a link at a temporary name is never touched (the
harness makes its temporary files under new names of its own).
"""

from __future__ import annotations

import ast
import hashlib
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_cli import run

from core.errors import HarnessError
from core.store import HistoryWriter, JsonlWriter, point_latest, write_json
from core.writes import WriteRefused, make_dirs, open_append, write_bytes
from harness.cli import EXIT_BAD_ARGS
from harness.commands.args import UsageError
from tests.support.synthetic import lock_run

KINDS = ("file", "dangling", "folder")
"""A link at the name: to a file outside, to nothing, to a folder outside."""


def snapshot(tree: Path) -> dict[str, str]:
    """Every entry below ``tree`` (links not followed): its kind and content's digest,
    or a link's target."""
    out: dict[str, str] = {}
    for top, dirs, files in os.walk(tree):
        for name in (*dirs, *files):
            p = Path(top) / name
            rel = str(p.relative_to(tree))
            if p.is_symlink():
                out[rel] = "link " + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


@pytest.fixture
def outside(tmp_path: Path) -> Iterator[Path]:
    """A tree outside every output root; asserted unchanged after each test."""
    tree = tmp_path / "outside"
    (tree / "folder").mkdir(parents=True)
    (tree / "victim.txt").write_text("precious\n")
    (tree / "folder" / "kept.txt").write_text("kept\n")
    before = snapshot(tree)
    yield tree
    assert snapshot(tree) == before, "something outside the output root changed"


def plant(at: Path, kind: str, outside: Path) -> None:
    """A link of ``kind`` at ``at``, to somewhere in ``outside``."""
    at.parent.mkdir(parents=True, exist_ok=True)
    if at.is_symlink() or at.is_file():
        at.unlink()
    target = {"file": "victim.txt", "dangling": "nothing", "folder": "folder"}[kind]
    at.symlink_to(outside / target)


# ---- every writer, every kind of link ------------------------------------------------


def _log(path: Path) -> None:
    from harness.logs import log_to

    handler = log_to(path)  # opens at once: harness.log
    logging.getLogger().removeHandler(handler)
    handler.close()


def _writable(path: Path) -> None:
    from harness.commands.args import writable_file

    writable_file(str(path), "--html")


def _page(path: Path) -> None:
    from harness.report._out import write_page

    write_page(path, "<p>page</p>")


def _junit(path: Path) -> None:
    from harness.report._junit import Case, write_junit

    write_junit([Case("a", "b", True)], path)


def _matrix(path: Path) -> None:
    from harness.report import compare, write_matrix_html

    runs = path.parent.parent / "runs"  # beside the output root
    write_matrix_html(compare([lock_run(runs / "t" / "20260101T000000Z")]), path)


WRITERS: dict[str, Callable[[Path], object]] = {
    "test.json / results.json / suite.json": lambda p: write_json(p, {"a": 1}),
    "history.jsonl": lambda p: HistoryWriter(p).close(),
    "events.jsonl / resource.jsonl": lambda p: JsonlWriter(p).close(),
    "harness.log": _log,
    "report.html": _page,
    "junit.xml": _junit,
    "matrix.html": _matrix,
    "--html / --junit checked beforehand": _writable,
    "junit-summary --out": lambda p: open_append(p, text=True).close(),
    "any whole file": lambda p: write_bytes(p, b"x"),
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_link_at_the_name_is_refused_and_left_as_it_is(
    tmp_path: Path, outside: Path, writer: str, kind: str
) -> None:
    root = tmp_path / "out"
    root.mkdir()
    name = root / "file"
    plant(name, kind, outside)
    link = os.readlink(name)
    with pytest.raises((HarnessError, UsageError), match="a symbolic link") as e:
        WRITERS[writer](name)  # each is one line, exit 254
    assert "\n" not in str(e.value) and str(name) in str(e.value)
    assert os.readlink(name) == link  # refused: not replaced either
    assert sorted(p.name for p in root.iterdir()) == ["file"]  # no temporary file left


def test_the_index_is_refused_at_a_link(tmp_path: Path, outside: Path) -> None:
    from harness.report import write_index

    for kind in KINDS:
        plant(tmp_path / "index.html", kind, outside)
        with pytest.raises(WriteRefused, match=r"index\.html: a symbolic link"):
            write_index(tmp_path)


ROOTED: dict[str, Callable[[Path, Path], object]] = {
    "write_json": lambda p, root: write_json(p, {}, root=root, parents=True),
    "JsonlWriter": lambda p, root: JsonlWriter(p, root=root).close(),
    "make_dirs": lambda p, root: make_dirs(p, root=root),
}


@pytest.mark.parametrize("kind", ["folder", "dangling"])
@pytest.mark.parametrize("writer", list(ROOTED))
def test_a_link_on_the_way_below_the_root_is_refused(
    tmp_path: Path, outside: Path, writer: str, kind: str
) -> None:
    root = tmp_path / "out"
    plant(root / "a", kind, outside)
    with pytest.raises(WriteRefused, match=f"{root / 'a'}: a symbolic link"):
        ROOTED[writer](root / "a" / "b" / "file", root)


def test_a_link_at_a_temporary_name_is_never_touched(tmp_path: Path, outside: Path) -> None:
    """The old write_json wrote through ``NAME.tmp``, a name anyone could plant."""
    plant(tmp_path / "results.json.tmp", "file", outside)
    plant(tmp_path / ".results.json.tmp", "file", outside)
    write_json(tmp_path / "results.json", {"valid": True})
    assert (tmp_path / "results.json").read_text() == '{\n  "valid": true\n}\n'
    assert not (tmp_path / "results.json").is_symlink()
    assert (tmp_path / "results.json.tmp").is_symlink()


def test_a_fifo_at_an_appended_name_is_refused_not_waited_for(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "history.jsonl")
    with pytest.raises(WriteRefused, match="a FIFO"):
        HistoryWriter(tmp_path / "history.jsonl")


def test_latest_is_the_one_link_replaced_and_only_the_link(tmp_path: Path, outside: Path) -> None:
    run_dir = tmp_path / "t" / "20260101T000000Z"
    run_dir.mkdir(parents=True)
    for kind in KINDS:
        plant(tmp_path / "latest", kind, outside)
        point_latest(tmp_path, run_dir)
        assert (tmp_path / "latest").resolve() == run_dir


# ---- the commands ----------------------------------------------------------------------


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return lock_run(tmp_path / "results" / "lock" / "20260101T000000Z", fencing=False)


def one_line_refusal(code: int, err: str, where: Path) -> None:
    assert code == EXIT_BAD_ARGS, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"{where}: a symbolic link" in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("name", ["results.json", "report.html"])
def test_report_refuses_a_link_in_the_run_directory(
    capsys: pytest.CaptureFixture[str], run_dir: Path, outside: Path, kind: str, name: str
) -> None:
    """Issue 29: ``harness report RUN`` re-rendered the report through report.html."""
    plant(run_dir / name, kind, outside)
    code, _, err = run(capsys, "report", str(run_dir))
    one_line_refusal(code, err, run_dir / name)


@pytest.mark.parametrize("kind", KINDS)
def test_check_refuses_a_link_at_results_and_still_says_the_verdict(
    capsys: pytest.CaptureFixture[str], run_dir: Path, outside: Path, kind: str
) -> None:
    plant(run_dir / "results.json", kind, outside)
    code, out, err = run(capsys, "check", str(run_dir))
    one_line_refusal(code, err, run_dir / "results.json")
    assert f"{run_dir}: invalid" in out and "1 file(s) not written" in out


def test_check_ignores_a_link_planted_at_the_old_temporary_name(
    capsys: pytest.CaptureFixture[str], run_dir: Path, outside: Path
) -> None:
    """Issue 29: ``harness check RUN`` followed a planted results.json.tmp link."""
    plant(run_dir / "results.json.tmp", "file", outside)
    code, out, err = run(capsys, "check", str(run_dir))
    assert code == 1 and not err
    assert f"results: {run_dir / 'results.json'}" in out
    assert not (run_dir / "results.json").is_symlink()


@pytest.mark.parametrize("kind", ["folder", "dangling"])
def test_check_out_refuses_a_link_on_the_way(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, run_dir: Path, outside: Path, kind: str
) -> None:
    out = tmp_path / "out"
    plant(out / "lock", kind, outside)  # out/<test>/<timestamp>/results.json
    code, _, err = run(capsys, "check", "--out", str(out), str(run_dir))
    one_line_refusal(code, err, out / "lock")


@pytest.mark.parametrize("flag", ["--html", "--junit"])
@pytest.mark.parametrize("kind", KINDS)
def test_compare_refuses_a_link_as_its_output(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    run_dir: Path,
    outside: Path,
    flag: str,
    kind: str,
) -> None:
    page = tmp_path / "page"
    plant(page, kind, outside)
    code, _, err = run(capsys, "compare", str(run_dir), flag, str(page))
    one_line_refusal(code, err, page)


@pytest.mark.parametrize("kind", KINDS)
def test_junit_summary_refuses_a_link_as_its_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, outside: Path, kind: str
) -> None:
    from harness.report._junit import Case, write_junit

    junit = write_junit([Case("a", "b", True)], tmp_path / "junit.xml")
    summary = tmp_path / "summary.md"
    plant(summary, kind, outside)
    code, _, err = run(capsys, "junit-summary", str(junit), "--out", str(summary))
    one_line_refusal(code, err, summary)


@pytest.mark.parametrize("kind", ["folder", "dangling"])
def test_a_suite_refuses_a_link_as_its_folder_before_any_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, outside: Path, kind: str
) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text('[suite]\nname = "t"\n[[run]]\nname = "one"\n')
    out = tmp_path / "out"
    plant(out / "suite-t", kind, outside)
    code, _, err = run(capsys, "suite", "run", str(suite), "-o", str(out))
    one_line_refusal(code, err, out / "suite-t")
    assert sorted(p.name for p in out.iterdir()) == ["suite-t"]


# ---- one writer --------------------------------------------------------------------------

PACKAGES = ("core", "checkers", "workloads", "clusters", "nemesis", "harness")
ELSEWHERE = {
    "core/writes.py": "the one writer of the harness's files",
    "core/store.py": "Reserve (O_EXCL: never a link) and point_latest (the own `latest` link)",
    "core/compiled.py": "the compiled checker's build cache, not a run's output",
    "core/formats/files.py": "opens files for reading",
    "harness/terminal.py": "opens /dev/null",
    "clusters/_imagecache.py": "the image cache",
    "clusters/image_build.py": "an image's build context",
    "clusters/_rootfs.py": "an image's root file system being built",
    "clusters/ssh/debs.py": "the package cache",
    "clusters/remote/base.py": "a file in its own temporary folder, to upload",
    "clusters/_powerfs/disk.py": "a node's data directory, inside the node: the server's own "
    "writes, passed through the power-loss layer",
    "clusters/_powerfs/mount.py": "the same layer's FUSE callbacks, inside the node",
}
"""Modules that write files by other means, and why that is not a harness output."""


def _writes(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """The calls in ``tree`` that write a file other than through core.writes."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
        modes = [
            a.value
            for a in [*node.args, *(k.value for k in node.keywords if k.arg == "mode")]
            if isinstance(a, ast.Constant) and isinstance(a.value, str)
        ]
        if name == "open" and owner != "tarfile" and any(set(m) & set("wax+") for m in modes):
            yield node.lineno, f"open(..., {modes})"
        elif isinstance(f, ast.Attribute) and name in ("write_text", "write_bytes", "symlink_to"):
            yield node.lineno, f".{name}()"
        elif (owner, name) in {("os", "open"), ("os", "replace"), ("os", "rename")}:
            yield node.lineno, f"{owner}.{name}()"
        elif owner == "shutil" and name.startswith(("copy", "move")):
            yield node.lineno, f"shutil.{name}()"


def test_every_file_is_written_through_core_writes() -> None:
    """A new writer that opens, copies or renames files itself would follow links."""
    top = Path(__file__).resolve().parents[2]
    found = []
    for package in PACKAGES:
        for path in sorted((top / package).rglob("*.py")):
            rel = path.relative_to(top).as_posix()
            if rel not in ELSEWHERE:
                found += [f"{rel}:{n}: {what}" for n, what in _writes(ast.parse(path.read_text()))]
    assert found == [], "write through core.writes (never through a link):\n" + "\n".join(found)
