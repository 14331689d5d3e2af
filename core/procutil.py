"""Small process helpers: die with the parent, read a process's state."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux only).

    Workers, the ``sim`` server and the protected resource call it at start, so a kill -9
    of the harness leaves no process behind, stopped ones included. ``parent``: the pid
    the caller expects as its parent; if that one already died (before this call: a
    process still starting up), exit at once instead. A hangup of the terminal reaches
    the whole process group: the children ignore it, the harness tears them down.
    """
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def process_state(pid: int) -> str | None:
    """The one-letter state of a process from /proc (R, S, D, T, t, Z...), None if gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name is in parentheses and may contain spaces: split after the last ')'.
    return stat.rsplit(")", 1)[1].split()[0]


def is_stopped(pid: int) -> bool:
    """True when the process is stopped by a signal (state T) or traced (t)."""
    return process_state(pid) in ("T", "t")


def signal_quietly(pid: int, sig: int) -> bool:
    """Send a signal; False when the process is already gone."""
    try:
        os.kill(pid, sig)
        return True
    except ProcessLookupError:
        return False
