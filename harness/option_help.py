"""A command's options in two lengths, both written from its parser so that neither
drifts from what it accepts: the short ``--help`` (its common options, the others named
by topic, the epilog's examples as written) and the option reference of ``harness docs
options [TOPIC]`` (every option with its help, its default, its values and the
per-value table it carries, ``OptionInfo.details``).

A topic is an argument group given a one-word name by ``topic_group``.
"""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Iterator
from typing import Final

from harness.commands.args import HelpFormatter, UsageError, info_of

REFERENCE: Final = "harness docs options"


def topic_group(parser: argparse.ArgumentParser, topic: str, title: str) -> argparse._ArgumentGroup:
    """A group of ``parser``'s options under the one-word ``topic`` (``faults``)."""
    group = parser.add_argument_group(title)
    setattr(group, "topic", topic)  # noqa: B010
    return group


def topics(parser: argparse.ArgumentParser) -> dict[str, argparse._ArgumentGroup]:
    """``parser``'s groups by topic, in the order of its help."""
    return {
        topic: g
        for g in parser._action_groups
        if isinstance(topic := getattr(g, "topic", None), str)
    }


def _shown(group: argparse._ArgumentGroup) -> Iterator[argparse.Action]:
    return (a for a in group._group_actions if a.help is not argparse.SUPPRESS)


def brief_help(parser: argparse.ArgumentParser, formatter: argparse.HelpFormatter) -> str:
    """``--help`` of a command with many options: usage, description, the common
    options, every other option's name under its topic, and the epilog as written."""
    common = [
        a for a in parser._actions if info_of(a).common or isinstance(a, argparse._HelpAction)
    ]
    formatter.add_usage(parser.usage, common, [])
    formatter.add_text(parser.description)
    formatter.start_section("common options")
    formatter.add_arguments(common)
    formatter.end_section()
    width = getattr(formatter, "_width", 78)
    lines = [f"more options, by topic (`{REFERENCE} [TOPIC]`):"]
    grouped = topics(parser)
    column = max((len(t) for t in grouped), default=8) + 2  # a workload's name is a topic
    for topic, group in grouped.items():
        rest = [a.option_strings[0] for a in _shown(group) if not info_of(a).common]
        if rest:
            lines += textwrap.wrap(
                " ".join(rest),
                width,
                initial_indent=f"  {topic:<{column}}",
                subsequent_indent=" " * (column + 2),
                break_on_hyphens=False,
            )
    return "\n".join([formatter.format_help().rstrip("\n"), "", *lines, "", parser.epilog or ""])


class ReferenceFormatter(HelpFormatter):
    """The help formatter of the option reference: each option's help, then the table
    it carries (``OptionInfo.details``) as a paragraph of its own."""

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        details = info_of(action).details
        return f"{text}\n{details()}" if details is not None else text

    def _split_lines(self, text: str, width: int) -> list[str]:
        lines: list[str] = []
        for part in text.split("\n"):  # a paragraph each: the help, then its table
            lines += super()._split_lines(part, width)
        return lines


def option_reference(parser: argparse.ArgumentParser, topic: str | None = None) -> str:
    """Every option of ``parser`` under its topic, or those of ``topic`` alone (a
    one-line UsageError naming the nearest topic for an unknown one)."""
    groups = topics(parser)
    if topic is not None and topic not in groups:
        from core.option_checks import unknown_name

        raise UsageError(unknown_name("topic", topic, list(groups), f"of `{REFERENCE}`"))
    formatter = ReferenceFormatter(parser.prog)
    formatter.add_text(
        f"The options of `{parser.prog}`, by topic (`{REFERENCE} TOPIC` for one of "
        f"{', '.join(groups)})."
    )
    for name, group in groups.items():
        if topic in (None, name):
            formatter.start_section(name if name == group.title else f"{name}: {group.title}")
            formatter.add_arguments(list(_shown(group)))
            formatter.end_section()
    return formatter.format_help()
