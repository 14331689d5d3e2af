"""Clock faults on real hosts: bump, strobe and reset the hosts' own clocks.

Where ``nemesis.faketime_skew`` fakes a server's clock with libfaketime inside a container, this
nemesis sets the clock of the host a node runs on (``clusters.remote.clock_shell``: ``date -s``
by a small shell helper, i.e. ``clock_settime``), so every program there sees it, Go
servers (etcd, Consul) included. Same operations, same values: ``start-clock`` bumps the
chosen nodes by ``delta`` seconds (random +/-5..60 s when not given) or, with
``mode: strobe``, flips their clocks ``+delta`` and back every ``period`` seconds for
``duration`` seconds; ``stop-clock`` puts every touched clock back.

Safety, in this order:

- it refuses, before the run starts and with one line, any cluster with a node that is the
  machine the harness runs on (its address is ours, or it has our machine-id or our
  kernel's boot id: a container here shares our clock). Only clusters whose nodes are
  whole hosts (``HostNodes``: the SSH clusters) are accepted at all;
- on the first change to a host it stops the host's time service (systemd-timesyncd,
  chrony, ntpd...), which would otherwise undo or fight the fault, and ``teardown`` starts
  it again; until then ``/var/lib/core/clock.json`` on the host says so (and what the
  clock's offset was), for ``harness clusters heal --ssh`` after a harness that died;
- the clocks' offsets to the control machine are measured before anything changes (the
  baseline), after every change (the op's value: each node's offset over time is in the
  history), and resetting returns each clock to its baseline offset, not to "zero".
"""

from __future__ import annotations

import random
import shlex
from typing import Protocol, runtime_checkable

from clusters.remote.base import Command, Exec
from clusters.remote.clock_shell import (
    RECORD,
    STROBE_MARK,
    STROBE_PATTERN,
    TimeService,
    correction,
    measure_offset,
    record_command,
    running_time_services,
    shift_script,
    strobe_script,
)
from clusters.remote.identity import MachineIdentity, identity_of, local_identity, same_machine
from core.client import Completion
from core.cluster import Cluster, ClusterError
from nemesis.base import Nemesis, RunView
from nemesis.faketime_skew import ClockJumps, ClockSkew, Jump, strobe_answer
from nemesis.nodes import NodeControl

TOLERANCE_S = 1.5


@runtime_checkable
class HostNodes(NodeControl, Protocol):
    """Nodes that are whole hosts: a command in a node runs on its host, so changing the
    clock there changes that machine's clock."""

    def host(self, node: str) -> str:
        """The host ``node`` runs on, as the user named it."""
        ...


class RefusedHost(ClusterError):
    """A fault would change the machine the harness runs on; the message says which node."""


class HostClock(ClockJumps):
    """Bumps and strobes the clocks of chosen hosts; ``stop-clock`` resets them all."""

    def __init__(
        self,
        cluster: Cluster,
        target: str = "one",
        seed: int = 0,
        delta: float | None = None,
        *,
        ours: MachineIdentity | None = None,
    ) -> None:
        if not isinstance(cluster, HostNodes):
            raise TypeError(
                f"{cluster.name} nodes are not whole hosts: their clock is this "
                "machine's; host clock faults need SSH hosts (--ssh)"
            )
        self.cluster = cluster
        self.control: HostNodes = cluster
        self.target = target
        self.delta = delta
        self._rng = random.Random(seed)
        self._view: RunView | None = None
        ours = ours or local_identity()
        for node in cluster.nodes():
            self._refuse_if_local(node, ours)
        self._safe = frozenset(cluster.nodes())
        self.baseline: dict[str, float | None] = self.offsets()
        self._held: dict[str, list[TimeService]] = {}
        self._touched: set[str] = set()

    def _refuse_if_local(self, node: str, ours: MachineIdentity) -> None:
        reason = same_machine(self.control.ip(node), identity_of(self._exec(node)), ours)
        if reason is not None:
            raise RefusedHost(
                f"Refusing clock faults on {node} ({self.control.host(node)}): {reason}; "
                "setting its clock would move the clock of the machine running the harness. "
                "Run the harness from another machine, or leave out the clock fault"
            )

    # -- Nemesis ----------------------------------------------------------------------

    def _jump(self, jump: Jump) -> Completion:
        unheld = self._hold_time(jump.nodes)
        if unheld:
            return Completion("fail", value={"nodes": jump.nodes}, error=unheld)
        if jump.strobe is not None:
            return self._strobe(jump.nodes, round(jump.delta, 3), *jump.strobe)
        return self._bump(jump.nodes, round(jump.delta, 3))

    def teardown(self) -> None:
        """Reset every touched clock, then start the time services stopped for the run."""
        problems = []
        unreset: set[str] = set()
        if self._touched:
            done = self._reset()
            if done.type != "ok":
                problems.append(str(done.error))
                unreset = {
                    n
                    for n, off in done.value["offsets"].items()
                    if not _near(off, self.baseline.get(n))
                }
        for node, services in sorted(self._held.items()):
            started = True
            for service in services:
                cmd = service.start()
                if cmd is not None and self._run(node, cmd)[0] != 0:
                    problems.append(f"could not start {service.name} again on {node}")
                    started = False
            if started and node not in unreset:
                self._run(node, ["rm", "-f", RECORD])  # nothing left to undo there
        self._held.clear()
        if problems:
            raise RuntimeError("; ".join(problems))

    # -- measurements -----------------------------------------------------------------

    def offsets(self, nodes: list[str] | None = None) -> dict[str, float | None]:
        """Each node's clock minus the control machine's, in seconds (None: no answer)."""
        return {n: measure_offset(self._exec(n)) for n in (nodes or self.cluster.nodes())}

    # -- faults -------------------------------------------------------------------------

    def _bump(self, nodes: list[str], delta: float) -> Completion:
        before = self.offsets(nodes)
        failed = [n for n in nodes if self._run(n, shift_script(delta))[0] != 0]
        self._touched.update(nodes)
        after = self.offsets(nodes)
        value = {"mode": "bump", "delta": delta, "offsets": after, "before": before}
        bad = failed + [
            n for n in nodes if n not in failed and not _near(after[n], _plus(before[n], delta))
        ]
        if bad:
            return Completion("fail", value=value, error=f"clock did not move on {bad}")
        return Completion("ok", value=value)

    def _strobe(self, nodes: list[str], delta: float, period: float, duration: float) -> Completion:
        flips = max(1, round(duration / (2 * period)))
        loop = strobe_script(delta, period, flips)
        for n in nodes:
            self._run(
                n,
                f"setsid nohup sh -c {shlex.quote(loop)} {STROBE_MARK} "
                "</dev/null >/dev/null 2>&1 &",
            )
        self._touched.update(nodes)
        running = {n: self._run(n, ["pgrep", "-f", STROBE_PATTERN])[0] == 0 for n in nodes}
        return strobe_answer(delta, period, duration, {"flips": flips}, nodes, running)

    def _reset(self) -> Completion:
        nodes = sorted(self._touched)
        for n in nodes:
            self._run(n, ["pkill", "-f", STROBE_PATTERN])
        current = self.offsets(nodes)
        for n in nodes:
            shift = correction(self.baseline.get(n), current[n])
            if shift is not None:
                self._run(n, shift)
        after = self.offsets(nodes)
        self._touched.clear()
        bad = [n for n in nodes if not _near(after[n], self.baseline.get(n))]
        value = {
            "mode": "reset",
            "offsets": after,
            "baseline": {n: self.baseline.get(n) for n in nodes},
        }
        if bad:
            return Completion("fail", value=value, error=f"clock not reset on {bad}")
        return Completion("ok", value=value)

    def _hold_time(self, nodes: list[str]) -> str | None:
        """Stop the time services of ``nodes`` not yet held; an error when one of them
        could not be started again afterwards (so none is stopped)."""
        found = {n: running_time_services(self._exec(n)) for n in nodes if n not in self._held}
        for n, services in found.items():
            manual = [s.name for s in services if s.start() is None]
            if manual:
                return (
                    f"{n} runs {', '.join(manual)} outside systemd, which the harness could "
                    "not start again; stop it on that host for the run"
                )
        for n, services in found.items():
            self._run(n, record_command(services, self.baseline.get(n)))
            for s in services:
                self._run(n, s.stop())
            self._held[n] = services
        return None

    # -- commands -----------------------------------------------------------------------

    def _run(self, node: str, cmd: Command) -> tuple[int, str]:
        """Run ``cmd`` as root on a node checked not to be this machine."""
        if node not in self._safe:
            raise RefusedHost(f"{node} was not checked for being this machine; no clock change")
        return self._exec(node)(cmd)

    def _exec(self, node: str) -> Exec:
        def run(cmd: Command) -> tuple[int, str]:
            return self.control.exec(node, cmd if isinstance(cmd, str) else list(cmd))

        return run


def _plus(offset: float | None, delta: float) -> float | None:
    return None if offset is None else offset + delta


def _near(measured: float | None, expected: float | None) -> bool:
    """Whether a measured offset is the expected one, within the measurement's error."""
    return measured is not None and expected is not None and abs(measured - expected) <= TOLERANCE_S


def clock_nemesis(cluster: Cluster, target: str = "one", seed: int = 0) -> Nemesis:
    """The clock nemesis a cluster can take: the hosts' real clocks for SSH clusters
    (``HostNodes``), libfaketime's offset for Docker clusters; TypeError for neither."""
    if isinstance(cluster, HostNodes):
        return HostClock(cluster, target, seed)
    return ClockSkew(cluster, target, seed)
