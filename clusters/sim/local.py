"""The sim's server as a ``ServerSpec``, run by the local-process backend (``clusters._local``).

One node, ``sim``, on loopback: ``python -m clusters.sim.server`` (``clusters/sim/server.py``
is that process) on the port the backend gives it, in its folder of the run directory,
``run_dir/sim/``: ``server.log`` (the backend's), ``events.jsonl`` (lease, lock and
leader events with run-clock times, kept across restarts: the target's ``service_log``) and
``wal.jsonl`` (the write-ahead log). A kill -9 and a restart on the same port replay the
log: leases keep their expiry, tokens and epochs carry on; with the ``forget-on-restart``
bug it comes back empty. The run sets its clock origin, seed and bugs (``for_run``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from clusters._local import LocalCluster, local_cluster
from clusters.server import Address, Launch, Peer, Place, RunSettings, ServerSpec
from clusters.sim.service import check_bugs
from core.run_clock import RunClock
from workloads.common.wire import WireClient
from workloads.errors import OpFailed, OpUnknown

NODE = "sim"
EVENTS = "events.jsonl"
EVENTS_LOG = f"{NODE}/{EVENTS}"
"""The server's event log, relative to the run directory (the target's ``service_log``)."""
_ROOT = Path(__file__).resolve().parents[2]
"""The checkout the server's module is imported from."""


@dataclass(frozen=True)
class SimServer(ServerSpec):
    """The sim service's one local process. ``bugs``: names from
    ``clusters.sim.service.BUGS`` to inject; ``lock_grace``: how long a waiter waits before
    ``lock-ignores-lease`` grants it anyway (s); ``seed``: the ``stale-read`` bug's
    choices; ``clock_origin``: the run clock's, which its events are stamped on."""

    name: str = "sim"
    process: str = "clusters.sim.server"
    default_nodes: int = 1
    start_timeout: float = 15.0
    local: bool = True
    node_names: tuple[str, ...] = (NODE,)
    fixed_version: str | None = "built-in"
    service_log: str | None = EVENTS_LOG
    bugs: tuple[str, ...] = ()
    lock_grace: float = 1.0
    seed: int | None = None
    clock_origin: int = 0

    def for_run(self, run: RunSettings) -> SimServer:
        """The server with the run's clock origin, seed and bugs (ValueError naming the
        bugs it has for one it has not)."""
        bugs = tuple(sorted(check_bugs(run.bugs)))
        return replace(self, bugs=bugs, seed=run.seed, clock_origin=run.clock_origin)

    def check_size(self, n: int, unit: str = "nodes") -> None:
        """The sim runs one node (LocalCluster says so for any other count)."""

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        """The server on ``node``'s port, its event log and write-ahead log in its folder."""
        argv = [sys.executable, "-m", "clusters.sim.server", "--host", node.ip]
        argv += ["--port", str(node.port), "--clock-origin", str(self.clock_origin)]
        argv += ["--events", f"{place.data}/{EVENTS}", "--wal", f"{place.data}/wal.jsonl"]
        argv += ["--lock-grace", str(self.lock_grace)]
        for bug in self.bugs:
            argv += ["--bug", bug]
        if self.seed is not None:
            argv += ["--seed", str(self.seed)]
        path = os.pathsep.join(filter(None, [str(_ROOT), os.environ.get("PYTHONPATH")]))
        return Launch(tuple(argv), env={"PYTHONPATH": path, "PYTHONUNBUFFERED": "1"})

    def healthy(self, at: Address) -> bool:
        """The server answers a ping."""
        try:
            with WireClient(str(at), timeout=1.0) as c:
                return bool(c.call("ping") == "pong")
        except (OpFailed, OpUnknown):
            return False


SERVER = SimServer()


def sim_cluster(
    clock: RunClock,
    bugs: Sequence[str] = (),
    *,
    lock_grace: float = 1.0,
    seed: int | None = None,
) -> LocalCluster:
    """The sim's cluster of one local process, not started: a run's comes from its
    ``TargetSpec``; tests and scenarios that drive the server directly build theirs here."""
    server = replace(SERVER, lock_grace=lock_grace)
    return local_cluster(server.for_run(RunSettings(clock.origin, seed, tuple(bugs))))
