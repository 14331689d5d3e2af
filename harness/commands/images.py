"""``harness images build``: the targets' Docker images."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.commands.args import (
    Parser,
)

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_images(args: argparse.Namespace, term: Terminal) -> int:
    from harness.maintenance import build_images

    return build_images(args.targets, term.err)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    im = sub.add_parser("images", help="build the targets' Docker images")
    im_sub = im.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser, required=True)
    b = im_sub.add_parser("build", help="build (or reuse) images")
    b.add_argument(
        "targets",
        nargs="*",
        help="default: every Docker target; TARGET@RELEASE: its server from another Debian "
        "release (--server-version), e.g. etcd@bookworm",
    )
    b.set_defaults(fn=cmd_images)
