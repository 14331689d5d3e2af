"""Run a wire server (``workloads.common.wire``) as its own OS process, from a test or the runner.

``ServiceProcess`` spawns ``python -m MODULE --port P --port-file F ARGS...``, waits until the
port file appears and the server answers a ping, and can signal it (SIGSTOP/SIGCONT for a
pause, SIGKILL for a crash) and stop it. The server's stdout and stderr go to a log file.
Restarting reuses the first port, so addresses handed to clients stay valid. A server that
is killed and restarted should get its port from ``stable_port``: a port 0 comes from the
kernel's ephemeral range, which any process's bind or outgoing connection may take while
the server is down (a sim run's clients once read from another run's fresh server there).
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from core.procutil import popen_tied
from core.writes import open_append
from workloads.common.wire import WireClient
from workloads.errors import OpFailed, OpUnknown

_ROOT = Path(__file__).resolve().parent.parent


EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")


def stable_port(host: str = "127.0.0.1", lowest: int = 20000) -> int:
    """A free port below the kernel's ephemeral range (``ip_local_port_range``), which the
    kernel never hands out by itself: it stays this server's across a kill and restart.
    0 (any port) when that range leaves no room below it."""
    try:
        first = int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        first = 32768  # Linux's default
    rng = random.SystemRandom()
    for _ in range(100):
        if first <= lowest:
            break
        port = rng.randrange(lowest, first)
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue
            return port
    return 0


class ServiceStartError(RuntimeError):
    """A server process did not come up; the message points at its log."""


class ServiceProcess:
    """One server process: ``start``, ``pause``/``resume``, ``kill``, ``stop``.

    ``stop`` is safe to call at any time and more than once; use the instance as a context
    manager so that a failing test or run never leaves the process behind.
    """

    def __init__(
        self,
        module: str,
        args: Sequence[str],
        log_path: Path,
        host: str = "127.0.0.1",
        start_timeout: float = 15.0,
        port: int | None = None,
    ) -> None:
        self.module = module
        self.args = list(args)
        self.log_path = log_path
        self.host = host
        self.start_timeout = start_timeout
        self.port: int | None = port or None  # None or 0: any free port, kept on restart
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._paused = False

    @property
    def address(self) -> str:
        """``"host:port"`` of the running server."""
        if self.port is None:
            raise RuntimeError(f"{self.module} has not been started")
        return f"{self.host}:{self.port}"

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def paused(self) -> bool:
        return self._paused

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> str:
        """Spawn the server (on the previous port after a kill) and wait until it answers a
        ping; return its address. Raises ``ServiceStartError`` if it does not."""
        if self.running():
            return self.address
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        port_file = self.log_path.with_name(self.log_path.name + ".port")
        port_file.unlink(missing_ok=True)
        cmd = [
            sys.executable,
            "-m",
            self.module,
            "--host",
            self.host,
            "--port",
            str(self.port or 0),
            "--port-file",
            str(port_file),
            *self.args,
        ]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        self._log = open_append(self.log_path)  # never through a link; closed in _reap
        self._proc = popen_tied(  # a kill -9 of the harness takes the service along
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env=env,
        )
        self._paused = False
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                self._reap()
                raise ServiceStartError(
                    f"{self.module} exited with code {self._proc.returncode} while starting; "
                    f"see {self.log_path}"
                )
            if port_file.exists() and self._ping(int(port_file.read_text())):
                self.port = int(port_file.read_text())
                return self.address
            time.sleep(0.02)
        self.stop()
        raise ServiceStartError(
            f"{self.module} did not answer a ping within {self.start_timeout:g} s; "
            f"see {self.log_path}"
        )

    def wait_answering(self, timeout: float) -> bool:
        """Whether the running server answers a ping within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while self.running() and self.port is not None:
            if self._ping(self.port):
                return True
            if time.monotonic() >= deadline:
                break
            time.sleep(0.02)
        return False

    def _ping(self, port: int) -> bool:
        try:
            with WireClient(f"{self.host}:{port}", timeout=1.0) as c:
                return bool(c.call("ping") == "pong")
        except (OpFailed, OpUnknown):
            return False

    def pause(self) -> None:
        """Freeze the process (SIGSTOP): it keeps its sockets but answers nothing."""
        self._signal(signal.SIGSTOP)
        self._paused = True

    def resume(self) -> None:
        """Thaw the process (SIGCONT)."""
        self._signal(signal.SIGCONT)
        self._paused = False

    def kill(self) -> None:
        """Kill -9: the process dies at once and loses all its state."""
        if self.running():
            self._signal(signal.SIGKILL)
        self._reap()

    def stop(self, timeout: float = 5.0) -> None:
        """Terminate the process (thawing it first if paused), kill it if it lingers."""
        if self._proc is None:
            return
        if self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                if self._paused:
                    self._proc.send_signal(signal.SIGCONT)
                self._proc.terminate()
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._reap()

    def _signal(self, sig: signal.Signals) -> None:
        if not self.running():
            raise RuntimeError(f"{self.module} is not running")
        assert self._proc is not None
        self._proc.send_signal(sig)

    def _reap(self) -> None:
        if self._proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._proc.wait(5.0)
        self._paused = False
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> ServiceProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
