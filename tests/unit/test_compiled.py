"""The mypyc build of the search: used only when it matches the sources, and it gives the
plain modules' results, step counts and counterexamples included."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from core import compiled

ROOT = Path(__file__).resolve().parents[2]
REFERENCES = ROOT.parent / "shared" / "histories"
REQUIRED = os.environ.get("HARNESS_REQUIRE_COMPILED") == "1"

# Run in a child process: every reference history's details (times left out) as JSON lines.
DUMP = """
import csv, json, sys
from pathlib import Path
from core import compiled
from checkers.linearizability import check
from core.formats import read_history
root = Path(sys.argv[1])
print(json.dumps(compiled.active()))
for r in csv.DictReader(open(root / "MANIFEST.tsv"), delimiter="\\t"):
    if r["file"].endswith((".log", ".txt", ".edn")) and r["expected_verdict"] != "none":
        history, model = read_history(root / r["file"])
        d = dict(check(history, model).details)
        d.pop("elapsed_s"), d.pop("verdict_s"), d.pop("phases_s")
        print(json.dumps([r["file"], d], sort_keys=True, default=str))
"""


def _copy_sources(dest: Path) -> None:
    for rel in compiled.SOURCES:
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, dest / rel)


def test_the_digest_names_the_sources(tmp_path: Path) -> None:
    _copy_sources(tmp_path)
    before = compiled.digest(tmp_path)
    assert before == compiled.digest(ROOT)
    search = tmp_path / "checkers/linear/search.py"
    search.write_text(search.read_text() + "\n# edited\n")
    assert compiled.digest(tmp_path) != before
    search.write_text((ROOT / "checkers/linear/search.py").read_text())
    model = tmp_path / "checkers/linear/model.py"  # a module whose types the build uses
    model.write_text(model.read_text() + "\n")
    assert compiled.digest(tmp_path) != before
    model.write_text((ROOT / "checkers/linear/model.py").read_text())
    header = tmp_path / "core/struct_slots.h"  # included by the C modules
    header.write_text(header.read_text() + "\n")
    assert compiled.digest(tmp_path) != before


def test_only_a_finished_build_of_these_sources_goes_on_the_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HARNESS_COMPILED_DIR", str(tmp_path))
    monkeypatch.delenv("HARNESS_PURE_PYTHON", raising=False)
    plain = ["/src/checkers/linear"]
    assert compiled.extend_path("checkers.linear", plain) == plain  # no build
    where = tmp_path / compiled.digest()
    where.mkdir()
    assert compiled.extend_path("checkers.linear", plain) == plain  # unfinished
    (tmp_path / "0123456789abcdef").mkdir()
    (tmp_path / "0123456789abcdef" / compiled.DONE).write_text("")  # other sources
    assert compiled.extend_path("checkers.linear", plain) == plain
    (where / compiled.DONE).write_text("")
    assert compiled.extend_path("checkers.linear.models", plain) == [
        str(where / "checkers" / "linear" / "models"),
        *plain,
    ]
    monkeypatch.setenv("HARNESS_PURE_PYTHON", "1")
    assert compiled.extend_path("checkers.linear", plain) == plain
    monkeypatch.delenv("HARNESS_PURE_PYTHON")
    assert compiled.prune() == [tmp_path / "0123456789abcdef"]
    assert (where / compiled.DONE).exists()


def test_a_build_whose_sources_were_touched_is_stamped_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 36: a source touched but not changed (a git checkout sets its time) made every
    start hash all the sources until the next build; the build its digest finds takes the
    new stamp, and the next start finds it by that, without hashing. A stamp that is a link
    is not written through."""
    monkeypatch.setenv("HARNESS_COMPILED_DIR", str(tmp_path))
    where = tmp_path / compiled.digest()
    where.mkdir()
    (where / compiled.DONE).write_text("")
    (where / compiled.STAMP).write_text("the stamp of sources touched since\n")
    compiled._current.cache_clear()
    try:
        assert compiled._current() == where.name
        assert (where / compiled.STAMP).read_text() == compiled.stamp()
        with monkeypatch.context() as m:
            m.setattr(compiled, "digest", lambda *_: pytest.fail("hashed the sources again"))
            compiled._current.cache_clear()
            assert compiled._current() == where.name
        outside = tmp_path / "outside"
        outside.write_text("kept")
        (where / compiled.STAMP).unlink()
        (where / compiled.STAMP).symlink_to(outside)
        compiled._current.cache_clear()
        assert compiled._current() == where.name
        assert outside.read_text() == "kept"
    finally:
        compiled._current.cache_clear()


def _dump(pure: bool) -> tuple[bool, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("HARNESS_PURE_PYTHON", None)
    if pure:
        env["HARNESS_PURE_PYTHON"] = "1"
    out = subprocess.run(
        [sys.executable, "-c", DUMP, str(REFERENCES)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout.splitlines()
    return json.loads(out[0]), out[1:]


@pytest.mark.skipif(
    not (REFERENCES / "MANIFEST.tsv").is_file(), reason=f"reference histories not at {REFERENCES}"
)
def test_the_compiled_search_agrees_with_the_plain_one_on_every_reference_history() -> None:
    if not compiled.active():
        if REQUIRED:
            pytest.fail(
                "HARNESS_REQUIRE_COMPILED=1 but the search runs as plain Python: run "
                "scripts/compile_checker.py --require to see why the build fails"
            )
        pytest.skip("no compiled build of the current sources (scripts/compile_checker.py)")
    fast, compiled_out = _dump(pure=False)
    slow, plain_out = _dump(pure=True)
    assert (fast, slow) == (True, False)
    with open(REFERENCES / "MANIFEST.tsv") as f:
        rows = csv.DictReader(f, delimiter="\t")
        n = sum(
            1
            for r in rows
            if r["file"].endswith(("log", "txt", "edn")) and r["expected_verdict"] != "none"
        )
    assert len(compiled_out) == n > 100
    for a, b in zip(compiled_out, plain_out, strict=True):
        assert a == b, json.loads(a)[0]
