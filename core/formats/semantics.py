"""What a file of ops must be to be a history, beyond each op's fields: ops that keep the
op semantics (``core.history.first_break``), at least one of them a client's. Each reader
refuses the rest in one line naming the line of the op that breaks them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from core.formats.errors import FilePath, format_error
from core.formats.jsonl_fast import break_finder
from core.history import first_break
from core.ops import NEMESIS, Op

__all__ = ["FIXES", "refuse_breaks", "refuse_empty"]

FIXES: Final = {
    "open": "a process must complete its op before it invokes again",
    "retired": "an op that ended 'info' retires its process: later ops need another process",
    "orphan": "a completion must follow its process's invocation",
    "f": "a completion must repeat its invocation's f",
    "key": "a completion must repeat its invocation's key",
    "time": "a completion must come no earlier than its invocation",
}
"""What to do about each kind of ``core.history.Break``."""


def refuse_breaks(path: FilePath, ops: Sequence[Op], line_of: Callable[[int], int | None]) -> None:
    """FormatError at the first op of ``ops`` (read from ``path``) that breaks the op
    semantics; ``line_of`` gives the line of the op at a position. Most files keep them:
    the C twin of ``first_break`` says so where it is built, the plain one words a break."""
    if isinstance(ops, list) and break_finder()(ops) < 0:
        return
    broken = first_break(ops)
    if broken is None:
        return
    problem = broken.words(ops, lambda i: f"line {line_of(i)}")
    raise format_error(path, line_of(broken.position), problem, FIXES[broken.kind])


def refuse_empty(path: FilePath, ops: Sequence[Op]) -> None:
    """FormatError unless ``ops`` holds a client's op: a file without one is no history
    (an empty file, ``[]``, comments alone, the nemesis alone)."""
    if any(op.process != NEMESIS for op in ops):
        return
    what = "only the nemesis's ops" if ops else "no ops"
    raise format_error(path, None, f"{what} in it", "give a history with client operations")
