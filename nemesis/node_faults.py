"""Faults of the server process on chosen nodes: pauses (SIGSTOP/SIGCONT), crashes
(kill -9, then restart) and power cuts (a crash that also loses what was not fsynced).

``start-pause`` / ``start-kill`` take ``value["target"]``: one, leader, holder, minority,
majority, all, or node names (``nemesis.nodes.pick_nodes``); a target that hits no node
(no holder known) fails the op with the reason. The completion names the
nodes hit and the proof read back from the node: the server is in state T (paused), or
no server process exists any more (killed). ``stop-*`` undoes it and proves that too; a
restarted node must answer its health probe again. For Redis the persistence mode decides
what survives a crash: that is the point of the kill fault there. A kill leaves the page
cache, so every byte written survives it; a power cut discards what was not fsynced, and
its completion says how much: ``discarded``, node -> file -> bytes.
"""

from __future__ import annotations

import random
from typing import Any

from core.client import Completion, Invocation
from core.cluster import Cluster, Killable, Pausable, PowerCuttable
from nemesis.base import RunView
from nemesis.nodes import aim


class _NodeFault:
    """Shared bookkeeping: which nodes are hit, choosing them, the ops' shape."""

    start_f: str
    stop_f: str

    def __init__(self, cluster: Cluster, target: str = "one", seed: int = 0) -> None:
        self.cluster = cluster
        self.target = target
        self._rng = random.Random(seed)
        self._hit: list[str] = []
        self._view: RunView | None = None

    def fs(self) -> frozenset[str]:
        return frozenset({self.start_f, self.stop_f})

    def setup(self, view: RunView) -> None:
        self._view = view

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f == self.start_f:
            target = (inv.value or {}).get("target", self.target)
            try:
                nodes = aim(target, self.cluster, self._rng, self._view)
            except ValueError as e:
                return Completion("fail", value={"target": target}, error=str(e))
            fresh = [n for n in nodes if n not in self._hit]
            self._hit.extend(fresh)
            proof = self._apply(fresh)
            return self._result(proof, {"target": target, "nodes": fresh, **self._evidence()})
        nodes, self._hit = self._hit, []
        return self._result(self._undo(nodes), {"nodes": nodes})

    @staticmethod
    def _result(proof: dict[str, bool], value: dict[str, Any]) -> Completion:
        """The completion of ``proof``; a fault that did not take effect fails, saying why
        on each node that told (``value["errors"]``, node -> one line)."""
        value["proof"] = proof
        if not all(proof.values()):
            bad = [n for n, ok in proof.items() if not ok]
            why = value.get("errors") or {}
            said = "".join(f"; {n}: {why[n]}" for n in bad if n in why)
            return Completion("fail", value=value, error=f"did not take effect on {bad}{said}")
        return Completion("ok", value=value)

    def _apply(self, nodes: list[str]) -> dict[str, bool]:
        raise NotImplementedError

    def _evidence(self) -> dict[str, Any]:
        """What the start's completion carries beside its proof (none by default)."""
        return {}

    def _undo(self, nodes: list[str]) -> dict[str, bool]:
        raise NotImplementedError

    def teardown(self) -> None:
        if self._hit:
            nodes, self._hit = self._hit, []
            self._undo(nodes)


class NodePause(_NodeFault):
    """SIGSTOP / SIGCONT of the server process (the node's network stays up)."""

    start_f, stop_f = "start-pause", "stop-pause"

    def __init__(self, cluster: Cluster, target: str = "one", seed: int = 0) -> None:
        if not isinstance(cluster, Pausable):
            raise TypeError(f"{cluster.name} cannot pause its nodes")
        super().__init__(cluster, target, seed)
        self.pausable: Pausable = cluster

    def _apply(self, nodes: list[str]) -> dict[str, bool]:
        for n in nodes:
            self.pausable.pause(n)
        return {n: self.pausable.is_paused(n) for n in nodes}

    def _undo(self, nodes: list[str]) -> dict[str, bool]:
        for n in nodes:
            self.pausable.resume(n)
        return {n: not self.pausable.is_paused(n) for n in nodes}


class NodeKill(_NodeFault):
    """kill -9 of the server process, and a restart that must come back healthy."""

    start_f, stop_f = "start-kill", "stop-kill"

    def __init__(
        self, cluster: Cluster, target: str = "one", seed: int = 0, restart_timeout: float = 60.0
    ) -> None:
        if not isinstance(cluster, Killable):
            raise TypeError(f"{cluster.name} cannot kill and restart its nodes")
        super().__init__(cluster, target, seed)
        self.killable: Killable = cluster
        self.restart_timeout = restart_timeout

    def _running(self, node: str) -> bool:
        probe = getattr(self.cluster, "is_running", None)
        return bool(probe(node)) if probe is not None else True

    def _apply(self, nodes: list[str]) -> dict[str, bool]:
        for n in nodes:
            self.killable.kill(n)
        return {n: not self._running(n) for n in nodes}

    def _undo(self, nodes: list[str]) -> dict[str, bool]:
        """Restart every node, then wait for each: a node of a quorum service is healthy
        only once enough of the others are back (etcd's /health needs a leader)."""
        proof = {}
        wait = getattr(self.cluster, "wait_healthy", None)
        for n in nodes:
            self.killable.restart(n)
        for n in nodes:
            try:
                if wait is not None:
                    wait(n, self.restart_timeout)
                proof[n] = self._running(n)
            except Exception:
                proof[n] = False
        return proof


class NodePowerLoss(NodeKill):
    """A power cut: kill -9 of the server, what it had not fsynced discarded (the bytes,
    per file, in the completion), and a restart on what the disk kept."""

    start_f, stop_f = "start-power-loss", "stop-power-loss"

    def __init__(
        self, cluster: Cluster, target: str = "one", seed: int = 0, restart_timeout: float = 60.0
    ) -> None:
        if not isinstance(cluster, PowerCuttable):
            raise TypeError(f"{getattr(cluster, 'name', cluster)} cannot cut its nodes' power")
        super().__init__(cluster, target, seed, restart_timeout)
        self.cuttable: PowerCuttable = cluster
        self._discarded: dict[str, dict[str, int]] = {}
        self._errors: dict[str, str] = {}

    def _apply(self, nodes: list[str]) -> dict[str, bool]:
        self._discarded, self._errors = {}, {}
        proof = {}
        for n in nodes:
            try:
                self._discarded[n] = self.cuttable.power_cut(n)
                proof[n] = not self._running(n)
            except Exception as e:  # the cut did not take effect there: say why
                proof[n] = False
                self._errors[n] = " ".join(str(e).split()) or type(e).__name__
        return proof

    def _evidence(self) -> dict[str, Any]:
        """The bytes discarded per node and file, and why a cut failed where one did."""
        errors = {"errors": self._errors} if self._errors else {}
        return {"discarded": self._discarded, **errors}
