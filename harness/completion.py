"""Shell completion for bash and zsh, written from the parser itself.

``harness completion bash`` prints a bash script (zsh loads the same through its
``bashcompinit``): one table per command path (``harness``, ``harness run``, ``harness
suite run``...) of its subcommands and options, the values of every option and positional
that has a fixed set (argparse's ``choices``, or what the option offers from the registries:
``OptionInfo.offers``, ``harness.commands.args``), the options whose value is a comma list
(``--nemesis kill,pa<Tab>``) and the positionals that take file names too (a suite by name
or by path). Nothing runs Python at Tab time: the script is the parser as it was when it
was printed (print it again after an upgrade).
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Iterator
from typing import Final

from harness.commands.args import choices_of, info_of

SHELLS: Final = ("bash", "zsh")


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
    """The fixed set of values an option or positional takes, if it has one."""
    return choices_of(action)


def _key(path: tuple[str, ...]) -> str:
    """A command path as the script's tables name it (bash has no empty key)."""
    return " ".join(("harness", *path))


def _case(name: str, rows: list[tuple[str, str]], otherwise: str) -> str:
    """A shell function answering ``rows`` by a ``case`` of its first argument (bash and
    zsh's sh emulation alike: no associative arrays, whose literals they spell apart)."""
    arms = "".join(f"    {shlex.quote(key)}) {answer} ;;\n" for key, answer in rows)
    return f'{name}() {{\n  case "$1" in\n{arms}    *) {otherwise} ;;\n  esac\n}}\n'


def _echo(words: tuple[str, ...] | list[str]) -> str:
    return f"echo {shlex.quote(' '.join(words))}"


def _tables(parser: argparse.ArgumentParser) -> dict[str, list[tuple[str, str]]]:
    """The script's tables, from every parser under ``parser``: ``words`` (a command's
    subcommands and options), ``values`` (``cmd|--flag``: its values, none for a free
    one: file names), ``args`` (``cmd|N``: the Nth positional's values), ``lists`` (the
    options taking comma lists) and ``files`` (positionals taking file names too)."""
    tables: dict[str, list[tuple[str, str]]] = {
        k: [] for k in ("words", "values", "args", "lists", "files")
    }
    for path, p in walk(parser):
        key = _key(path)
        flags = [f for a in p._actions for f in a.option_strings]
        tables["words"].append((key, _echo([*subcommands(p), *flags])))
        positionals = [
            a
            for a in p._actions
            if not a.option_strings and not isinstance(a, argparse._SubParsersAction)
        ]
        for i, a in enumerate(positionals):
            if values_of(a):
                tables["args"].append((f"{key}|{i}", _echo(values_of(a))))
            if info_of(a).files:
                tables["files"].append((f"{key}|{i}", "return 0"))
        for a in p._actions:
            if not a.option_strings or a.nargs == 0:
                continue
            for f in a.option_strings:
                tables["values"].append((f"{key}|{f}", _echo(values_of(a))))
                if info_of(a).comma:
                    tables["lists"].append((f"{key}|{f}", "return 0"))
    return tables


def bash_script(parser: argparse.ArgumentParser) -> str:
    """The bash completion of ``harness`` as ``parser`` describes it."""
    t = _tables(parser)
    return f"""# bash completion for harness (`harness completion bash`)
{_case("_harness_words", t["words"], "return 1")}
{_case("_harness_values", t["values"], "return 1")}
{_case("_harness_args", t["args"], "return 1")}
{_case("_harness_lists", t["lists"], "return 1")}
{_case("_harness_files", t["files"], "return 1")}
_harness_complete() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev="" cmd=harness i w values npos=0 head=""
  if (( COMP_CWORD > 0 )); then prev=${{COMP_WORDS[COMP_CWORD-1]}}; fi
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w=${{COMP_WORDS[i]}}
    if _harness_values "$cmd|$w" >/dev/null; then (( i++ )); continue; fi
    if [[ $w == -* ]]; then continue; fi
    if (( npos == 0 )) && _harness_words "$cmd $w" >/dev/null; then
      cmd="$cmd $w"
    else
      (( npos++ ))
    fi
  done
  if values=$(_harness_values "$cmd|$prev"); then
    if [[ -z $values ]]; then
      COMPREPLY=( $(compgen -f -- "$cur") )
    elif _harness_lists "$cmd|$prev"; then
      if [[ $cur == *,* ]]; then head=${{cur%,*}},; fi
      COMPREPLY=( $(compgen -P "$head" -W "$values" -- "${{cur##*,}}") )
    else
      COMPREPLY=( $(compgen -W "$values" -- "$cur") )
    fi
    return 0
  fi
  if values=$(_harness_args "$cmd|$npos"); then
    COMPREPLY=( $(compgen -W "$values $(_harness_words "$cmd")" -- "$cur") )
    if _harness_files "$cmd|$npos"; then COMPREPLY+=( $(compgen -f -- "$cur") ); fi
    return 0
  fi
  COMPREPLY=( $(compgen -W "$(_harness_words "$cmd")" -- "$cur") )
}}
complete -o default -F _harness_complete harness
"""


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    """The completion script for ``shell`` (one of ``SHELLS``)."""
    text = bash_script(parser)
    if shell == "zsh":
        return (
            "# zsh completion for harness: bash's, through zsh's bashcompinit\n"
            "autoload -U +X bashcompinit && bashcompinit\n" + text
        )
    return text
