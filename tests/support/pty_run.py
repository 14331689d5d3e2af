"""Commands run as a person runs them: in a pseudo-terminal (the standard library's ``pty``).

``in_terminal`` starts a command with a pseudo-terminal as its stdin, stdout and stderr,
as a shell in a terminal emulator does, reads everything it writes (colours and cursor
movements included) and returns it with the exit code. ``keys`` are typed when the output
first shows a given text (Ctrl-C is ``"\\x03"``).
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import subprocess
import termios
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

HIDE_CURSOR = b"\x1b[?25l"
SHOW_CURSOR = b"\x1b[?25h"


class Session(NamedTuple):
    """What a command did in a terminal: its exit code and every byte it wrote."""

    code: int
    output: bytes

    @property
    def text(self) -> str:
        return self.output.decode(errors="replace")

    @property
    def tail(self) -> str:
        """The last lines written, for an assertion's message."""
        return "\n".join(self.text.replace("\r", "\n").splitlines()[-25:])

    def cursor_visible(self) -> bool:
        """Whether the cursor is visible when the command has ended: shown after it was
        last hidden, or never hidden."""
        return self.output.rfind(SHOW_CURSOR) >= self.output.rfind(HIDE_CURSOR)


def _own_terminal() -> None:
    """In the child: a session of its own with the pseudo-terminal (its stdin) as its
    controlling terminal, so Ctrl-C typed there is a SIGINT to its process group."""
    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def in_terminal(
    argv: Sequence[str],
    *,
    cwd: Path | None = None,
    timeout: float = 300,
    keys: Sequence[tuple[bytes, bytes]] = (),
    env: dict[str, str] | None = None,
    columns: int = 100,
) -> Session:
    """Run ``argv`` in a new pseudo-terminal ``columns`` wide; for each ``(seen, typed)``
    of ``keys``, type ``typed`` once ``seen`` has appeared in the output."""
    leader, follower = pty.openpty()
    os.set_blocking(leader, False)
    full_env = {**os.environ, **(env or {}), "COLUMNS": str(columns), "LINES": "40"}
    full_env.pop("CI", None)  # a terminal, not a CI log (rich reads CI as "no terminal")
    full_env.pop("NO_COLOR", None)
    full_env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(
        list(argv),
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env=full_env,
        preexec_fn=_own_terminal,
        close_fds=True,
    )
    os.close(follower)
    out = bytearray()
    pending = list(keys)
    deadline = time.monotonic() + timeout
    drained_by: float | None = None  # once it has exited: what is left, for 2 s at most
    try:
        while drained_by is None or time.monotonic() < drained_by:
            if time.monotonic() > deadline:
                proc.kill()
                raise TimeoutError(f"{argv} still running after {timeout} s:\n{out.decode()}")
            ready, _, _ = select.select([leader], [], [], 0.2)
            chunk = b""
            if ready:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    if proc.poll() is not None:
                        break
            out += chunk
            if drained_by is None and proc.poll() is not None:
                drained_by = time.monotonic() + 2
            while pending and pending[0][0] in out:
                os.write(leader, pending.pop(0)[1])
    finally:
        os.close(leader)
    return Session(proc.wait(), bytes(out))
