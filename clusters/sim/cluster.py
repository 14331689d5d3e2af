"""``SimCluster``: the sim service as a ``core.cluster.Cluster`` of one node, ``"sim"``.

The server is a local OS process (``python -m clusters.sim.server``), so the ``sim`` target
runs anywhere, Docker or not. It is ``Pausable`` (SIGSTOP/SIGCONT of the server process) and
``Killable`` (kill -9, then a restart on the same port that replays the write-ahead log:
leases keep their expiry, tokens and epochs carry on; with the ``forget-on-restart`` bug it
comes back empty). ``is_running`` and ``wait_healthy`` are what the kill fault proves with.

Files under ``run_dir/sim/``: ``server.log`` (stdout and stderr), ``events.jsonl`` (lease,
lock and leader events with run-clock times, kept across restarts) and ``wal.jsonl`` (the
write-ahead log).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from clusters.sim.service import check_bugs
from core.clock import RunClock
from core.cluster import ClusterError
from core.writes import write_bytes
from workloads.common.service import ServiceProcess, ServiceStartError, stable_port

NODE = "sim"
DIR = "sim"
"""The server's folder in the run directory."""
EVENTS_LOG = f"{DIR}/events.jsonl"
"""The server's event log, relative to the run directory (the target's ``service_log``)."""


class SimCluster:
    """One sim server process for one run.

    ``bugs``: names from ``clusters.sim.service.BUGS`` to inject; ``lock_grace``: how long
    a waiter waits before ``lock-ignores-lease`` grants it anyway (s); ``seed``: the
    ``stale-read`` bug's choices.
    """

    name = "sim"

    def __init__(
        self,
        clock: RunClock,
        bugs: Iterable[str] = (),
        lock_grace: float = 1.0,
        seed: int | None = None,
    ) -> None:
        self.clock = clock
        self.bugs = sorted(check_bugs(bugs))
        self.lock_grace = lock_grace
        self.seed = seed
        self.dir: Path | None = None
        self._proc: ServiceProcess | None = None

    @property
    def events_path(self) -> Path | None:
        """The server's JSON Lines event log (None before ``start``)."""
        return self.dir.parent / EVENTS_LOG if self.dir is not None else None

    def nodes(self) -> list[str]:
        return [NODE]

    def start(self, run_dir: Path) -> None:
        self.dir = run_dir / DIR
        self.dir.mkdir(parents=True, exist_ok=True)
        args = ["--clock-origin", str(self.clock.origin), "--events", str(self.events_path)]
        args += ["--wal", str(self.dir / "wal.jsonl")]
        args += ["--lock-grace", str(self.lock_grace)]
        for bug in self.bugs:
            args += ["--bug", bug]
        if self.seed is not None:
            args += ["--seed", str(self.seed)]
        self._proc = ServiceProcess(
            "clusters.sim.server", args, self.dir / "server.log", port=stable_port()
        )  # a kill must not free it for others
        try:
            self._proc.start()
        except ServiceStartError as e:
            raise ClusterError(f"the sim server did not start: {e}") from None

    def endpoints(self) -> dict[str, str]:
        return {NODE: self._process(NODE).address}

    def collect_logs(self, dest: Path) -> None:
        if self.dir is None:
            return
        out = dest / NODE
        out.mkdir(parents=True, exist_ok=True)
        for path in (self.dir / "server.log", self.dir.parent / EVENTS_LOG):
            if path.exists():
                write_bytes(out / path.name, path.read_bytes())  # never through a link

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.stop()

    # Pausable
    def pause(self, node: str) -> None:
        self._process(node).pause()

    def resume(self, node: str) -> None:
        self._process(node).resume()

    def is_paused(self, node: str) -> bool:
        return self._process(node).paused

    # Killable
    def kill(self, node: str) -> None:
        self._process(node).kill()

    def restart(self, node: str) -> None:
        try:
            self._process(node).start()
        except ServiceStartError as e:
            raise ClusterError(f"the sim server did not restart: {e}") from None

    def is_running(self, node: str) -> bool:
        """Whether the node's server process exists (the kill fault's proof)."""
        return self._process(node).running()

    def wait_healthy(self, node: str, timeout: float) -> None:
        """Return once the node's server answers a ping; raise ``ClusterError`` if it does
        not within ``timeout`` seconds."""
        if not self._process(node).wait_answering(timeout):
            raise ClusterError(f"the sim server did not answer within {timeout:g} s")

    def _process(self, node: str) -> ServiceProcess:
        if node != NODE:
            raise ClusterError(f"the sim cluster has one node, {NODE!r}, not {node!r}")
        if self._proc is None:
            raise ClusterError("the sim cluster has not been started; call start(run_dir)")
        return self._proc
