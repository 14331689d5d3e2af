"""``harness check --stream``: a history split by key on disk and checked one key at a
time gives what the in-memory check gives (verdict, invalid key, counterexample), and
leaves nothing behind, however it ends."""

from __future__ import annotations

import ast
import json
import os
import signal
import tempfile
from pathlib import Path
from typing import Any

import pytest
from test_cli import run

from checkers.linear.simulate import simulate
from core.formats.budget import Budget
from core.ops import Op
from core.writes import SCRATCH_PREFIX
from harness import checkcmd, checkstream
from harness.checkstream import Streaming


def write_history(folder: Path, ops: list[Op], model: str = "register") -> Path:
    """``ops`` as a run's history.jsonl in ``folder``, its test.json naming ``model``."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "test.json").write_text(json.dumps({"model": model}))
    path = folder / "history.jsonl"
    path.write_text("".join(op.to_json() + "\n" for op in ops))
    return path


def history(n: int = 3000, keys: int = 12, seed: int = 7) -> list[Op]:
    return list(simulate("register", n, processes=6, keys=keys, values=4, seed=seed))


def stale(ops: list[Op], keys: set[Any]) -> list[Op]:
    """``ops`` with the first ok read of each of ``keys`` after the middle reading 9,
    which nothing writes: each of those keys invalid."""
    out, left = [], set(keys)
    for op in ops:
        if op.key in left and op.index > len(ops) // 2 and op.type == "ok" and op.f == "read":
            op = op.with_(value=9)
            left.discard(op.key)
        out.append(op)
    assert not left
    return out


def both(path: Path, tmp: Path, **kw: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The outcomes of ``path`` checked in memory and streamed (its scratch folder in
    ``tmp``, which must be empty again after)."""
    spill = tmp / "spill"
    spill.mkdir(exist_ok=True)
    got = []
    for mode in (False, True):
        got.append(
            checkcmd.check_path(
                path,
                model=None,
                time_limit=kw.get("time_limit"),
                memory_limit=None,
                out=None,
                oom=[b""],
                streaming=Streaming(mode, spill),
            )
        )
        assert os.listdir(spill) == []
    memory, streamed = got
    assert (memory["read"], streamed["read"]) == ("in memory", "streamed")
    return memory, streamed


def test_a_valid_history_streamed_is_valid_with_the_same_totals(tmp_path: Path) -> None:
    path = write_history(tmp_path / "run", history())
    memory, streamed = both(path, tmp_path)
    assert memory["valid"] is True and streamed["valid"] is True
    assert streamed["summary"] == memory["summary"]
    for name in ("ops", "partitions", "partitions_checked", "steps", "configs", "path"):
        assert streamed["details"][name] == memory["details"][name], name
    assert streamed["ops"] == memory["ops"]


def test_an_invalid_history_streamed_names_the_same_key_and_counterexample(
    tmp_path: Path,
) -> None:
    # Three invalid keys: the in-memory check names the one with the fewest operations
    # kept (the register path's order), not the first in the file; so must this one.
    path = write_history(tmp_path / "run", stale(history(), {1, 5, 10}))
    memory, streamed = both(path, tmp_path)
    assert memory["valid"] is False and streamed["valid"] is False
    assert streamed["summary"] == memory["summary"]
    assert streamed["explanation"] == memory["explanation"]
    for name in ("counterexample", "named_anomalies", "partitions_checked", "steps", "ops"):
        assert streamed["details"][name] == memory["details"][name], name


def test_a_check_out_of_time_streamed_is_unknown_too(tmp_path: Path) -> None:
    path = write_history(tmp_path / "run", history(20000, keys=50))
    memory, streamed = both(path, tmp_path, time_limit=0.001)
    assert memory["valid"] == "unknown" and streamed["valid"] == "unknown"
    assert "out of the time limit" in streamed["summary"]


def test_the_command_line_streams_on_asking_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_history(tmp_path / "run", stale(history(), {3}))
    lines = {}
    for flag in ("--no-stream", "--stream", ""):
        code, out, _ = run(capsys, "check", "--json", *([flag] if flag else []), str(path))
        assert code == 1
        lines[flag] = json.loads(out)
    assert lines["--stream"]["read"] == "streamed"
    assert lines["--no-stream"]["read"] == lines[""]["read"] == "in memory"  # small: whole
    assert lines["--stream"]["summary"] == lines["--no-stream"]["summary"]
    assert set(os.listdir(path.parent)) == {"test.json", "history.jsonl"}  # nothing left
    monkeypatch.setattr(checkstream, "STREAM_BYTES", 1)  # by size: now big enough
    code, out, _ = run(capsys, "check", "--json", str(path))
    assert code == 1 and json.loads(out)["read"] == "streamed"
    code, out, _ = run(capsys, "check", "--stream", str(path))
    assert code == 1 and ", streamed)" in out.splitlines()[0]


def test_an_edn_history_is_read_in_memory_and_the_note_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    edn = tmp_path / "h.edn"
    edn.write_text(
        "{:process 0, :type :invoke, :f :write, :value 1}\n"
        "{:process 0, :type :ok, :f :write, :value 1}\n"
    )
    code, out, _ = run(capsys, "check", "--json", "--stream", str(edn))
    assert code == 0
    line = json.loads(out)
    assert line["read"] == "in memory"
    assert any("only JSONL histories are streamed" in n for n in line["notes"])


def refusals(err: str) -> list[str]:
    """The lines of ``err`` but a streamed check's progress line (where its scratch is)."""
    return [line for line in err.splitlines() if ": streaming it, split by key in " not in line]


def _raise(spill: Path) -> None:
    """A bug in the middle of a streamed check."""
    raise RuntimeError("a bug")


def _sigterm(spill: Path) -> None:
    """SIGTERM in the middle of a streamed check."""
    os.kill(os.getpid(), signal.SIGTERM)
    raise AssertionError("SIGTERM did not stop the check")


@pytest.mark.parametrize(
    ("end", "code", "said"), [(_raise, 255, "RuntimeError: a bug"), (_sigterm, 2, "by SIGTERM")]
)
def test_spill_files_are_removed_however_the_check_ends(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    end: Any,
    code: int,
    said: str,
) -> None:
    path = write_history(tmp_path / "run", history())
    spill = tmp_path / "spill"
    spill.mkdir()
    seen = []

    def ended(*args: Any, **kw: Any) -> Any:
        seen.append(os.listdir(spill))
        end(spill)

    monkeypatch.setattr("checkers.linear.streamed.check_keys", ended)
    got, _, err = run(capsys, "check", "--stream", "--spill-dir", str(spill), str(path))
    assert got == code and said in err
    assert len(seen) == 1 and len(seen[0]) == 1  # the scratch folder, while it checked
    assert os.listdir(spill) == []


def history_and_link(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A small run's history, a folder, and a symbolic link to that folder."""
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    return write_history(tmp_path / "run", history(200)), real, link


def test_a_spill_dir_that_is_a_link_is_refused_in_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path, real, link = history_and_link(tmp_path)
    code, out, err = run(capsys, "check", "--stream", "--spill-dir", str(link), str(path))
    assert code == 254 and out == ""
    assert len(err.strip().splitlines()) == 1 and "symbolic link" in err
    assert os.listdir(real) == []


def test_a_temporary_folder_that_is_a_link_is_refused_in_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, real, link = history_and_link(tmp_path)
    monkeypatch.setattr(tempfile, "tempdir", str(link))
    code, out, err = run(capsys, "check", "--stream", str(path))
    assert code == 254 and out.startswith("total:")
    refusals = [line for line in err.splitlines() if "symbolic link" in line]
    assert len(refusals) == 1 and "--spill-dir" in refusals[0]
    assert os.listdir(real) == []


def scratch_while_checking(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    folders: list[Path],
    *argv: str,
) -> tuple[int, str, list[list[str]]]:
    """``harness check ARGV``'s exit code and stderr, and what each of ``folders`` held
    while the keys were checked."""
    from checkers.linear import streamed

    real = streamed.check_keys
    seen: list[list[str]] = []

    def looking(*args: Any, **kw: Any) -> Any:
        seen.extend(sorted(os.listdir(f)) for f in folders)
        return real(*args, **kw)

    monkeypatch.setattr(streamed, "check_keys", looking)
    code, _, err = run(capsys, "check", *argv)
    return code, err, seen


def test_the_scratch_folder_is_made_in_the_temporary_folder_by_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not beside the history: its folder may be read-only or someone else's. TMPDIR is
    # honoured (tempfile.gettempdir, its cache cleared), stderr says where, and the
    # folder is gone after; --out, when given, takes it instead.
    path = write_history(tmp_path / "run", history(300))
    temporary, out = tmp_path / "tmp", tmp_path / "out"
    temporary.mkdir()
    out.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(tempfile, "tempdir", None)
    folders = [temporary, path.parent, out]
    code, err, seen = scratch_while_checking(capsys, monkeypatch, folders, "--stream", str(path))
    assert code == 0
    assert len(seen[0]) == 1 and seen[0][0].startswith(SCRATCH_PREFIX)
    assert seen[1:] == [["history.jsonl", "test.json"], []]
    assert f"scratch folder in {temporary}" in err
    code, err, seen = scratch_while_checking(
        capsys, monkeypatch, folders, "--stream", "--out", str(out), str(path)
    )
    assert code == 0 and seen[0] == [] and len(seen[2]) == 1
    assert f"scratch folder in {out}" in err
    assert [os.listdir(f) for f in (temporary, out)] == [[], []]
    assert sorted(os.listdir(path.parent)) == ["history.jsonl", "test.json"]


def test_a_temporary_folder_that_cannot_be_had_is_said_in_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_history(tmp_path / "run", history(200))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "gone"))
    code, out, err = run(capsys, "check", "--json", "--stream", str(path))
    assert code == 254 and json.loads(out)["valid"] is None
    refusals = [line for line in err.splitlines() if "cannot make a scratch folder" in line]
    assert len(refusals) == 1 and "--spill-dir" in refusals[0]


def test_bad_input_streamed_is_the_in_memory_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ops = history(200)
    broken = [*ops, ops[1].with_(index=10_000)]  # a completion with no open invocation
    path = write_history(tmp_path / "run", broken)
    said = []
    for flag in ("--stream", "--no-stream"):
        code, _, err = run(capsys, "check", flag, str(path))
        assert code == 254
        said.append(refusals(err))
    assert said[0] == said[1] and len(said[0]) == 1


def test_a_truncated_last_line_streamed_is_left_out_and_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_history(tmp_path / "run", history(500))
    with path.open("a") as f:
        f.write('{"index": 99999, "time": 1, "pro')
    got = []
    for flag in ("--stream", "--no-stream"):
        code, out, _ = run(capsys, "check", "--json", flag, str(path))
        assert code == 0
        got.append(json.loads(out))
    assert got[0]["notes"] == got[1]["notes"] and "cut short" in got[0]["notes"][0]
    assert got[0]["ops"] == got[1]["ops"]


def test_stream_and_html_together_are_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_history(tmp_path / "run", history(200))
    code, _, err = run(capsys, "check", "--stream", "--html", str(tmp_path / "r.html"), str(path))
    assert code == 254 and "--html" in err and len(err.strip().splitlines()) == 1


def test_shrink_streamed_writes_what_the_in_memory_check_writes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = write_history(tmp_path / "run", stale(history(), {4}))
    written = []
    for flag in ("--stream", "--no-stream"):
        out_file = tmp_path / f"shrunk{flag}.jsonl"
        code, out, _ = run(capsys, "check", flag, "--shrink", str(out_file), str(path))
        assert code == 1 and "shrunk: " in out
        written.append((out_file.read_text(), out.split("shrunk: ")[1].split(":")[0]))
    assert written[0] == written[1]


def test_a_full_disk_is_said_in_one_line_and_the_spill_removed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    from core.formats import spill as spill_module

    real = spill_module.scratch_file

    class Full:
        """A spill file on a full disk."""

        def __init__(self, folder: int, name: str) -> None:
            self.file = real(folder, name)

        def __enter__(self) -> Full:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()

        def write(self, data: object) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(spill_module, "scratch_file", Full)
    path = write_history(tmp_path / "run", history(200))
    spill = tmp_path / "spill"
    spill.mkdir()
    code, _, err = run(capsys, "check", "--stream", "--spill-dir", str(spill), str(path))
    assert code == 254 and len(refusals(err)) == 1
    assert "No space left on device" in err and "--spill-dir" in err
    assert os.listdir(spill) == []


def _halves(value: Any) -> Any:
    """``value`` with every integer in it moved by a half: a float, which the register
    path does not read (the general path does)."""
    if isinstance(value, list):
        return [_halves(x) for x in value]
    return value if value is None else value + 0.5


def test_keys_the_register_path_gives_up_are_searched_by_the_general_path(
    tmp_path: Path,
) -> None:
    # Key 2's values are floats: in memory the register path gives the whole history up
    # to the general path; streamed, key 2 alone. The same verdict and key either way.
    ops = [op.with_(value=_halves(op.value)) if op.key == 2 else op for op in history()]
    path = write_history(tmp_path / "run", stale(ops, {6}))
    memory, streamed = both(path, tmp_path)
    assert "path" not in memory["details"] and "path" not in streamed["details"]
    assert memory["valid"] is False and streamed["valid"] is False
    assert streamed["summary"] == memory["summary"]
    assert streamed["details"]["counterexample"] == memory["details"]["counterexample"]


STREAMED_MODULES = (
    "harness/checkstream.py",
    "core/formats/spill.py",
    "checkers/linear/streamed.py",
)
"""The streamed check's modules, held to import only other modules' public names."""


def private_imports(module: Path) -> list[str]:
    """The private names (``_name``) ``module`` imports from another module."""
    found = []
    for node in ast.walk(ast.parse(module.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            found += [f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    return found


def test_the_streamed_check_imports_no_other_modules_private_names() -> None:
    root = Path(__file__).resolve().parents[2]
    found = {m: private_imports(root / m) for m in STREAMED_MODULES}
    assert {m: names for m, names in found.items() if names} == {}


def test_a_small_history_is_opened_once_its_streaming_declined_from_its_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_history(tmp_path / "run", history(300))
    real_open, real_stat = os.open, os.stat
    opened: list[str] = []
    looked: list[str] = []

    def counted_open(file: Any, *args: Any, **kw: Any) -> int:
        opened.append(str(file))
        return real_open(file, *args, **kw)

    def counted_stat(file: Any, *args: Any, **kw: Any) -> os.stat_result:
        looked.append(str(file))
        return real_stat(file, *args, **kw)

    monkeypatch.setattr(os, "open", counted_open)
    monkeypatch.setattr(os, "stat", counted_stat)
    budget = Budget(None, 1 << 30)
    declined = checkstream.check_streamed(path, None, budget, Streaming(), lambda w: None)
    assert declined.result is None and declined.notes == ()
    assert (opened, looked) == ([], [str(path)])  # one look, no opening
    looked.clear()
    code, out, _ = run(capsys, "check", "--json", str(path))
    assert code == 0 and json.loads(out)["read"] == "in memory"
    assert opened.count(str(path)) == 1
    assert looked.count(str(path)) <= 3  # is it a folder, its size, the reader's own look
