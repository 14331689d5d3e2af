"""harness.cli.COMMANDS: every module of harness.commands (but ``args``) is in it, and adds
the parser of its name, whose default function is the module's own ``cmd_<name>``."""

from __future__ import annotations

import pkgutil

import harness.commands
from harness.cli import COMMANDS, build_parser


def test_every_module_of_harness_commands_but_args_is_a_command() -> None:
    modules = {m.name for m in pkgutil.iter_modules(harness.commands.__path__)} - {"args"}
    assert sorted(m.__name__.rpartition(".")[2] for m in COMMANDS) == sorted(modules)


def test_every_command_module_adds_its_parser_with_its_own_function() -> None:
    parser = build_parser()
    commands = parser.commands or {}
    names = [m.__name__.rpartition(".")[2] for m in COMMANDS]
    assert list(commands) == names
    for module, name in zip(COMMANDS, names, strict=True):
        sub = commands[name]
        defaults = sub._defaults  # set_defaults(fn=...) on the command or its one action
        if "fn" not in defaults:
            (action,) = (a for a in sub._actions if a.choices and isinstance(a.choices, dict))
            (inner,) = action.choices.values()
            defaults = inner._defaults
        assert defaults["fn"] is getattr(module, f"cmd_{name}")
