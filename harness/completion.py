"""Shell completion for bash and zsh, written from the parser itself.

``harness completion bash`` prints a bash script (zsh loads the same through its
``bashcompinit``): one table per command path (``harness``, ``harness run``, ``harness
suite run``...) of its subcommands and options, the allowed values of the options that have
a fixed set (``--target``, ``--fencing``...), and the suites shipped with the package for
``harness suite run``. Nothing runs Python at Tab time: the script is the parser as it
was when it was printed (print it again after an upgrade).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator
from typing import Final

SHELLS: Final = ("bash", "zsh")

VALUES: Final = {"--fencing": ("on", "off")}
"""Allowed values of options whose type checks them instead of ``choices``."""


def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser`` (itself first), with the words that lead to it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, (*path, name))


def subcommands(parser: argparse.ArgumentParser) -> tuple[str, ...]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return tuple(action.choices)
    return ()


def values_of(action: argparse.Action) -> tuple[str, ...]:
    """The fixed set of values an option takes, if it has one."""
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return tuple(map(str, action.choices))
    for flag in action.option_strings:
        if flag in VALUES:
            return VALUES[flag]
    return ()


def _key(path: tuple[str, ...]) -> str:
    """A command path as the script's tables name it (bash has no empty key)."""
    return " ".join(("harness", *path))


def _case(name: str, rows: list[tuple[str, str]], otherwise: str) -> str:
    """A shell function answering ``rows`` by a ``case`` of its first argument (bash and
    zsh's sh emulation alike: no associative arrays, whose literals they spell apart)."""
    arms = "".join(f"    {shlex.quote(key)}) {answer} ;;\n" for key, answer in rows)
    return f'{name}() {{\n  case "$1" in\n{arms}    *) {otherwise} ;;\n  esac\n}}\n'


def bash_script(parser: argparse.ArgumentParser, suites: tuple[str, ...] = ()) -> str:
    """The bash completion of ``harness`` as ``parser`` describes it; ``suites`` are
    offered to ``harness suite run``."""
    words: list[tuple[str, str]] = []
    takes: list[tuple[str, str]] = []
    for path, p in walk(parser):
        flags = [f for a in p._actions for f in a.option_strings]
        fixed = [v for a in p._actions if not a.option_strings for v in values_of(a)]
        offered = " ".join((*subcommands(p), *fixed, *flags))
        words.append((_key(path), f"echo {shlex.quote(offered)}"))
        for a in p._actions:
            if not a.option_strings or a.nargs == 0:
                continue
            for f in a.option_strings:
                takes.append((f"{_key(path)}|{f}", f"echo {shlex.quote(' '.join(values_of(a)))}"))
    return f"""# bash completion for harness (`harness completion bash`)
{_case("_harness_words", words, "return 1")}
{_case("_harness_values", takes, "return 1")}
_harness_complete() {{
  local suites={shlex.quote(" ".join(suites))}
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev="" cmd=harness i w values
  if (( COMP_CWORD > 0 )); then prev=${{COMP_WORDS[COMP_CWORD-1]}}; fi
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w=${{COMP_WORDS[i]}}
    if _harness_values "$cmd|$w" >/dev/null; then (( i++ )); continue; fi
    if [[ $w != -* ]] && _harness_words "$cmd $w" >/dev/null; then cmd="$cmd $w"; fi
  done
  if values=$(_harness_values "$cmd|$prev"); then
    if [[ -n $values ]]; then
      COMPREPLY=( $(compgen -W "$values" -- "$cur") )
    else
      COMPREPLY=( $(compgen -f -- "$cur") )
    fi
    return 0
  fi
  if [[ $cmd == "harness suite run" && $cur != -* ]]; then
    COMPREPLY=( $(compgen -W "$suites" -- "$cur"; compgen -f -- "$cur") )
    return 0
  fi
  COMPREPLY=( $(compgen -W "$(_harness_words "$cmd")" -- "$cur") )
}}
complete -o default -F _harness_complete harness
"""


def script(shell: str, parser: argparse.ArgumentParser, suites: tuple[str, ...] = ()) -> str:
    """The completion script for ``shell`` (one of ``SHELLS``)."""
    text = bash_script(parser, suites)
    if shell == "zsh":
        return (
            "# zsh completion for harness: bash's, through zsh's bashcompinit\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + text
        )
    return text
