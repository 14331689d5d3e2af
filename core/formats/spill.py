"""A JSONL history bigger than memory, read once and split by key on disk, for a check of
one key at a time (``checkers.linear.streamed``).

``spill(path, root, budget)`` reads the history in chunks, each chunk's lines decoded
into ops by msgspec and checked as the in-memory fast path checks them
(``core.formats.jsonl_fast``: what no type says), the op semantics checked as it goes
(``core.history.first_break``'s rules, which only need each process's open invocation
and the processes an ``info`` retired), and keeps each op's line in its key's buffer.
Every ``FLUSH_EVENTS`` ops the buffers go to one file in a scratch folder made in ``root``
(``core.writes.scratch_folder``: never through a link, removed with its file however the
block ends), each key's buffer as one compact record: its lines compressed (zlib: about
19 bytes an op, against a hundred in the file and two hundred in memory).
``Spilled.part(key)`` reads a key's records back and decodes them as the in-memory reader
decodes the file: its ops are those that reader gives, in the same order. What this
holds in memory: the buffers, the places of the records (a few per key and flush), each
process's open invocation and the processes retired; never the history.

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
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, Final

from core.errors import HarnessError
from core.formats.budget import Budget
from core.formats.errors import FormatError
from core.formats.fields import MAX_INT
from core.formats.files import open_regular
from core.formats.jsonl import JsonLines, truncation_note
from core.formats.jsonl_fast import FAIL, blocks, line_checks, op_decoder
from core.history import History
from core.ops import NEMESIS, Op
from core.writes import scratch_file, scratch_folder

__all__ = ["FLUSH_EVENTS", "Spilled", "spill"]

FLUSH_EVENTS: Final = 1 << 18
"""Ops buffered before the buffers go to disk (their lines: about 35 MiB)."""
RECORDS: Final = "records"
"""The spill file's name in its scratch folder."""
DOING: Final = "reading"
LEVEL: Final = 1
"""zlib's level: the fastest (level 6 saves a fifth of the bytes for twice the time)."""


class Spilled:
    """A history split by key on disk: its keys in order of first appearance
    (``labels``), each key's ops read back by ``part``; ``events`` ops read (the
    nemesis's too), ``invocations`` of clients among them, and the ``notes`` to say (a
    truncated last line left out)."""

    def __init__(
        self, out: io.FileIO, places: dict[Any, list[tuple[int, int]]], decode: Any
    ) -> None:
        self._out = out
        self._places = places
        self._decode = decode
        self.labels = list(places)
        self.events = 0
        self.invocations = 0
        self.notes: tuple[str, ...] = ()

    def part(self, label: Any) -> History:
        """The ops of the key ``label``, in the order of the file."""
        ops: list[Op] = []
        fd = self._out.fileno()
        for at, size in self._places[label]:
            ops += self._decode(zlib.decompress(os.pread(fd, size, at)))
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
    """One pass over a JSONL history: its ops checked, their lines buffered by key, the
    buffers written to ``out`` as compact records."""

    def __init__(self, path: Path, out: io.FileIO, budget: Budget | None, max_time: int) -> None:
        self.path = path
        self.out = out
        self.budget = budget
        self.max_time = max_time
        self.places: dict[Any, list[tuple[int, int]]] = {}
        self.buffers: dict[Any, list[bytes]] = {}
        self.dirty: list[Any] = []  # the keys whose buffers hold ops
        self.held = 0
        self.at = 0  # bytes written to ``out``
        self.open: dict[Any, Op] = {}  # process -> its open invocation
        self.retired: set[Any] = set()  # processes whose op ended info
        self.events = 0
        self.invocations = 0
        self.decode: Any = None

    def read(self, f: BinaryIO) -> Spilled | None:
        decoder = op_decoder()
        if decoder is None:
            return None
        decode = self.decode = decoder.decode_lines
        check = line_checks()[0]
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
            raw = block.split(b"\n")
            raw.pop()  # after the last newline: nothing
            del block
            lines += len(raw)
            if len(raw) != len(ops):  # blank lines, which the decoder skips
                raw = [line for line in raw if line.strip()]
            previous = check(ops, previous, self.max_time)
            if previous == FAIL or len(raw) != len(ops) or not self.take(ops, raw):
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
        spilled = Spilled(self.out, self.places, self.decode)
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
        if check([op], previous, self.max_time) == FAIL or not self.take([op], [rest]):
            return None
        return True

    def take(self, ops: list[Op], raw: list[bytes]) -> bool:
        """Buffer the lines ``raw`` of ``ops`` by key, checking the op semantics
        (``first_break``'s rules); False at the first op that breaks them."""
        open_ = self.open
        retired = self.retired
        buffers = self.buffers
        invocations = 0
        for op, line in zip(ops, raw, strict=True):
            p = op.process
            if type(p) is str and p == NEMESIS:  # its faults in turn, completed or not
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
                invocations += 1
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
            buffer.append(line)
        self.invocations += invocations
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
            buffer.append(b"")  # a newline after the last line too
            blob = zlib.compress(b"\n".join(buffer), LEVEL)
            self.places[key].append((self.at, len(blob)))
            self.at += len(blob)
            blobs.append(blob)
            self.buffers[key] = []
        view = memoryview(b"".join(blobs))
        try:
            while view:
                view = view[self.out.write(view) or 0 :]
        except OSError as e:  # a full disk: said in one line, the folder removed
            raise HarnessError(
                f"{self.path}: cannot spill it to disk ({e.strerror}); name a folder with "
                "room with --spill-dir, or check it in memory (--no-stream)"
            ) from None
        self.dirty = []
        self.held = 0
