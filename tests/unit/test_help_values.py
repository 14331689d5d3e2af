"""Every option of every command shows its default and its allowed values in ``--help``."""

from __future__ import annotations

import argparse

import pytest

from harness.cli import build_parser
from harness.commands.args import HelpFormatter
from harness.completion import values_of, walk


def _options() -> list[tuple[str, argparse.ArgumentParser, argparse.Action]]:
    found = []
    for path, parser in walk(build_parser()):
        for action in parser._actions:
            if action.option_strings and action.nargs != 0:  # takes a value (not a switch)
                found.append(
                    (" ".join(("harness", *path, action.option_strings[0])), parser, action)
                )
    return found


OPTIONS = _options()


def _shown(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The option's entry in its command's ``--help``, on one line."""
    formatter = parser._get_formatter()
    return " ".join(formatter._format_action(action).split())


def test_the_walk_finds_the_options_the_issue_names() -> None:
    names = {n for n, _, _ in OPTIONS}
    for flag in (
        "--target",
        "--fencing",
        "--nemesis-target",
        "--read-mode",
        "--rate",
        "--lease-ttl",
        "--keepalive",
        "--nemesis-interval",
        "--seed",
        "--nodes",
    ):
        assert f"harness run {flag}" in names
    assert "harness check --model" in names and "harness suite run --only" in names
    assert len(OPTIONS) > 45


@pytest.mark.parametrize(("name", "parser", "action"), OPTIONS, ids=[n for n, _, _ in OPTIONS])
def test_help_names_the_default_and_the_values(
    name: str, parser: argparse.ArgumentParser, action: argparse.Action
) -> None:
    text = _shown(parser, action)
    assert "default" in text, f"{name}: its help does not say its default: {text}"
    for value in values_of(action):
        assert value in text, f"{name}: its help does not name the value {value!r}: {text}"


def test_the_formatter_adds_what_a_help_text_leaves_out() -> None:
    p = argparse.ArgumentParser(formatter_class=HelpFormatter)
    p.add_argument("--colour", choices=("red", "blue"), default="red", help="a colour")
    p.add_argument("--size", type=int, default=3, help="a size (default: three)")
    p.add_argument("--on", type=str, default=["a", "b"], help="a list")
    help_text = " ".join(p.format_help().split())
    assert "a colour (default: red)" in help_text  # the values are in its metavar
    assert "a size (default: three)" in help_text and "(default: 3)" not in help_text
    assert "a list (default: a, b)" in help_text
    q = argparse.ArgumentParser(formatter_class=HelpFormatter)
    q.add_argument("--mode", choices=("x", "y"), metavar="M", default="x", help="a mode")
    assert "a mode (one of: x, y; default: x)" in " ".join(q.format_help().split())
