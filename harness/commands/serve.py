"""``harness serve``: the results browsed over HTTP, an index of every run; it writes
nothing into the results (the index and missing reports are made in memory)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from harness.commands.args import (
    UsageError,
    number,
    path,
)

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_serve(args: argparse.Namespace, term: Terminal) -> int:
    from harness.report import serve

    if not args.host.strip():
        raise UsageError(
            "--host '' names no address: give 127.0.0.1 (the default), or 0.0.0.0 to "
            "listen on every interface"
        )
    root = Path(args.results)
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory: pass the results folder (default results/)")
    serve(root, host=args.host, port=args.port)
    return 0


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    from core.option_checks import Bound

    sv = sub.add_parser("serve", help="browse the results: an index of every run")
    sv.add_argument(
        "results", nargs="?", default="results", type=path("RESULTS"), help="results folder"
    )
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (loopback default)")
    sv.add_argument(
        "--port",
        type=number(Bound("--port", 0, 65535, integer=True, unit="port numbers")),
        default=8080,
        help="0-65535, 0 picks a free one (default: %(default)s)",
    )
    sv.set_defaults(fn=cmd_serve)
