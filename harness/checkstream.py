"""How ``harness check`` reads a history file: whole, in memory, or streamed - read once,
split by key into a scratch folder on disk (``core.formats.spill``) and checked one key at
a time (``checkers.linear.streamed``), so that a history bigger than memory is checked in
the memory of its biggest key, with the verdict, the invalid key and the counterexample
the in-memory check gives.

Who picks: ``--stream`` and ``--no-stream`` force it; by default a history is streamed
when it is big: ``STREAM_BYTES`` or more, or more than ``--memory-limit`` can hold in
memory (``IN_MEMORY_PER_BYTE`` times its size). Only JSONL histories of the register
models (``register``, ``cas-register``, ``etcd``) are streamed; any other (an EDN file, the
kv model), a file the streamed reader does not read, and a check with ``--html`` (its
page draws the whole history) is read in memory, with a note saying so where streaming
was asked for or the size called for it. The outcome's ``read`` says which it was.

The scratch folder is made in ``--spill-dir DIR``, else in ``--out DIR``, else in the
system's temporary folder (``tempfile.gettempdir()``: ``TMPDIR`` where it is set), never
beside the history, whose folder may be read-only or someone else's; the progress line
on stderr says where. It is never made through a link (a link there is refused in one
line), and removed however the check ends (a verdict, an exception, Ctrl-C, SIGTERM); one
that cannot be made is said in one line naming ``--spill-dir``.

The choice is made from one look at the file (its size, ``history_stat``): a small
history, streaming not asked for, is declined without opening it, so that the in-memory
reader opens it once.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Final, NamedTuple

from core.errors import HarnessError
from core.formats import ModelOf, OutOfBudget, default_model, detect_format, history_stat
from core.formats.errors import FilePath

if TYPE_CHECKING:
    from pathlib import Path

    from checkers.linear.models.register import RegisterModel
    from checkers.result import CheckResult
    from core.formats.budget import Budget

__all__ = ["IN_MEMORY_PER_BYTE", "STREAM_BYTES", "Streamed", "Streaming", "check_streamed"]

STREAM_BYTES: Final = 1 << 30
"""A JSONL history this big or bigger is streamed by default (about 5 million ops)."""
IN_MEMORY_PER_BYTE: Final = 4
"""Bytes resident per byte of a JSONL history checked in memory (measured: 1M ops over
1,000 keys, a 192 MB file, 728 MB resident at the peak): a history whose size times this
is more than the memory limit is streamed by default."""
STREAMED: Final = "streamed"
IN_MEMORY: Final = "in memory"


class Streaming(NamedTuple):
    """What the command line says of streaming: ``mode`` True (``--stream``), False
    (``--no-stream``) or None (by the file's size); ``spill``: the folder to make the
    scratch folder in (``--spill-dir``, else ``--out``; None: the system's temporary
    folder, ``scratch_root``)."""

    mode: bool | None = None
    spill: Path | None = None


class Streamed(NamedTuple):
    """A history file checked streamed (``result``), or not (``result`` None: read it in
    memory, saying ``notes``): the model, the ops read, the notes of the reading, and the
    milliseconds checking took (the reading and splitting aside)."""

    result: CheckResult | None
    model: str = ""
    ops: int = 0
    notes: tuple[str, ...] = ()
    check_ms: float = 0.0


def check_streamed(
    path: FilePath,
    model: str | None,
    budget: Budget,
    streaming: Streaming,
    model_of: ModelOf,
    shrink: bool = False,
) -> Streamed:
    """The check of the history file ``path`` streamed when ``streaming`` and its size
    call for it (see the module's docstring); else ``Streamed(None, notes=...)``: the
    caller reads it in memory. FormatError for a path that is no history file,
    HarnessError for one whose model is not known, or whose model refuses an op."""
    if streaming.mode is False:
        return Streamed(None)
    file, size = history_stat(path)
    limit = budget.memory_limit
    small = size < STREAM_BYTES and (limit is None or IN_MEMORY_PER_BYTE * size <= limit)
    if streaming.mode is None and small:
        return Streamed(None)
    fmt = detect_format(file)
    if fmt != "jsonl":
        return _in_memory(f"only JSONL histories are streamed; this {fmt} history")
    chosen = model or default_model(file, model_of)
    if not chosen:
        return Streamed(None)  # the in-memory check asks for --model, as for any file
    from checkers.linear.models import get_model
    from checkers.linear.models.register import RegisterModel

    m = get_model(chosen)
    if not isinstance(m, RegisterModel):
        return _in_memory(f"only the register models' histories are streamed; this {chosen}")
    return _spilled(file, m, budget, scratch_root(streaming), shrink)


def scratch_root(streaming: Streaming) -> FilePath:
    """The folder a streamed check makes its scratch folder in: the one the command line
    named, else the system's temporary folder (``TMPDIR`` where it is set), never the
    history's own (imported only for a streamed check: ``tempfile`` is not light)."""
    if streaming.spill is not None:
        return streaming.spill
    import tempfile

    return tempfile.gettempdir()


def _in_memory(why: str) -> Streamed:
    return Streamed(None, notes=(f"{why} was read in memory",))


def _spilled(
    file: FilePath, m: RegisterModel, budget: Budget, root: FilePath, shrink: bool
) -> Streamed:
    """``file`` split by key into a scratch folder in ``root`` and checked key by key."""
    from pathlib import Path  # a big history's: its cost is nothing beside the reading

    from checkers.linear.model import ModelError
    from checkers.linear.streamed import check_keys
    from core.formats.spill import spill

    print(
        f"harness: {file}: streaming it, split by key in a scratch folder in {root}",
        file=sys.stderr,
        flush=True,
    )
    try:
        with spill(Path(file), Path(root), budget) as keys:
            if keys is None:
                return _in_memory("a line the streamed reader does not read: the history")
            started = time.perf_counter()
            try:
                result = check_keys(keys, m, budget, shrink=shrink)
            except ModelError as e:
                where = file if e.op is None else f"{file}:{_line(file, e.op.index)}"
                raise HarnessError(f"{where}: {e}") from None
            ms = (time.perf_counter() - started) * 1000
            return Streamed(result, m.name, keys.events, keys.notes, ms)
    except OutOfBudget as e:  # while reading: no model has read an op yet
        from checkers.linearizability import CHECKER
        from checkers.result import UNKNOWN, CheckResult

        reason = str(e)
        details = {"valid": UNKNOWN, "reason": reason}
        return Streamed(CheckResult(CHECKER, UNKNOWN, f"Unknown: {reason}.", details), "-")


def _line(file: FilePath, index: int) -> int | None:
    """The line of the op of ``index`` in ``file`` (read again: only an error needs it)."""
    from core.formats.jsonl import JsonLines

    for n, d in JsonLines(file):
        if isinstance(d, dict) and d.get("index") == index:
            return n
    return None
