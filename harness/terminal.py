"""Where a command's words go: results on stdout, progress and logs on stderr.

A command is handed a ``Terminal``: ``out`` for what the command answers (verdict lines,
the paths it wrote, tables asked for), ``err`` for what tells how it is going (the run's
start, progress, warnings). ``harness run > log`` then keeps the verdict and the paths in
the file while the progress stays on the screen, and a CI log reads both unmangled.

Each console is made on first use (importing rich is most of the start-up of a command
that never prints through it, such as ``harness check``) and is a real ``Console``: rich's
``Live`` enters it with ``with``, which no forwarding proxy survives (the crash of issue
28: every run in a terminal died at its progress display).

Off a terminal nothing is wrapped: a path or a table cell split at column 80 is unreadable
in a CI log and breaks whatever greps it, so the width is unbounded there and a table
takes its natural width. Colour and cursor movement are the terminal's alone (rich's own
rule: off a terminal it writes plain text).

A closed pipe (``harness check F | head -1``) is not a crash: ``guard_streams`` ends that
stream's output quietly at its first ``BrokenPipeError`` and the work goes on to its end
(a run still heals its faults and writes its results; a check still decides every file),
so the exit code is still the verdict's. Any other failed write of the output (``> file``
on a full disk) ends the output too, and the command then ends with one line and exit
255: its answer did not reach where it was asked to go.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from rich.console import Console

UNWRAPPED_WIDTH: Final = 100_000
"""The width of a console off a terminal: wide enough that nothing is ever wrapped."""


def make_console(file: IO[str], *, quiet: bool = False) -> Console:
    """A console on ``file``: the terminal's width and colours on a terminal, unwrapped
    plain text elsewhere. A line printed is never broken by us (``soft_wrap``): a path
    split by an inserted newline cannot be copied, even from a terminal, which wraps a
    long line by itself; tables and panels still fit the terminal's width."""
    from rich.console import Console

    if _is_terminal(file):
        return Console(file=file, quiet=quiet, soft_wrap=True)
    return Console(file=file, quiet=quiet, width=UNWRAPPED_WIDTH, soft_wrap=True)


def _is_terminal(file: IO[str]) -> bool:
    try:
        return file.isatty()
    except (ValueError, OSError):  # closed, or no descriptor
        return False


class Terminal:
    """A command's two consoles: ``out`` (results, stdout) and ``err`` (progress and
    logs, stderr), each made on first use. ``quiet`` (tests, library callers) prints
    nothing on either."""

    def __init__(
        self,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
        *,
        quiet: bool = False,
        as_json: bool = False,
    ) -> None:
        self._files = (stdout, stderr)
        self._quiet = quiet
        self._as_json = as_json
        self._out: Console | None = None
        self._err: Console | None = None

    @property
    def out(self) -> Console:
        """Results: the verdict, the paths written, the tables a command answers with.
        With ``as_json`` they are words for a person beside the one JSON answer, so they
        go to stderr and stdout holds the JSON alone."""
        if self._as_json:
            return self.err
        if self._out is None:
            self._out = make_console(self._stdout(), quiet=self._quiet)
        return self._out

    @property
    def as_json(self) -> bool:
        """Whether the command answers in JSON (``--json``)."""
        return self._as_json

    def answer(self, data: Any) -> None:
        """The command's answer as one JSON object on one line of stdout (``--json``)."""
        if not self._quiet:
            out = self._stdout()
            out.write(json.dumps(data, default=str) + "\n")
            out.flush()

    def _stdout(self) -> IO[str]:
        return self._files[0] or sys.stdout

    @property
    def err(self) -> Console:
        """How it goes: what starts, progress, warnings, interruptions."""
        if self._err is None:
            self._err = make_console(self._files[1] or sys.stderr, quiet=self._quiet)
        return self._err

    @classmethod
    def silent(cls) -> Terminal:
        """A terminal that prints nothing (a run started by a test or a library)."""
        return cls(quiet=True)


def heading(console: Console, text: str) -> None:
    """A section heading: rich's rule across a terminal, one plain line elsewhere (a rule
    as wide as an unwrapped console would be 100,000 dashes)."""
    if console.is_terminal:
        console.rule(text)
    else:
        console.print(f"== {text} ==", markup=False, highlight=False)


class _Guarded(io.TextIOBase):
    """A text stream whose output ends quietly when its reader is gone: at the first
    broken pipe the descriptor is pointed at /dev/null (so no later write or flush fails,
    the interpreter's own at exit included) and what follows is dropped. Any other failed
    write (a full disk under ``> file``) ends the output the same way and is kept in
    ``failure`` for the command's last line. A stream Python never opened (a descriptor
    closed at start: ``>&-``) drops everything."""

    def __init__(self, stream: IO[str] | None) -> None:
        self._stream = stream
        self.failure: OSError | None = None

    def write(self, s: str) -> int:
        if self._stream is not None:
            try:
                return self._stream.write(s)
            except OSError as e:
                self._end(e)
        return len(s)

    def flush(self) -> None:
        if self._stream is not None:
            try:
                self._stream.flush()
            except OSError as e:
                self._end(e)

    def _end(self, e: OSError) -> None:
        stream, self._stream = self._stream, None
        if not isinstance(e, BrokenPipeError):
            self.failure = e
        with contextlib.suppress(OSError, ValueError, AttributeError):
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())  # type: ignore[union-attr]
            os.close(null)

    def isatty(self) -> bool:
        return self._stream is not None and _is_terminal(self._stream)

    def fileno(self) -> int:
        if self._stream is None:
            raise io.UnsupportedOperation("no descriptor")
        return self._stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return str(getattr(self._stream, "encoding", None) or "utf-8")


class Outputs:
    """What ``guard_streams`` saw: a failed write of stdout or stderr other than a
    closed pipe (a closed pipe is the reader's choice, not a failure)."""

    def __init__(self, out: _Guarded, err: _Guarded) -> None:
        self._streams = (("stdout", out), ("stderr", err))

    @property
    def failure(self) -> str | None:
        """``"stdout: [Errno 28] No space left on device"``, or None."""
        for name, s in self._streams:
            if s.failure is not None:
                return f"{name}: {s.failure.strerror or s.failure}"
        return None


@contextlib.contextmanager
def guard_streams() -> Iterator[Outputs]:
    """``sys.stdout`` and ``sys.stderr`` guarded while the block runs (restored after,
    what was written flushed)."""
    old = sys.stdout, sys.stderr
    out, err = _Guarded(old[0]), _Guarded(old[1])
    sys.stdout, sys.stderr = out, err
    try:
        yield Outputs(out, err)
    finally:
        out.flush()
        err.flush()
        sys.stdout, sys.stderr = old


__all__ = ["Terminal", "guard_streams", "heading", "make_console"]
