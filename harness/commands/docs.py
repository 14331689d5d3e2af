"""``harness docs [NAME [TOPIC]]``: the documents shipped with the harness, readable from
an installed copy (``--help`` texts point here), and ``options``, the reference of every
``harness run`` option, written from its parser (``harness.option_help``)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Final

from harness.commands.args import UsageError, describe

if TYPE_CHECKING:
    from harness.terminal import Terminal

OPTIONS: Final = "options"
"""The document written from ``harness run``'s parser, not shipped as a file."""


def run_parser() -> argparse.ArgumentParser:
    """``harness run``'s parser, which the option reference is written from."""
    from harness.cli import build_parser

    parser = build_parser("run")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["run"]


def doc_names() -> tuple[str, ...]:
    """Every document ``harness docs`` shows: the shipped ones and the option reference."""
    from harness.packaged import doc_names as shipped

    return (*shipped(), OPTIONS)


def option_topics() -> tuple[str, ...]:
    """The topics of the option reference (``harness docs options TOPIC``)."""
    from harness.option_help import topics

    return tuple(topics(run_parser()))


def cmd_docs(args: argparse.Namespace, term: Terminal) -> int:
    from core.option_checks import unknown_name
    from harness.packaged import doc_file
    from harness.packaged import doc_names as shipped

    if args.name is None:
        for name in shipped():
            term.out.print(f"{name}\t{doc_file(name)}", highlight=False, soft_wrap=True)
        term.out.print(
            f"{OPTIONS}\tevery `harness run` option by topic ({', '.join(option_topics())})",
            highlight=False,
            soft_wrap=True,
        )
        return 0
    if args.name == OPTIONS:
        from harness.option_help import option_reference

        if args.path:
            raise UsageError(f"`harness docs {OPTIONS}` is written from the parser: it has no path")
        sys.stdout.write(option_reference(run_parser(), args.topic))
        return 0
    if args.topic is not None:
        raise UsageError(f"only `harness docs {OPTIONS}` takes a topic: leave out {args.topic!r}")
    known = args.name.removesuffix(".md") in shipped()  # a name, never a path to follow
    path = doc_file(args.name) if known else None
    if path is None:
        raise UsageError(unknown_name("document", args.name, doc_names()))
    if args.path:
        print(path)
    else:
        sys.stdout.write(path.read_text(encoding="utf-8"))
    return 0


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    d = sub.add_parser(
        "docs",
        help="read the documents shipped with the harness (e.g. `harness docs ssh`)",
        description="Without a name: every document and its path. With one: the "
        "document's text (Markdown), or its path with --path. `harness docs options "
        "[TOPIC]`: every `harness run` option (of one topic), with its values.",
    )
    describe(
        d.add_argument("name", nargs="?", default=None, help="ssh, linearizability, options..."),
        offers=doc_names,
    )
    describe(
        d.add_argument("topic", nargs="?", default=None, help="of options: faults, locks, ssh..."),
        offers=option_topics,
    )
    d.add_argument("--path", action="store_true", help="print the document's path only")
    d.set_defaults(fn=cmd_docs)
