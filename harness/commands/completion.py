"""``harness completion bash|zsh``: the shell completion script, from the parser."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.terminal import Terminal


def cmd_completion(args: argparse.Namespace, term: Terminal) -> int:
    from harness.cli import build_parser
    from harness.completion import script

    sys.stdout.write(script(args.shell, build_parser()))
    return 0


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    from harness.completion import SHELLS

    c = sub.add_parser(
        "completion",
        help="print the shell completion script (bash or zsh)",
        description="Print the completion script of harness for a shell. bash: "
        'eval "$(harness completion bash)" in ~/.bashrc; zsh: eval "$(harness '
        'completion zsh)" in ~/.zshrc (after compinit).',
    )
    c.add_argument("shell", choices=SHELLS, help="the shell: bash or zsh")
    c.set_defaults(fn=cmd_completion)
