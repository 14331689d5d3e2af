"""Partition topologies are pure: checked here without any cluster."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nemesis.topology import (
    TOPOLOGIES,
    bisect,
    bridge,
    grudge_for,
    is_symmetric,
    isolate,
    majorities_ring,
)

N5 = ["n1", "n2", "n3", "n4", "n5"]


def sees(grudge: dict[str, frozenset[str]], node: str) -> set[str]:
    return {m for m in grudge if m not in grudge[node]}


def test_isolate_cuts_one_node_from_all_others() -> None:
    g = isolate(N5, "n3")
    assert g["n3"] == frozenset({"n1", "n2", "n4", "n5"})
    assert g["n1"] == frozenset({"n3"})


def test_bisect_puts_a_minority_against_a_majority() -> None:
    g = bisect(N5)
    assert sees(g, "n1") == {"n1", "n2"}
    assert sees(g, "n5") == {"n3", "n4", "n5"}


def test_majorities_ring_gives_each_node_a_distinct_majority() -> None:
    g = majorities_ring(N5)
    views = [frozenset(sees(g, n)) for n in N5]
    assert all(len(v) >= 3 for v in views)
    assert len(set(views)) == 5
    with pytest.raises(ValueError, match="at least 4"):
        majorities_ring(N5[:3])


def test_bridge_node_sees_everyone_and_halves_do_not_see_each_other() -> None:
    g = bridge(N5)
    assert g["n3"] == frozenset()
    assert sees(g, "n1") == {"n1", "n2", "n3"}
    assert "n4" in g["n1"] and "n1" in g["n4"]


def test_leader_topology_isolates_the_leader() -> None:
    assert grudge_for("leader", N5, random.Random(0), leader="n4")["n4"] == frozenset(
        {"n1", "n2", "n3", "n5"}
    )


@given(st.integers(min_value=4, max_value=9), st.sampled_from(TOPOLOGIES), st.integers())
def test_every_topology_is_symmetric_and_leaves_a_majority_somewhere(
    n: int, topology: str, seed: int
) -> None:
    nodes = [f"n{i}" for i in range(n)]
    g = grudge_for(topology, nodes, random.Random(seed), leader=nodes[0], holder=nodes[1])
    assert set(g) == set(nodes)
    assert is_symmetric(g)
    assert all(node not in peers for node, peers in g.items())
    biggest = max(len(sees(g, x)) for x in nodes)
    # Halves of an even cluster are equal: no side has a majority (as in Jepsen's bisect).
    assert biggest > n // 2 or (topology.endswith("halves") and biggest == n // 2)
