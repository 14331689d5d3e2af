"""``harness docs [NAME]``: the documents shipped with the harness, readable from an
installed copy (``--help`` texts point here)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from harness.commands.args import UsageError

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_docs(args: argparse.Namespace, term: Terminal) -> int:
    from harness.packaged import doc_file, doc_names

    if args.name is None:
        for name in doc_names():
            term.out.print(f"{name}\t{doc_file(name)}", highlight=False, soft_wrap=True)
        return 0
    path = doc_file(args.name)
    if path is None:
        raise UsageError(f"no document {args.name!r}; choose from {', '.join(doc_names())}")
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
        description="Without a name: every shipped document and its path. With one: the "
        "document's text (Markdown), or its path with --path.",
    )
    d.add_argument("name", nargs="?", default=None, help="ssh or linearizability")
    d.add_argument("--path", action="store_true", help="print the document's path only")
    d.set_defaults(fn=cmd_docs)
