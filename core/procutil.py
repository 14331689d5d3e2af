"""Small process helpers: start a child that dies with this process, read a process's state."""

from __future__ import annotations

import ctypes
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

_PR_SET_PDEATHSIG = 1

T = TypeVar("T")


def die_with_parent(sig: int = signal.SIGKILL, parent: int | None = None) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent dies (Linux only).

    Workers, the ``sim`` server and the protected resource call it at start, so a kill -9
    of the harness leaves no process behind, stopped ones included; each is started
    through ``start_tied``, since the kernel's parent here is the thread that forked it.
    ``parent``: the pid the caller expects as its parent; if that one already died
    (before this call: a process still starting up), exit at once instead. A hangup of
    the terminal reaches the whole process group: the children ignore it, the harness
    tears them down.
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


def start_tied(start: Callable[[], T]) -> T:
    """Run ``start``, which starts a child that calls ``die_with_parent`` (in its
    ``preexec_fn``, or first thing after its exec), from a thread that lives as long as
    this process, and return what it returned (raise what it raised).

    The kernel's "parent" of ``PR_SET_PDEATHSIG`` is the *thread* that forked the child
    (``man 2 prctl``): a child forked by a thread that ends (the nemesis's, a pool's) is
    killed then, while the harness runs on. So the main thread forks its children itself
    and every other thread hands the fork to the spawner, one daemon thread started at
    the first such call that never ends before the process; either one dies only with
    the process, and its children then with it. A signal's ``KeyboardInterrupt`` reaches
    the main thread alone, so no caller stops waiting with its child started unseen."""
    if threading.current_thread() is threading.main_thread():
        return start()
    return _spawner().run(start)


def popen_tied(args: Sequence[str], **kwargs: Any) -> subprocess.Popen[bytes]:
    """``subprocess.Popen(args, **kwargs)`` of a child that dies with this process
    (``start_tied``), or exits at once should this process have died before it could ask."""
    here = os.getpid()
    tie = partial(die_with_parent, parent=here)
    return start_tied(lambda: subprocess.Popen(args, preexec_fn=tie, **kwargs))


class _Spawner:
    """The daemon thread ``start_tied`` runs the starts of the other threads in, one at a
    time, each caller waiting for its own."""

    def __init__(self) -> None:
        self._requests: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]
        self._requests = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._serve, name="spawner", daemon=True)
        self._thread.start()

    def run(self, start: Callable[[], T]) -> T:
        if threading.current_thread() is self._thread:
            return start()  # a start that starts another
        done: Future[T] = Future()
        self._requests.put((start, done))
        return done.result()

    def _serve(self) -> None:
        while True:
            start, done = self._requests.get()
            try:
                done.set_result(start())
            except BaseException as e:  # the caller's to handle
                done.set_exception(e)


_SPAWNER: _Spawner | None = None
_SPAWNER_LOCK = threading.Lock()


def _spawner() -> _Spawner:
    """This process's spawner, started at the first call."""
    global _SPAWNER
    with _SPAWNER_LOCK:
        if _SPAWNER is None:
            _SPAWNER = _Spawner()
        return _SPAWNER


def _forget_spawner() -> None:
    """In a child forked from this process (a fork without exec): the spawner's thread
    was not copied, nor may its lock be free; the child starts its own when it needs one."""
    global _SPAWNER, _SPAWNER_LOCK
    _SPAWNER = None
    _SPAWNER_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_spawner)


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
