"""harness.cli.COMMANDS: every module of harness.commands (but ``args``) is in it, and adds
the parser of its name, whose default function is the module's own ``cmd_<name>``."""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import harness.commands
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


def test_checking_a_history_file_loads_no_target_fault_or_workload() -> None:
    """``harness check FILE`` imports what checking needs: no registry of targets, faults
    or workloads (they cost it half its start-up), no asyncio, no Docker SDK."""
    history = Path(__file__).parent / "histories" / "sim-stale-read.jsonl"
    code = (
        "import sys\n"
        "from harness.cli import main\n"
        f"code = main(['check', '--model', 'cas-register', {str(history)!r}])\n"
        "loaded = [m for m in sys.modules if m.split('.')[0] in "
        "('clusters', 'nemesis', 'workloads', 'asyncio', 'docker', 'paramiko')]\n"
        "print(code, sorted(loaded))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "1 []"
