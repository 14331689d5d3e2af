"""harness.cli.COMMANDS: every module of harness.commands (but ``args``) is in it, and adds
the parser of its name, whose default function is the module's own ``cmd_<name>``."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_cli import run

import harness.commands
from harness.checkcmd import as_named
from harness.cli import COMMANDS, build_parser, command


def test_every_module_of_harness_commands_but_args_is_a_command() -> None:
    modules = {m.name for m in pkgutil.iter_modules(harness.commands.__path__)} - {"args"}
    assert sorted(c.replace("-", "_") for c in COMMANDS) == sorted(modules)


def test_every_command_module_adds_its_parser_with_its_own_function() -> None:
    parser = build_parser()
    commands = parser.commands or {}
    assert list(commands) == list(COMMANDS)
    for name in COMMANDS:
        module = command(name)
        sub = commands[name]
        defaults = sub._defaults  # set_defaults(fn=...) on the command or on its actions
        if "fn" not in defaults:  # the first action's is cmd_<name>, the others' cmd_<action>
            (action,) = (a for a in sub._actions if a.choices and isinstance(a.choices, dict))
            first, *others = action.choices.items()
            defaults = first[1]._defaults
            for word, inner in others:
                assert inner._defaults["fn"] is getattr(module, f"cmd_{word}")
        assert defaults["fn"] is getattr(module, f"cmd_{name.replace('-', '_')}")


def test_a_command_alone_is_built_as_the_whole() -> None:
    """``build_parser(name)`` gives that command the parser it has among all of them."""
    for name in COMMANDS:
        alone = build_parser(name).commands or {}
        assert list(alone) == [name]
        assert alone[name].format_help() == (build_parser().commands or {})[name].format_help()


def _loaded_by_check(model: str, history: Path, unwanted: tuple[str, ...]) -> tuple[int, list[str]]:
    """``harness check --model MODEL HISTORY`` in a fresh process: its exit code, and
    which of the ``unwanted`` modules (or packages) it imported."""
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        f"code = main(['check', '--model', {model!r}, {str(history)!r}])\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith({unwanted!r}))\n"
        "print(code, ' '.join(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    exit_code, _, loaded = out.strip().splitlines()[-1].partition(" ")
    return int(exit_code), loaded.split()


def test_checking_a_history_file_loads_no_target_fault_or_workload() -> None:
    """``harness check FILE`` imports what checking needs: no registry of targets, faults
    or workloads (they cost it half its start-up), no asyncio, no Docker SDK."""
    history = Path(__file__).parent / "histories" / "sim-stale-read.jsonl"
    unwanted = ("clusters", "nemesis", "workloads", "asyncio", "docker", "paramiko")
    assert _loaded_by_check("cas-register", history, unwanted) == (1, [])


def test_checking_an_invalid_file_loads_neither_inspect_nor_other_models() -> None:
    """``harness check`` of an invalid file (the register path, then the general search for
    its counterexample) imports no ``inspect`` (``dataclasses`` and ``typing_extensions``
    import it: a tenth of a small check's start-up) and no model but the one it checks."""
    history = Path(__file__).parent / "histories" / "sim-stale-read.jsonl"
    unwanted = ("inspect", "dataclasses", "typing_extensions", "checkers.linear.models.kv")
    unwanted += ("checkers.linear.models.mutex", "checkers.linear.models.multi_register")
    assert _loaded_by_check("cas-register", history, unwanted) == (1, [])


def test_checking_a_valid_file_loads_only_the_search(tmp_path: Path) -> None:
    """``harness check`` of a small valid register file imports neither rich, nor the
    run's checkers, nor what only an invalid verdict needs (counterexample, anomaly names),
    nor the general search (the register path decides it), nor the worker processes and
    no-search paths of big histories: their imports were most of its start-up."""
    history = tmp_path / "history.jsonl"
    ops = [(0, "invoke", "write", 1), (0, "ok", "write", 1), (1, "invoke", "read", None)]
    ops.append((1, "ok", "read", 1))
    history.write_text(
        "".join(
            json.dumps({"index": i, "time": i, "process": p, "type": t, "f": f, "value": v}) + "\n"
            for i, (p, t, f, v) in enumerate(ops)
        )
    )
    unwanted = ("rich", "multiprocessing", "harness.analysis", "checkers.anomalies")
    unwanted += (
        "checkers.linear.counterexample",
        "checkers.linear.stale",
        "checkers.linear.unique",
        "checkers.linear.search",
        "checkers.linear.schedule",
    )
    assert _loaded_by_check("register", history, unwanted) == (0, [])


def test_checking_a_file_without_html_loads_no_report_machinery() -> None:
    """The report page's modules (and the Jepsen store reader, for directories) are
    imported only by ``--html`` (and a directory): a plain check does not pay for them."""
    history = Path(__file__).parent / "histories" / "sim-stale-read.jsonl"
    unwanted = ("harness.report", "core.formats.jepsen_store", "secrets")
    assert _loaded_by_check("cas-register", history, unwanted) == (1, [])


def test_checking_many_edn_files_in_one_process_loads_only_what_a_file_needs(
    tmp_path: Path,
) -> None:
    """``harness check`` of several EDN files in one process (issue 36: the 54 Knossos
    files) reads each by the fast path, an error vector rendered without the EDN reader
    (its patterns cost a millisecond to compile), and imports nothing a history file does
    not need: no ``copy`` (help's), no run store or writer (a run directory's
    results.json), no ``pathlib`` (with the ``urllib.parse`` it imports, 3 ms of the
    start-up: a history file's path goes by ``os.path``)."""
    good = (
        "[{:process 0, :type :invoke, :f :write, :value 1}\n"
        " {:process 0, :type :ok, :f :write, :value 1}]\n"
    )
    failed = (
        "[{:process 0, :type :invoke, :f :write, :value 2}\n"
        " {:process 0, :type :fail, :f :write, :value 2, :error [:timeout nil]}\n"
        " {:process 1, :type :invoke, :f :read, :value nil}\n"
        " {:process 1, :type :ok, :f :read, :value 3}]\n"
    )
    paths = []
    for i, text in enumerate((good, failed, good)):
        paths.append(tmp_path / f"h{i}.edn")
        paths[-1].write_text(text)
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        f"code = main(['check', *{[str(p) for p in paths]!r}])\n"
        "from core import compiled\n"
        "wanted = ('core.formats.edn', 'copy', 'core.store', 'core.writes', 'pathlib',\n"
        "          'urllib.parse')\n"
        "loaded = sorted(m for m in sys.modules if m in wanted)\n"
        "print(code, compiled.active(), ' '.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    exit_code, active, *loaded = out.stdout.strip().splitlines()[-1].split()
    assert exit_code == "1"  # the second file is invalid (a read of 3)
    # Where the C reader is not built every file takes the plain reader, the EDN module.
    assert loaded == ([] if active == "True" else ["core.formats.edn"])
    assert "total: 3 file(s)" in out.stdout


def test_harness_own_process_freezes_what_it_made_and_a_callers_main_does_not(
    tmp_path: Path,
) -> None:
    """The process's own command line (``main()``) has no collection while the command is
    chosen and imported, and ends with everything frozen (the collection at exit has
    nothing to traverse: a tenth of a small check); ``main(argv)``, a caller's, leaves
    the collector as it was; either way the collector is enabled again after."""
    history = tmp_path / "h.edn"
    history.write_text("[{:process 0, :type :invoke, :f :read, :value nil}]\n")
    code = (
        "import gc, sys\n"
        "from harness.cli import main\n"
        f"main(['check', {str(history)!r}])\n"
        "mine = gc.get_freeze_count()\n"
        f"sys.argv = ['harness', 'check', {str(history)!r}]\n"
        "main()\n"
        "print(mine, gc.get_freeze_count() > 10000, gc.isenabled())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 True True"


@given(st.lists(st.sampled_from(["", ".", "..", "a", "b.edn", " "]), max_size=6), st.booleans())
def test_a_history_file_is_named_as_pathlib_names_it(parts: list[str], trailing: bool) -> None:
    """``harness check`` names a file (its outcome's ``file``, its messages) as
    ``str(Path(p))`` did before its paths went by ``os.path``: ``./h.edn`` is ``h.edn``."""
    for root in ("", "/", "//", "///"):
        named = root + "/".join(parts) + ("/" if trailing else "")
        if named:
            assert as_named(named) == str(Path(named)), named


def test_the_command_line_names_a_file_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "h.edn").write_text("[{:process 0, :type :invoke, :f :read, :value nil}]\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "check", "--json", ".//./h.edn", "./nope.edn")
    assert code == 254
    assert json.loads(out.splitlines()[0])["file"] == "h.edn"
    assert err.startswith("harness: nope.edn: ")
