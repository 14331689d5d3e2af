"""One server process run in the background on a host: launcher, pidfile, log, signals.

Everything of a run lives under one directory on the host (``Layout``), removed at the end.
The launcher is a shell script that appends the server's output to the log, writes its own
pid to the pidfile and then ``exec``s the server, so the pidfile holds the server's pid. It
is started with ``nohup setsid`` and all its descriptors redirected, so it outlives the SSH
command (and the pty a ``use_pty`` sudo gives it) and holds no channel open.

The pidfile alone is not trusted: a pid counts only while ``/proc/PID/comm`` is still the
server's process name (after a kill -9 the pid may be reused).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from clusters.remote.base import Remote, must, put_text
from clusters.server import Launch

ROOT = "/var/lib/harness"
"""Each run's directory on a host is ``ROOT/<run id>``."""


@dataclass(frozen=True, slots=True)
class Layout:
    """Where a run keeps things on a host."""

    root: str

    @classmethod
    def for_run(cls, run_id: str) -> Layout:
        return cls(f"{ROOT}/{run_id}")

    @property
    def conf(self) -> str:
        return f"{self.root}/conf"

    @property
    def data(self) -> str:
        return f"{self.root}/data"

    @property
    def log_dir(self) -> str:
        return f"{self.root}/log"

    @property
    def log(self) -> str:
        return f"{self.log_dir}/server.log"

    @property
    def pidfile(self) -> str:
        return f"{self.root}/server.pid"

    @property
    def launcher(self) -> str:
        return f"{self.root}/start.sh"

    @property
    def install_record(self) -> str:
        """What the run installed, as JSON (``clusters.ssh.packages``): for cleaning up
        after a harness that could not (``harness clusters down --ssh``)."""
        return f"{self.root}/packages.json"


@dataclass(frozen=True, slots=True)
class ProcessState:
    """The server's pid and its /proc state letter (R, S, T...)."""

    pid: int
    state: str

    @property
    def paused(self) -> bool:
        return self.state in "Tt"


class RemoteProcess:
    """The server of one node: write its launcher, start it, find it, signal it."""

    def __init__(self, remote: Remote, process: str, layout: Layout, label: str) -> None:
        self.remote = remote
        self.process = process
        self.layout = layout
        self.label = label
        """How the launcher's header names the node (``etcd on n1``)."""

    def launcher(self, launch: Launch) -> str:
        """The script that starts the server: log, pidfile, the launch's prelude and
        environment, then ``exec`` of its argv."""
        lay = self.layout
        lines = [
            "#!/bin/sh",
            f"# Starts {self.label}; written by the harness (clusters/ssh/), removed at the end.",
            f"mkdir -p {lay.log_dir} {lay.data}",
            f"exec >>{lay.log} 2>&1 </dev/null",
            f'echo "=== harness: starting {self.process} at $(date -u +%FT%TZ)"',
            f"cd {lay.data}",
            *launch.prelude,
            *(f"export {k}={shlex.quote(v)}" for k, v in launch.env.items()),
            f"echo $$ > {lay.pidfile}",
            "exec " + shlex.join(launch.argv),
        ]
        return "\n".join(lines) + "\n"

    def install(self, launch: Launch) -> None:
        """Write the launcher of ``launch`` onto the host."""
        put_text(self.remote, self.layout.launcher, self.launcher(launch), 0o755)

    def start(self) -> None:
        """Start the launcher in the background (a new session); does not wait."""
        must(
            self.remote,
            f"nohup setsid {self.layout.launcher} </dev/null >/dev/null 2>&1 &",
            f"starting {self.label}",
            sudo=True,
            timeout=30,
        )

    def state(self) -> ProcessState | None:
        """The live server's pid and state; None when it is not running (or a zombie)."""
        comm = shlex.quote(self.process)
        script = (
            f'pid=$(cat {self.layout.pidfile} 2>/dev/null) && [ -n "$pid" ] && '
            f'[ "$(cat /proc/$pid/comm 2>/dev/null)" = {comm} ] && '
            "echo $pid $(sed 's/^.*) //' /proc/$pid/stat | cut -d' ' -f1); true"
        )
        out = self.remote.run(script, sudo=True, timeout=30).stdout.split()
        if len(out) != 2 or not out[0].isdigit() or out[1] in ("Z", "X"):
            return None
        return ProcessState(int(out[0]), out[1])

    def signal(self, sig: str) -> bool:
        """Send ``sig`` to the server; False when it is not running."""
        st = self.state()
        return st is not None and self.remote.signal(st.pid, sig)

    def log_tail(self, lines: int = 15) -> str:
        """The last ``lines`` lines of the server's log, joined with " | "."""
        out = self.remote.run(
            ["tail", "-n", str(lines), self.layout.log], sudo=True, timeout=30
        ).stdout
        return " | ".join(line.strip() for line in out.splitlines() if line.strip())
