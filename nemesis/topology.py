"""Partition topologies: pure functions from nodes to a *grudge*.

A grudge maps each node to the set of nodes it drops traffic from (Jepsen's term). It is
data: the partition nemesis turns it into firewall rules, tests check it without any
cluster. Every grudge here is symmetric (if a drops b, b drops a) unless said otherwise.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Final

Grudge = dict[str, frozenset[str]]


def complete(components: Sequence[Sequence[str]]) -> Grudge:
    """Cut every link between different components; links inside one stay up."""
    grudge: Grudge = {}
    all_nodes = [n for c in components for n in c]
    for comp in components:
        inside = set(comp)
        for n in comp:
            grudge[n] = frozenset(m for m in all_nodes if m not in inside)
    return grudge


def isolate(nodes: Sequence[str], node: str) -> Grudge:
    """One node alone; the rest together."""
    if node not in nodes:
        raise ValueError(f"{node!r} is not one of the nodes {list(nodes)}")
    return complete([[node], [n for n in nodes if n != node]])


def bisect(nodes: Sequence[str]) -> Grudge:
    """A minority (the first floor(n/2) nodes) against the majority."""
    k = len(nodes) // 2
    return complete([list(nodes[:k]), list(nodes[k:])])


def random_halves(nodes: Sequence[str], rng: random.Random) -> Grudge:
    """Shuffled, then bisected: a random minority against a random majority."""
    shuffled = list(nodes)
    rng.shuffle(shuffled)
    return bisect(shuffled)


def majorities_ring(nodes: Sequence[str]) -> Grudge:
    """Each node sees a majority, but no two nodes see the same one (n >= 4).

    Nodes sit on a ring and each keeps the links to its nearest neighbours on both sides,
    as few as still make a majority with itself; it drops the rest. Ring distance is
    symmetric, so the grudge is. With an even majority size the node keeps one neighbour
    more on each side (a symmetric grudge cannot keep just one), so it sees a little more
    than a bare majority. Three nodes cannot form such a ring symmetrically.
    """
    n = len(nodes)
    if n < 4:
        raise ValueError("a majorities ring needs at least 4 nodes (use --nodes 5)")
    majority = n // 2 + 1
    reach = -(-(majority - 1) // 2)  # neighbours kept on each side, rounded up
    grudge: Grudge = {}
    for i, node in enumerate(nodes):
        keep = {node}
        for d in range(1, reach + 1):
            keep.add(nodes[(i + d) % n])
            keep.add(nodes[(i - d) % n])
        grudge[node] = frozenset(m for m in nodes if m not in keep)
    return grudge


def bridge(nodes: Sequence[str]) -> Grudge:
    """Two halves that cannot see each other, and one node in the middle that sees both
    (n >= 3): the bridge node is in both majorities."""
    n = len(nodes)
    if n < 3:
        raise ValueError("a bridge needs at least 3 nodes")
    mid = n // 2
    left, bridge_node, right = list(nodes[:mid]), nodes[mid], list(nodes[mid + 1 :])
    grudge: Grudge = {bridge_node: frozenset()}
    for a in left:
        grudge[a] = frozenset(right)
    for b in right:
        grudge[b] = frozenset(left)
    return grudge


def links_cut(grudge: Grudge) -> set[tuple[str, str]]:
    """The directed links dropped: (receiver, sender) pairs."""
    return {(node, peer) for node, peers in grudge.items() for peer in peers}


def is_symmetric(grudge: Grudge) -> bool:
    cut = links_cut(grudge)
    return all((b, a) in cut for a, b in cut)


TOPOLOGIES: Final[tuple[str, ...]] = (
    "one",
    "leader",
    "holder",
    "halves",
    "random-halves",
    "majorities-ring",
    "bridge",
)


NO_HOLDER: Final = (
    "no current holder (lock holder, leader, registered instance or writer) whose node "
    "is known: the fault was not applied"
)
"""Why a fault aimed at the holder was not applied (``nemesis.nodes`` says it too)."""


def _isolate_holder(nodes: Sequence[str], holder: str | None) -> Grudge:
    if holder is None:
        raise ValueError(NO_HOLDER)
    return isolate(nodes, holder)


def grudge_for(
    topology: str,
    nodes: Sequence[str],
    rng: random.Random,
    leader: str | None = None,
    holder: str | None = None,
) -> Grudge:
    """The grudge of a named topology; ``one`` isolates a random node, ``leader`` the
    leader (a random node when the target has none or it is unknown), ``holder`` the node
    the current lock holder talks to (ValueError when unknown); node names (``n1,n3``)
    are cut off together from the rest."""
    named = [x.strip() for x in topology.split(",") if x.strip()]
    if topology not in TOPOLOGIES and named and all(n in nodes for n in named):
        return complete([named, [n for n in nodes if n not in named]])
    makers: dict[str, Callable[[], Grudge]] = {
        "holder": lambda: _isolate_holder(nodes, holder),
        "one": lambda: isolate(nodes, rng.choice(list(nodes))),
        "leader": lambda: isolate(
            nodes, leader if leader is not None and leader in nodes else rng.choice(list(nodes))
        ),
        "halves": lambda: bisect(nodes),
        "random-halves": lambda: random_halves(nodes, rng),
        "majorities-ring": lambda: majorities_ring(nodes),
        "bridge": lambda: bridge(nodes),
    }
    if topology not in makers:
        raise ValueError(
            f"unknown partition topology {topology!r}: choose from "
            f"{', '.join(TOPOLOGIES)} or node names ({', '.join(nodes)})"
        )
    return makers[topology]()
