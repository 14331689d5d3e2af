"""``harness check``: run directories or history files checked."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.formats.budget import parse_seconds, parse_size
from harness.commands.args import (
    UsageError,
    describe,
    parsed,
    path,
    writable_dir,
)

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_check(args: argparse.Namespace, term: Terminal) -> int:
    from core.formats.budget import default_memory_limit
    from harness.checkcmd import check_paths

    known_model(args.model)
    if args.out is not None:  # before any checking: the results must have a place to go
        writable_dir(args.out, "--out")
    memory = args.memory_limit if args.memory_limit is not None else default_memory_limit()
    return check_paths(
        args.paths,
        model=args.model,
        time_limit=args.time_limit,
        as_json=args.json,
        memory_limit=memory,
        out=args.out,
        html=args.html,
    )


def known_model(model: str | None) -> None:
    """Refuse (UsageError, one line) a ``--model`` that names no model."""
    from checkers.linear.models import MODELS

    if model is not None and model not in MODELS:
        from core.option_checks import nearest

        near = nearest(model, list(MODELS))
        raise UsageError(
            f"unknown model {model!r}; did you mean {near!r}?"
            if near
            else f"unknown model {model!r}: --model takes one of {', '.join(MODELS)}"
        )


def model_names() -> tuple[str, ...]:
    """The models ``--model`` takes (for completion)."""
    from checkers.linear.models import MODELS

    return tuple(MODELS)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    c = sub.add_parser(
        "check",
        help="check a run directory or history files",
        description="Check run directories (all their checkers) or history "
        "files (JSONL, Jepsen EDN, porcupine etcd log, porcupine kv) "
        "for linearizability. A Jepsen store directory (history.edn, results.edn) "
        "is checked as its history.edn, with Jepsen's own verdict said beside ours.",
    )
    c.add_argument("paths", nargs="+", metavar="PATH", type=path("PATH"))
    describe(
        c.add_argument(
            "--model",
            default=None,
            help="register, cas-register, etcd, kv, mutex, multi-register "
            "(default: implied by the format)",
        ),
        offers=model_names,
    )
    c.add_argument(
        "--time-limit",
        type=parsed(parse_seconds),
        default=None,
        help="seconds per path, reading included (default: none); out of it, "
        "the verdict is unknown",
    )
    c.add_argument(
        "--memory-limit",
        type=parsed(parse_size),
        default=None,
        help="memory per path, e.g. 2G (default: half the memory available at "
        "start); out of it, the verdict is unknown",
    )
    c.add_argument(
        "--out",
        type=path("--out"),
        default=None,
        metavar="DIR",
        help="write run directories' results.json under DIR (default: into each "
        "run directory, where it can be written)",
    )
    c.add_argument(
        "--html",
        type=path("--html"),
        default=None,
        metavar="OUT",
        help="also write a self-contained HTML report per path: the verdict, the timeline "
        "per key with clients as lanes, the longest partial linearizations step by step, "
        "the counterexample (a run directory: its run report). One PATH: OUT is the page, "
        "or an existing directory to write NAME.html into; several: OUT is a directory "
        "(made if missing) of one NAME.html per PATH, a name met again numbered "
        "NAME-2.html. OUT's parent must exist; a link is refused (default: no report)",
    )
    c.add_argument("--json", action="store_true", help="one JSON object per file per line")
    c.set_defaults(fn=cmd_check)
