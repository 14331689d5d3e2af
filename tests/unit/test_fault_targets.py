"""Faults aimed exactly (issue 15, item 3): ``--nemesis-target`` per fault, ``holder`` and
node names, against the in-memory fake cluster and a fake view of the run.

``holder`` is the node the current lock holder's client talks to: the runner learns it
from the completions (each names its node) and keeps it per thread, so a replacement
process keeps it too. A fault aimed at the holder when none is known fails with the
reason instead of hitting another node.
"""

from __future__ import annotations

import random

import pytest
from test_nemesis_faults import FakeCluster

from core import gen
from core.client import Completion, Invocation
from core.ops import Op
from core.option_checks import OptionError
from core.options import RunOptions
from core.run_clock import RunClock
from harness.runner import Runner, _Open
from harness.validate import check_nemesis_target
from nemesis import nodes
from nemesis.build import build_nemesis
from nemesis.faketime_skew import ClockSkew
from nemesis.node_faults import NodeKill, NodePause
from nemesis.nodes import pick_nodes
from nemesis.partition import Partition
from nemesis.targets import target_of
from nemesis.topology import grudge_for
from workloads.lock.ops import LOCK_HOLDER


class FakeView:
    """The run as a nemesis sees it: who holds the lock, and which node each talks to."""

    holder = LOCK_HOLDER

    def __init__(self, holding: list[int], node: dict[int, str]) -> None:
        self.clock = RunClock()
        self.holding = holding
        self.node = node

    def client_pids(self) -> dict[int, int]:
        return {}

    def holders(self) -> list[int]:
        return list(self.holding)

    def working_since(self, process: int) -> int | None:
        return None

    def node_of(self, process: int) -> str | None:
        return self.node.get(process)


HOLDER_ON_N3 = FakeView([4, 1], {4: "n3", 1: "n1"})  # process 4 acquired last


@pytest.fixture(autouse=True)
def _short_holder_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A view without holders gets none: wait 0.1 s for one, not 5."""
    monkeypatch.setattr(nodes, "HOLDER_WAIT_S", 0.1)


def test_partition_of_the_holder_isolates_the_server_its_client_talks_to() -> None:
    c = FakeCluster()
    p = Partition(c, "holder")
    p.setup(HOLDER_ON_N3)
    done = p.invoke(Invocation("start-partition", {"topology": "holder"}))
    assert done.type == "ok", done
    assert done.value["grudge"]["n3"] == ["n1", "n2"]
    assert done.value["grudge"]["n1"] == ["n3"]
    p.teardown()


@pytest.mark.parametrize("fault", [NodePause, NodeKill])
def test_pause_and_kill_of_the_holder_hit_its_node(fault: type) -> None:
    c = FakeCluster()
    n = fault(c, "holder")
    n.setup(HOLDER_ON_N3)
    done = n.invoke(Invocation(n.start_f, {"target": "holder"}))
    assert done.type == "ok" and done.value["nodes"] == ["n3"]
    assert (c.paused | c.killed) == {"n3"}
    n.teardown()


def test_no_holder_known_fails_with_the_reason_instead_of_hitting_another_node() -> None:
    c = FakeCluster()
    nobody = FakeView([], {})
    for nem, f in (
        (NodeKill(c), "start-kill"),
        (Partition(c), "start-partition"),  # type: ignore[arg-type]
        (ClockSkew(c), "start-clock"),
    ):  # type: ignore[arg-type]
        nem.setup(nobody)
        done = nem.invoke(Invocation(f, {"target": "holder", "topology": "holder"}))
        assert done.type == "fail" and "no current holder" in (done.error or ""), f
    assert not c.killed and not any(c.rules.values())
    redlock = FakeView([0], {})  # clients talk to every node: completions name none
    k = NodeKill(c)  # type: ignore[arg-type]
    k.setup(redlock)
    assert k.invoke(Invocation("start-kill", {"target": "holder"})).type == "fail"


def test_node_names_pick_exactly_those_nodes() -> None:
    rng = random.Random(1)
    assert pick_nodes("n2", ["n1", "n2", "n3"], rng) == ["n2"]
    assert pick_nodes("n1,n3", ["n1", "n2", "n3"], rng) == ["n1", "n3"]
    with pytest.raises(ValueError, match="unknown fault target 'n4'"):
        pick_nodes("n4", ["n1", "n2", "n3"], rng)
    g = grudge_for("n1,n3", ["n1", "n2", "n3", "n4", "n5"], rng)
    assert g["n1"] == g["n3"] == frozenset({"n2", "n4", "n5"})
    assert g["n2"] == frozenset({"n1", "n3"})


@pytest.mark.parametrize(
    ("nemesis", "target", "needle"),
    [
        (["partition"], "minority", "not a target of the partition fault"),
        (["partition"], "all", "not a target of the partition fault"),
        (["partition"], "bogus", "not a target of the partition fault"),
        (["kill"], "bogus", "not a target of the kill fault"),
        (["kill"], "halves", "not a target of the kill fault"),
        (["pause"], "n0", "not a target of the pause fault"),
        (["client-pause"], "leader", "not a target of the client-pause fault"),
        (["loss"], "one", "it takes no target"),
        (["pause", "partition"], "majority", "not a target of the partition fault"),
        (["kill"], "partition=leader", "not in --nemesis"),
        (["kill"], "flood=one", "'flood' is not a fault"),
    ],
)
def test_unknown_targets_are_refused_per_fault(
    nemesis: list[str], target: str, needle: str
) -> None:
    opts = RunOptions.of(nemesis=nemesis, nemesis_target=target, time_limit=60)
    with pytest.raises(OptionError, match=None) as e:
        check_nemesis_target(opts)
    assert needle in str(e.value) and "\n" not in str(e.value)


def test_holder_needs_a_workload_with_holders() -> None:
    opts = RunOptions.of(workload="cas-register", nemesis=["kill"], nemesis_target="holder")
    with pytest.raises(OptionError, match="the cas-register workload has no holder") as e:
        check_nemesis_target(opts)
    assert "registry" in str(e.value) and "watch" in str(e.value)
    for workload in ("registry", "watch", "election", "herd", "version-cas"):
        check_nemesis_target(opts.with_(workload=workload))


def test_one_target_per_fault_and_defaults_for_the_rest() -> None:
    opts = RunOptions.of(
        workload="election",
        nemesis=["client-pause", "partition", "kill"],
        nemesis_target="partition=bridge;kill=n1,n3",
        time_limit=60,
    )
    check_nemesis_target(opts)
    assert [target_of(f, opts) for f in opts.faults.nemesis] == ["holder", "bridge", "n1,n3"]
    everyone = RunOptions.of(nemesis=["partition", "kill"], nemesis_target="holder")
    check_nemesis_target(everyone)
    assert target_of("kill", everyone) == target_of("partition", everyone) == "holder"


def test_node_names_beyond_the_cluster_are_refused() -> None:
    with pytest.raises(OptionError, match="not a target"):
        check_nemesis_target(RunOptions.of(nemesis=["kill"], nemesis_target="n4", nodes=3))
    opts = RunOptions.of(nemesis=["kill"], nemesis_target="n1,n4", time_limit=60)
    check_nemesis_target(opts)  # the size is not known yet: checked against the cluster
    with pytest.raises(OptionError, match="n4, not node"):
        build_nemesis(opts, FakeCluster(), seed=1)  # type: ignore[arg-type]


def test_build_aims_each_fault_where_asked() -> None:
    opts = RunOptions.of(
        nemesis=["partition", "pause"], nemesis_target="partition=bridge;pause=n2", time_limit=60
    )
    _, schedule, _ = build_nemesis(opts, FakeCluster(), seed=1)  # type: ignore[arg-type]
    history = gen.simulate(schedule, threads=1, until_ns=gen.to_ns(60))
    values = {o.f: o.value for o in history if o.type == "invoke" and o.f.startswith("start-")}
    assert values["start-partition"] == {"topology": "bridge"}
    assert values["start-pause"] == {"target": "n2"}


def test_the_runner_knows_each_threads_node_across_replacements() -> None:
    record: list[Op] = []
    r = Runner(
        generator=gen.once({"f": "read"}),
        client_factory=None,  # type: ignore[arg-type]
        concurrency=2,
        clock=RunClock(),
        record=record.append,
        holder=LOCK_HOLDER,
    )
    r._thread_process = {0: 0, 1: 1}
    for thread, node in ((0, "n2"), (1, None)):
        invoke = Op(index=len(record), time=0, process=thread, type="invoke", f="acquire")
        r._open[thread] = _Open(invoke, None)
        r._complete(thread, Completion("ok", node=node))
    assert r.node_of(0) == "n2" and r.node_of(1) is None
    assert r.holders()[0] in (0, 1)
    r._thread_process[0] = 2  # process 0 timed out: process 2 replaces it on thread 0
    assert r.node_of(2) == "n2" and r.node_of(0) is None
