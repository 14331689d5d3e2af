"""Node faults against an in-memory fake cluster: what is applied, proven and healed.

The fake keeps real state (iptables rules per node, paused and killed servers, clock
offsets) and answers the nemeses' commands from it, so these tests fail when a nemesis
applies the wrong rules, skips its proof, or leaves something behind. The same nemeses
run against real clusters in tests/integration/test_nemesis.py.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from core.client import Invocation
from core.cluster import ClusterError
from core.option_checks import OptionError
from core.options import RunOptions
from nemesis.build import build_nemesis
from nemesis.faketime_skew import ClockSkew
from nemesis.node_faults import NodeKill, NodePause, NodePowerLoss
from nemesis.partition import Partition


class FakeCluster:
    """Three nodes whose commands act on in-memory state."""

    name = "fake"
    faketime = True

    def __init__(self, refuse_iptables: bool = False) -> None:
        self._nodes = ["n1", "n2", "n3"]
        self.rules: dict[str, list[tuple[str, ...]]] = {n: [] for n in self._nodes}
        self.paused: set[str] = set()
        self.killed: set[str] = set()
        self.offsets: dict[str, int] = {n: 0 for n in self._nodes}
        self.refuse_iptables = refuse_iptables

    # Cluster
    def nodes(self) -> list[str]:
        return list(self._nodes)

    def start(self, run_dir: Path) -> None: ...

    def endpoints(self) -> dict[str, str]:
        return {n: f"{self.ip(n)}:2379" for n in self._nodes}

    def collect_logs(self, dest: Path) -> None: ...

    def stop(self) -> None: ...

    def leader(self) -> str | None:
        return "n2"

    # NodeControl
    def ip(self, node: str) -> str:
        return f"10.9.0.{self._nodes.index(node) + 2}"

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
        argv = cmd if isinstance(cmd, list) else ["sh", "-c", cmd]
        if argv[0] == "iptables":
            return self._iptables(node, argv[1], tuple(argv[2:]))
        if argv[0] == "timeout":  # a TCP connect: times out when a rule drops the peer
            host = argv[-1].split("/dev/tcp/")[1].split("/")[0]
            dropped = any(
                r[r.index("-s") + 1] == host
                for r in self.rules[node]
                if "-s" in r and "statistic" not in r
            )
            return (124, "") if dropped else (0, "")
        if argv[0] == "env":  # date under libfaketime
            return 0, f"{time.time() + self.offsets[node]:.3f}\n"
        if argv[:2] == ["sh", "-c"] and argv[2].startswith("setsid nohup"):  # a strobe loop
            return 0, ""
        if argv[:2] == ["sh", "-c"] and "> /tmp/faketime" in argv[2]:
            self.offsets[node] = int(argv[2].split()[1])
            return 0, ""
        return 0, ""

    def _iptables(self, node: str, op: str, spec: tuple[str, ...]) -> tuple[int, str]:
        if self.refuse_iptables:
            return 1, "iptables: permission denied"
        if op == "-A":
            self.rules[node].append(spec)
        elif op == "-D":
            if spec not in self.rules[node]:
                return 1, "no such rule"
            self.rules[node].remove(spec)
        elif op == "-C":
            return (0, "") if spec in self.rules[node] else (1, "")
        elif op == "-S":
            return 0, "\n".join(" ".join(r) for r in self.rules[node])
        return 0, ""

    # Pausable / Killable
    def pause(self, node: str) -> None:
        self.paused.add(node)

    def resume(self, node: str) -> None:
        self.paused.discard(node)

    def is_paused(self, node: str) -> bool:
        return node in self.paused

    def kill(self, node: str) -> None:
        self.killed.add(node)

    def restart(self, node: str) -> None:
        self.killed.discard(node)

    def is_running(self, node: str) -> bool:
        return node not in self.killed

    # PowerCuttable
    def power_cut(self, node: str) -> dict[str, int]:
        self.kill(node)
        return {"/appendonlydir/appendonly.aof.1.incr.aof": 37 if node == "n2" else 0}

    def wait_healthy(self, node: str, timeout: float) -> None: ...


def test_partition_isolates_the_leader_proves_it_and_heals_exactly() -> None:
    c = FakeCluster()
    p = Partition(c, "leader")
    done = p.invoke(Invocation("start-partition", {"topology": "leader"}))
    assert done.type == "ok", done
    assert done.value["grudge"]["n2"] == ["n1", "n3"]
    assert all(done.value["proof"].values())
    assert len(c.rules["n2"]) == 2 and len(c.rules["n1"]) == 1
    healed = p.invoke(Invocation("stop-partition"))
    assert healed.type == "ok" and healed.value["rules_removed"] == 4
    assert all(not r for r in c.rules.values())


def test_a_partition_that_did_not_take_effect_fails() -> None:
    c = FakeCluster(refuse_iptables=True)
    done = Partition(c, "one").invoke(Invocation("start-partition", {"topology": "one"}))
    assert done.type == "fail" and "iptables refused" in (done.error or "")


def test_a_partition_of_one_node_cuts_nothing_and_fails() -> None:
    c = FakeCluster()
    c._nodes = ["n1"]
    done = Partition(c, "one").invoke(Invocation("start-partition", {"topology": "one"}))
    assert done.type == "fail" and "nothing to cut: 1 node(s)" in (done.error or "")
    assert not any(c.rules.values())


@pytest.mark.parametrize("target", ["redis", "redlock"])
def test_redis_targets_refuse_partitions_with_the_reason(target: str) -> None:
    from clusters.target_registry import resolve
    from harness.validate import check_target

    with pytest.raises(OptionError, match="servers never talk to each other"):
        check_target(
            resolve(target),
            RunOptions.of(target=target, workload="lock", nemesis=["pause", "partition"]),
        )
    check_target(
        resolve(target),
        RunOptions.of(target=target, workload="lock", nemesis=["pause", "kill", "clock"]),
    )


def test_teardown_removes_loss_rules_too() -> None:
    c = FakeCluster()
    p = Partition(c)
    assert p.invoke(Invocation("start-loss", {"probability": 0.5})).type == "ok"
    assert sum(len(r) for r in c.rules.values()) == 6
    p.teardown()
    assert all(not r for r in c.rules.values())


def test_node_pause_targets_the_leader_and_resumes() -> None:
    c = FakeCluster()
    n = NodePause(c)  # type: ignore[arg-type]
    done = n.invoke(Invocation("start-pause", {"target": "leader"}))
    assert done.type == "ok" and done.value["nodes"] == ["n2"] and c.paused == {"n2"}
    n.teardown()
    assert not c.paused


def test_kill_then_restart_with_proof() -> None:
    c = FakeCluster()
    k = NodeKill(c, "majority")  # type: ignore[arg-type]
    done = k.invoke(Invocation("start-kill"))
    assert done.type == "ok" and len(c.killed) == 2
    back = k.invoke(Invocation("stop-kill"))
    assert (
        back.type == "ok" and not c.killed and set(back.value["proof"]) == set(done.value["nodes"])
    )


def test_killing_every_node_restarts_them_all_before_waiting_for_a_quorum() -> None:
    """A node of a quorum service is healthy only once a majority runs again."""
    c = FakeCluster()

    def quorum(node: str, timeout: float) -> None:
        if len(c.killed) > 1:
            raise ClusterError(f"{node} has no leader")

    c.wait_healthy = quorum  # type: ignore[method-assign]
    k = NodeKill(c, "all")  # type: ignore[arg-type]
    assert k.invoke(Invocation("start-kill")).type == "ok" and len(c.killed) == 3
    back = k.invoke(Invocation("stop-kill"))
    assert back.type == "ok" and back.value["proof"] == {"n1": True, "n2": True, "n3": True}


def test_a_power_cut_says_what_it_discarded_per_node_and_file_and_restarts() -> None:
    c = FakeCluster()
    cut = NodePowerLoss(c, "leader")  # type: ignore[arg-type]
    done = cut.invoke(Invocation("start-power-loss"))
    assert done.type == "ok" and c.killed == {"n2"}
    assert done.value["discarded"] == {"n2": {"/appendonlydir/appendonly.aof.1.incr.aof": 37}}
    back = cut.invoke(Invocation("stop-power-loss"))
    assert back.type == "ok" and not c.killed and back.value["proof"] == {"n2": True}


def test_a_power_cut_that_did_not_take_effect_fails_with_its_proof_and_why() -> None:
    c = FakeCluster()

    def broken(node: str) -> dict[str, int]:
        raise ClusterError("The power-loss layer on n1 did not answer cut:\n Traceback")

    c.power_cut = broken  # type: ignore[method-assign]
    done = NodePowerLoss(c, "n1").invoke(Invocation("start-power-loss"))  # type: ignore[arg-type]
    assert done.type == "fail" and done.value["proof"] == {"n1": False}
    why = "The power-loss layer on n1 did not answer cut: Traceback"
    assert done.value["errors"] == {"n1": why}
    assert done.error == f"did not take effect on ['n1']; n1: {why}"


def test_power_loss_is_refused_by_a_cluster_without_the_layer() -> None:
    with pytest.raises(TypeError, match="cannot cut its nodes' power"):
        NodePowerLoss(Path("no-layer"), "one")  # type: ignore[arg-type]


def test_clock_bump_is_measured_and_reset() -> None:
    c = FakeCluster()
    clock = ClockSkew(c)  # type: ignore[arg-type]
    done = clock.invoke(Invocation("start-clock", {"target": "n1", "delta": 20}))
    assert done.type == "ok" and abs(done.value["offsets"]["n1"] - 20) < 1
    assert c.offsets["n1"] == 20
    reset = clock.invoke(Invocation("stop-clock"))
    assert reset.type == "ok" and c.offsets["n1"] == 0


def test_clock_strobe_says_what_it_asked_and_proves_its_loop_runs() -> None:
    clock = ClockSkew(FakeCluster())  # type: ignore[arg-type]
    asked = {"target": "n2", "delta": -7.4, "mode": "strobe", "period": 0.5, "duration": 4}
    done = clock.invoke(Invocation("start-clock", asked))
    assert done.type == "ok" and done.value == {
        "mode": "strobe",
        "delta": -7,
        "period": 0.5,
        "duration": 4.0,
        "nodes": ["n2"],
        "proof": {"n2": True},
    }
    refused = clock.invoke(Invocation("start-clock", {"target": "n9"}))
    assert refused.type == "fail" and refused.value == {"target": "n9"} and refused.error


def test_clock_faults_are_refused_where_the_clock_cannot_be_faked() -> None:
    c = FakeCluster()
    c.faketime = False
    with pytest.raises(OptionError, match="libfaketime"):
        build_nemesis(RunOptions.of(nemesis=["clock"]), c, seed=1)  # type: ignore[arg-type]


def test_every_fault_is_healed_at_the_end() -> None:
    c = FakeCluster()
    nem, schedule, final = build_nemesis(
        RunOptions.of(nemesis=["pause", "partition", "kill", "clock"]), c, seed=1
    )  # type: ignore[arg-type]
    assert nem is not None and schedule is not None and final is not None
    for f in ("start-pause", "start-partition", "start-kill", "start-clock"):
        assert nem.invoke(Invocation(f, {"target": "one", "delta": 30})).type == "ok", f
    nem.teardown()
    assert not c.paused and not c.killed and all(not r for r in c.rules.values())
    assert all(o == 0 for o in c.offsets.values())
