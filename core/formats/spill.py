"""A JSONL history bigger than memory, read once and split by key on disk, for a check of
one key at a time (``checkers.linear.streamed``).

``spill(path, root, budget)`` reads the history in chunks, each chunk's lines decoded
into ops by msgspec and checked as the in-memory fast path checks them
(``core.formats.jsonl_fast``: what no type says), the op semantics checked as it goes
(``core.history.first_break``'s rules, which only need each process's open invocation
and the processes an ``info`` retired), and keeps each key's ops in a buffer. Every
``FLUSH_EVENTS`` ops the buffers go to one file in a scratch folder made in ``root``
(``core.writes.scratch_folder``: never through a link, removed with its file however the
block ends), each key's buffer as one compact record: its ops' fields as columns, the
indices and times as differences from the op before, msgpack-encoded (about 15 bytes an
op, against a hundred in the file and two hundred in memory). ``Spilled.part(key)`` reads
a key's records back into its ops, equal to those the in-memory reader gives and in the
same order. What this holds in memory: the buffers, the places of the records (a few per
key and flush), each process's open invocation and the processes retired; never the
history.

The nemesis's ops are counted, not kept: no key's partition holds them. What this reader
does not accept it does not word: a line msgspec or the checks refuse, a break of the op
semantics, a last line without a newline that is not one cut short by a killed writer, no
client op. ``spill`` then gives None, and the caller reads the file in memory, whose
reader says what is wrong, where and what to do, as for any file.
"""

from __future__ import annotations

import contextlib
import gc
import io
import operator
import os
from collections.abc import Iterator
from itertools import accumulate, repeat
from pathlib import Path
from typing import Any, BinaryIO, Final

import msgspec

from core.formats.budget import Budget
from core.formats.errors import FormatError
from core.formats.fields import MAX_INT
from core.formats.files import open_regular
from core.formats.jsonl import JsonLines, truncation_note
from core.formats.jsonl_fast import FAIL, _checker, _decoder, blocks
from core.history import History
from core.ops import NEMESIS, OP_TYPES, Op
from core.writes import scratch_file, scratch_folder

__all__ = ["FLUSH_EVENTS", "Spilled", "spill"]

FLUSH_EVENTS: Final = 1 << 18
"""Ops buffered before the buffers go to disk (about 50 MiB of ops in memory)."""
RECORDS: Final = "records"
"""The spill file's name in its scratch folder."""
DOING: Final = "reading (streamed)"
_TYPE_CODE: Final = {t: i for i, t in enumerate(OP_TYPES)}
_FIELDS: Final = tuple(
    operator.attrgetter(name)
    for name in ("index", "time", "process", "type", "f", "value", "error", "node")
)


class Spilled:
    """A history split by key on disk: its keys in order of first appearance
    (``labels``), each key's ops read back by ``part``; ``events`` ops read (the
    nemesis's too), ``invocations`` of clients among them, and the ``notes`` to say (a
    truncated last line left out)."""

    def __init__(self, out: io.FileIO, places: dict[Any, list[tuple[int, int]]]) -> None:
        self._out = out
        self._places = places
        self._decode = msgspec.msgpack.Decoder().decode
        self.labels = list(places)
        self.events = 0
        self.invocations = 0
        self.notes: tuple[str, ...] = ()

    def part(self, label: Any) -> History:
        """The ops of the key ``label``, in the order of the file."""
        ops: list[Op] = []
        fd = self._out.fileno()
        for at, size in self._places[label]:
            i0, di, t0, dt, processes, types, fs, values, errors, nodes = self._decode(
                os.pread(fd, size, at)
            )
            ops += map(
                Op,
                accumulate(di, initial=i0),
                accumulate(dt, initial=t0),
                processes,
                map(OP_TYPES.__getitem__, types),
                fs,
                values,
                repeat(label),
                repeat(None) if errors is None else errors,
                repeat(None) if nodes is None else nodes,
            )
        return History(ops)


@contextlib.contextmanager
def spill(
    path: Path, root: Path, budget: Budget | None = None, max_time: int = MAX_INT
) -> Iterator[Spilled | None]:
    """The JSONL history ``path`` split by key into a scratch folder made in ``root``
    (WriteRefused, one line, where it cannot be: a link, not a folder), within
    ``budget`` (OutOfBudget); None where this reader does not accept the file (see the
    module's docstring). The folder and its file are removed when the block ends."""
    paused = gc.isenabled()
    gc.disable()  # reading makes many objects and no cycles
    try:
        with (
            scratch_folder(root) as folder,
            scratch_file(folder, RECORDS) as out,
            open_regular(path) as f,
        ):
            yield _Reader(path, out, budget, max_time).read(f)
    finally:
        if paused:
            gc.enable()


class _Reader:
    """One pass over a JSONL history: its ops checked and buffered by key, the buffers
    written to ``out`` as compact records."""

    def __init__(self, path: Path, out: io.FileIO, budget: Budget | None, max_time: int) -> None:
        self.path = path
        self.out = out
        self.budget = budget
        self.max_time = max_time
        self.places: dict[Any, list[tuple[int, int]]] = {}
        self.buffers: dict[Any, list[Op]] = {}
        self.dirty: list[Any] = []  # the keys whose buffers hold ops
        self.held = 0
        self.at = 0  # bytes written to ``out``
        self.open: dict[Any, Op] = {}  # process -> its open invocation
        self.retired: set[Any] = set()  # processes whose op ended info
        self.events = 0
        self.invocations = 0
        self.encode = msgspec.msgpack.Encoder().encode

    def read(self, f: BinaryIO) -> Spilled | None:
        decoder = _decoder()
        if decoder is None:
            return None
        decode = decoder.decode_lines
        check = _checker()[0]
        budget = self.budget
        previous = -1
        lines = 0
        tail: list[bytes] = []
        for block in blocks(f, tail):
            if budget is not None:
                budget.check(DOING, self.events)
            try:
                ops: list[Op] = decode(block)
            except Exception:  # msgspec's DecodeError or ValidationError
                return None
            lines += block.count(b"\n")
            del block
            previous = check(ops, previous, self.max_time)
            if previous == FAIL or not self.take(ops):
                return None
        if budget is not None:
            budget.check(DOING, self.events)
        notes: tuple[str, ...] = ()
        rest = tail[0]
        if rest.strip():
            last = self.last(rest, decoder, previous, check)
            if last is None:
                return None
            if not last:
                notes = (truncation_note(self.path, lines + 1),)
        self.flush()
        if not self.places:
            return None  # no client op: the in-memory reader says so
        spilled = Spilled(self.out, self.places)
        spilled.events, spilled.invocations, spilled.notes = self.events, self.invocations, notes
        return spilled

    def last(self, rest: bytes, decoder: Any, previous: int, check: Any) -> bool | None:
        """Take the last line, which has no newline: True when it is an op (taken),
        False when it is the start of one cut short by a killed writer (left out, as the
        in-memory reader leaves it), None for anything else."""
        try:
            op = decoder.decode(rest)
        except Exception:
            lines = JsonLines(self.path, file=io.BytesIO(rest))
            try:
                whole = list(lines)
            except FormatError:
                return None
            return None if whole or lines.truncated is None else False
        if check([op], previous, self.max_time) == FAIL or not self.take([op]):
            return None
        return True

    def take(self, ops: list[Op]) -> bool:
        """Buffer ``ops`` by key, checking the op semantics (``first_break``'s rules);
        False at the first op that breaks them."""
        open_ = self.open
        retired = self.retired
        buffers = self.buffers
        for op in ops:
            p = op.process
            if p == NEMESIS:  # its faults in turn, completed or not
                fault = open_.pop(p, None)
                if op.type == "invoke":
                    if fault is not None:
                        return False
                    open_[p] = op
                continue
            if op.type == "invoke":
                if p in open_ or p in retired:
                    return False
                open_[p] = op
                key = op.key
                self.invocations += 1
            else:
                inv = open_.pop(p, None)
                if inv is None or op.f != inv.f or op.key != inv.key or op.time < inv.time:
                    return False
                if op.type == "info":
                    retired.add(p)
                key = inv.key
            buffer = buffers.get(key)
            if buffer is None:
                buffer = buffers[key] = []
                self.places[key] = []
            if not buffer:
                self.dirty.append(key)
            buffer.append(op)
        self.events += len(ops)
        self.held += len(ops)
        if self.held >= FLUSH_EVENTS:
            self.flush()
        return True

    def flush(self) -> None:
        """Write every buffer that holds ops as its key's next record, and empty it."""
        blobs = []
        for key in self.dirty:
            buffer = self.buffers[key]
            blob = self.encode(_columns(buffer))
            self.places[key].append((self.at, len(blob)))
            self.at += len(blob)
            blobs.append(blob)
            self.buffers[key] = []
        view = memoryview(b"".join(blobs))
        while view:
            view = view[self.out.write(view) or 0 :]
        self.dirty = []
        self.held = 0


def _columns(ops: list[Op]) -> tuple[Any, ...]:
    """A key's ops as one compact record (``Spilled.part`` reads it back): the first
    index and the differences to each next one, the same of the times, then the
    processes, types (as bytes), fs and values; the errors and nodes, None when no op has
    one."""
    index, time, process, type_, f, value, error, node = (list(map(g, ops)) for g in _FIELDS)
    return (
        index[0],
        list(map(operator.sub, index[1:], index)),
        time[0],
        list(map(operator.sub, time[1:], time)),
        process,
        bytes(map(_TYPE_CODE.__getitem__, type_)),
        f,
        value,
        None if error.count(None) == len(error) else error,
        None if node.count(None) == len(node) else node,
    )
