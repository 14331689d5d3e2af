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
    path_option,
    writable_dir,
    writable_parent,
)

if TYPE_CHECKING:
    from pathlib import Path

    from harness.terminal import Terminal


def cmd_check(args: argparse.Namespace, term: Terminal) -> int:
    from core.formats.budget import default_memory_limit
    from harness.checkcmd import check_paths
    from harness.checkstream import Streaming

    known_model(args.model)
    if args.out is not None:  # before any checking: the results must have a place to go
        writable_dir(args.out, "--out")
    if args.shrink is not None:
        writable_parent(args.shrink, "--shrink")
    spill = None
    if args.spill_dir is not None:
        from pathlib import Path  # only then: a small check's start-up does without it

        spill = Path(args.spill_dir)
        scratch_root(spill)
    if args.stream and args.html is not None:
        raise UsageError(
            "--html draws the whole history, which --stream does not hold in memory: "
            "drop one of them"
        )
    memory = args.memory_limit if args.memory_limit is not None else default_memory_limit()
    return check_paths(
        args.paths,
        model=args.model,
        time_limit=args.time_limit,
        as_json=args.json,
        memory_limit=memory,
        out=args.out,
        html=args.html,
        shrink=args.shrink,
        streaming=Streaming(args.stream, spill),
    )


def scratch_root(folder: Path) -> None:
    """Refuse (UsageError, one line) a ``--spill-dir`` that is a link or no folder."""
    if folder.is_symlink():
        raise UsageError(
            f"--spill-dir {folder}: a symbolic link; the harness never writes through one "
            "(name the folder itself, or another)"
        )
    if not folder.is_dir():
        raise UsageError(f"--spill-dir {folder}: not a folder; name an existing folder")


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
    path_option(
        c,
        "--shrink",
        metavar="OUT",
        help="write the fewest operations of an invalid history that still cannot be ordered "
        "to OUT, in the input's format (one PATH; a run directory's as JSONL), within the "
        "time limit; a link is refused (default: no shrinking)",
    )
    how = c.add_mutually_exclusive_group()
    how.add_argument(
        "--stream",
        action="store_true",
        default=None,
        help="read a history file once, split by key into a scratch folder on disk, and "
        "check one key at a time: a history bigger than memory in the memory of its "
        "biggest key, the same verdict, invalid key and counterexample (JSONL histories of "
        "the register models; others are read in memory, said in a note). Default: "
        "streamed from 1 GiB, or when 4 times its size is more than --memory-limit; --json "
        'says "read": "streamed" or "in memory"',
    )
    how.add_argument(
        "--no-stream",
        dest="stream",
        action="store_false",
        help="read every history whole, in memory, whatever its size",
    )
    path_option(
        c,
        "--spill-dir",
        metavar="DIR",
        help="make a streamed check's scratch folder in DIR, an existing folder (not a "
        "link); it is removed however the check ends (default: --out, else the system's "
        "temporary folder, TMPDIR where it is set)",
    )
    c.add_argument("--json", action="store_true", help="one JSON object per file per line")
    c.set_defaults(fn=cmd_check)
