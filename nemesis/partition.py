"""Network partitions and packet loss with iptables inside the nodes' network namespaces.

``start-partition`` turns a topology (``nemesis.topology``) into a grudge and, in every
node, drops incoming packets from the peers it holds a grudge against. Every rule carries
a comment naming this run, and healing deletes exactly the rules this nemesis added, then
checks that none is left. ``start-loss`` drops a random fraction of packets between all
nodes (iptables' ``statistic`` match): ``tc netem`` is missing from this kernel, so delay
is refused rather than faked.

Proof: after adding the rules, each node that should no longer hear a peer is asked to
open a TCP connection to that peer's client port; it must time out (no answer at all: a
refused connection would prove the link is up).
"""

from __future__ import annotations

import random
import secrets
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from core.client import Completion, Invocation
from core.cluster import Cluster
from nemesis.base import RunView
from nemesis.nodes import NodeControl, holder_node, leader_of
from nemesis.topology import Grudge, grudge_for

START, STOP = "start-partition", "stop-partition"
START_LOSS, STOP_LOSS = "start-loss", "stop-loss"
TIMED_OUT = 124  # exit code of timeout(1)


class Partition:
    """Partitions (and packet loss) between the nodes of one cluster."""

    def __init__(
        self, cluster: Cluster, topology: str = "random-halves", seed: int = 0, loss: float = 0.3
    ) -> None:
        if not isinstance(cluster, NodeControl):
            raise TypeError(f"{cluster.name} nodes cannot run commands: no partitions there")
        self.cluster = cluster
        self.control: NodeControl = cluster
        self.topology = topology
        self.loss = loss
        self._rng = random.Random(seed)
        self.tag = f"harness-{secrets.token_hex(4)}"
        self._rules: list[tuple[str, list[str]]] = []  # (node, iptables rule spec)
        self._view: RunView | None = None

    def fs(self) -> frozenset[str]:
        return frozenset({START, STOP, START_LOSS, STOP_LOSS})

    def setup(self, view: RunView) -> None:
        self._view = view

    def invoke(self, inv: Invocation) -> Completion:
        if inv.f == START:
            value = inv.value or {}
            return self._partition(value.get("topology", self.topology))
        if inv.f == START_LOSS:
            return self._lossy(float((inv.value or {}).get("probability", self.loss)))
        healed = self.heal()
        return Completion("ok", value=healed)

    def _add(self, node: str, spec: list[str]) -> bool:
        rc, _ = self.control.exec(node, ["iptables", "-A", *spec])
        if rc == 0:
            self._rules.append((node, spec))
        return rc == 0

    def _drop_from(self, peer_ip: str, extra: list[str] | None = None) -> list[str]:
        return [
            "INPUT",
            "-s",
            peer_ip,
            *(extra or []),
            "-j",
            "DROP",
            "-m",
            "comment",
            "--comment",
            self.tag,
        ]

    def _partition(self, topology: str) -> Completion:
        nodes = self.cluster.nodes()
        holder = holder_node(self._view) if topology == "holder" else None
        try:
            grudge = grudge_for(topology, nodes, self._rng, leader_of(self.cluster), holder)
        except ValueError as e:
            return Completion("fail", value={"topology": topology}, error=str(e))
        failed = [
            f"{n}<-{p}"
            for n, peers in grudge.items()
            for p in sorted(peers)
            if not self._add(n, self._drop_from(self.control.ip(p)))
        ]
        value: dict[str, Any] = {
            "topology": topology,
            "grudge": {n: sorted(p) for n, p in grudge.items()},
        }
        if not any(grudge.values()):
            return Completion(
                "fail",
                value=value,
                error=f"nothing to cut: {len(nodes)} node(s), no link between "
                "two of them in this topology",
            )
        if failed:
            return Completion("fail", value=value, error=f"iptables refused: {failed}")
        proof = self._prove(grudge)
        value["proof"] = proof
        if not all(proof.values()):
            return Completion(
                "fail", value=value, error="a partitioned node could still reach a peer"
            )
        return Completion("ok", value=value)

    def _lossy(self, probability: float) -> Completion:
        nodes = self.cluster.nodes()
        spec = ["-m", "statistic", "--mode", "random", "--probability", f"{probability:.3f}"]
        for n in nodes:
            for p in nodes:
                if p != n and not self._add(n, self._drop_from(self.control.ip(p), spec)):
                    return Completion("fail", error=f"iptables refused a loss rule on {n}")
        return Completion(
            "ok",
            value={
                "probability": probability,
                "nodes": nodes,
                "proof": "rules in place (iptables -C)"
                if self._rules_present()
                else "rules missing",
            },
        )

    def _prove(self, grudge: Grudge) -> dict[str, bool]:
        """For one cut link per node, the node's connection attempt must time out. The
        nodes try at once (one each, so each node's connection carries one probe): a
        probe waits out its full timeout when the cut holds, and one after another they
        kept a three-node partition from being shown for 3 s of its window."""
        endpoints = self.cluster.endpoints()
        links = {
            f"{node}<-{min(peers)}": (node, endpoints[min(peers)])
            for node, peers in grudge.items()
            if peers
        }
        with ThreadPoolExecutor(max_workers=max(1, len(links))) as pool:
            held = {
                link: pool.submit(cannot_connect, self.control, node, address)
                for link, (node, address) in links.items()
            }
            return {link: f.result() for link, f in held.items()}

    def _rules_present(self) -> bool:
        return all(
            self.control.exec(n, ["iptables", "-C", *spec])[0] == 0 for n, spec in self._rules
        )

    def heal(self) -> dict[str, Any]:
        """Delete exactly the rules added; report any rule of ours still present."""
        removed = 0
        for node, spec in reversed(self._rules):
            rc, _ = self.control.exec(node, ["iptables", "-D", *spec])
            removed += rc == 0
        self._rules.clear()
        left = [
            n
            for n in self.cluster.nodes()
            if self.tag in self.control.exec(n, ["iptables", "-S"])[1]
        ]
        if left:
            raise RuntimeError(f"partition rules of {self.tag} remain on {left}")
        return {"rules_removed": removed}

    def teardown(self) -> None:
        if self._rules:
            self.heal()


def cannot_connect(control: NodeControl, node: str, address: str, wait: float = 1.0) -> bool:
    """Whether a TCP connection from ``node`` to ``address`` gets no answer at all within
    ``wait`` seconds (packets dropped), as opposed to connecting or being refused."""
    host, port = address.rsplit(":", 1)
    rc, _ = control.exec(
        node, ["timeout", str(wait), "bash", "-c", f"exec 3<>/dev/tcp/{host}/{port}"]
    )
    return rc == TIMED_OUT
