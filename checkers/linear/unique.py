"""A fast path for big partitions whose states are each produced once (unique writes).

Where every state a partition's operations produce is produced by one operation only
(and is not the initial one), each state's operations form a *cluster*: its producer,
then the operations that need that state (reads), then the one that leaves it for a
state of its own choosing (a compare-and-set a->b, the *link* to b's cluster). In any
linearization a cluster is contiguous: an operation of another cluster inside it would
need another state, and this one never comes back. Clusters joined by links form
*chains* (a blind write, or the initial state, then link after link), contiguous too: a
link needs the state it leaves, so it comes before anything that changes it. Hence the
partition is linearizable iff

1. every needed state is produced (or is the initial one), and no state is left by two
   links;
2. every produced state is on a chain (compare-and-sets that only lead into one another,
   a->b and b->a, start from no write and not from the initial state);
3. within each chain, no operation returns before an operation that the chain places
   before it is invoked (the producer, then the reads, then the link, cluster after
   cluster);
4. the graph of real-time precedence between chains is acyclic, the initial state's
   chain first (a topological order of the chains, each in its own order, is then a
   linearization: states flow as the chains say, and real time is respected within and
   between chains).

Real-time precedence (``a`` returned before ``b`` was invoked) is encoded in linear size
with a chain of checkpoints, one per return: ``a`` -> the checkpoint of its return ->
... -> the last checkpoint before ``b``'s invocation -> ``b``; a cycle is a strongly
connected component (networkx) holding two chains or more, and it is the counterexample.
Operations of unknown outcome that produce a state nobody needs are left out (they may
never have happened); one that produces a needed state took effect, and never returns.

What the model's hints must say for this to apply: every certain operation is a blind
producer of one state (a write), needs exactly one state and keeps it (a read), or needs
one state and produces another (a successful compare-and-set); uncertain ones may also
be reads (left out) or produce one state; one whose state someone needs took effect,
from the state the model's ``changes_from`` names (``checkers.linear.model.Sourced``).
Anything else (an append; an etcd failed compare-and-set, which needs "any state but
a") leaves the partition to the search.

Measured (``scripts/measure_graph_path.py``): one key, unique values, 100,000 ops: the
search 54 s (and out of 300 s on an invalid one), this path 2.5 s (0.26 s). The search
stays first below ``checkers.linear.solve.MIN_OPS`` operations, where it is as fast and
explains more. The graph takes about ``GRAPH_BYTES`` per node and edge (networkx's
dicts): it is accounted against the check's budget before it is built.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from checkers.linear.model import ANY, NOTHING, Call, Hint, Model
from checkers.linear.prepare import INF, Problem

if TYPE_CHECKING:
    import networkx as nx

    from core.formats.budget import Budget

GRAPH_BYTES: Final = 500
"""What a node or an edge of the graph of real-time precedence costs, its strongly
connected components found (measured: about 460 bytes)."""


class Verdict(NamedTuple):
    """The fast path's verdict on a partition, and the account of an invalid one (built
    on demand: ``explain()``)."""

    valid: bool
    explain: Callable[[], dict[str, Any]] | None


class _Partition:
    """The clusters and chains of one partition (see the module doc)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.producer: dict[Hashable, int] = {}
        self.reads: dict[Hashable, list[int]] = {}
        self.leaves: dict[Hashable, int] = {}  # state -> the link that leaves it
        self.needs: dict[int, Hashable] = {}  # link -> the state it leaves
        self.unsure: list[int] = []  # uncertain producers of one state


def verdict(problem: Problem, model: Model, meter: Budget | None = None) -> Verdict | None:
    """The verdict, or None when the fast path does not apply (see the module doc).
    OutOfBudget when its graph does not fit in what ``meter`` (the check's budget) has
    left."""
    hint_of: Callable[[Call], Hint] | None = getattr(model, "hint", None)
    if hint_of is None:
        return None
    part = _classify(problem, hint_of, getattr(model, "changes_from", None))
    if part is None:
        return None
    return _decide(part, model, meter)


def _classify(
    problem: Problem,
    hint_of: Callable[[Call], Hint],
    changes_from: Callable[[Call], Any] | None,
) -> _Partition | None:
    p = _Partition(problem)
    init = problem.init
    hints: dict[Call, Hint] = {}
    n_certain = problem.n_certain
    for i, call in enumerate(problem.calls):
        h = hints.get(call)
        if h is None:
            h = hints[call] = hint_of(call)
        readonly, requires, produces, blind = h
        certain = i < n_certain
        if readonly:
            if produces is not NOTHING:
                return None
            if requires is NOTHING:
                if certain:
                    return None  # legal in states its hint does not name
                continue  # a read of unknown result: constrains nothing
            if certain:
                p.reads.setdefault(requires, []).append(i)
            continue
        if produces is NOTHING or produces is ANY or produces == init or produces in p.producer:
            return None
        p.producer[produces] = i
        if blind and requires is NOTHING:
            continue
        if not blind and requires is NOTHING and not certain:
            p.unsure.append(i)
            continue
        if blind or requires is NOTHING or requires == produces:
            return None
        if requires in p.leaves:
            p.leaves[requires] = -1  # two links leave it: invalid (see _decide)
        else:
            p.leaves[requires] = i
        p.needs[i] = requires
    needed = set(p.reads) | set(p.leaves)
    produced_by = {i: s for s, i in p.producer.items()}
    unsure = {produced_by[i]: i for i in p.unsure}  # state -> its uncertain producer
    work = [s for s in needed if s in unsure]
    while work:  # an uncertain producer of a needed state took effect: from its source
        made = work.pop()
        i = unsure.pop(made)
        source = NOTHING if changes_from is None else changes_from(problem.calls[i])
        if source is NOTHING or source == made:
            return None  # we cannot place it
        if source in p.leaves:
            p.leaves[source] = -1
        else:
            p.leaves[source] = i
        p.needs[i] = source
        if source not in needed:
            needed.add(source)
            if source in unsure:
                work.append(source)
    for made in unsure:
        del p.producer[made]  # it may never have happened, and nobody needs it
    for s, i in list(p.producer.items()):
        if problem.ends[i] == INF and s not in needed:
            del p.producer[s]  # may never have happened, and nobody needs it
    return p


def _decide(p: _Partition, model: Model, meter: Budget | None) -> Verdict:
    problem = p.problem
    init = problem.init
    starts, ends = problem.starts, problem.ends
    text = _Words(problem, model)
    for s, rs in p.reads.items():
        if s != init and s not in p.producer:
            return _invalid(
                text,
                [rs[0]],
                f"{text.op(rs[0])}, returned "
                f"{text.returned(rs[0])}, needs state {text.state(s)}, which no "
                "operation that took effect produces",
            )
    for s, i in p.leaves.items():
        if i < 0:
            two = [j for j, need in p.needs.items() if need == s][:2]
            return _invalid(
                text,
                two,
                f"{text.op(two[0])} and {text.op(two[1])} both leave "
                f"state {text.state(s)}, which can only be left once",
            )
        if s != init and s not in p.producer:
            return _invalid(
                text,
                [i],
                f"{text.op(i)}, invoked {text.invoked(i)}, needs "
                f"state {text.state(s)}, which no operation that took effect "
                "produces",
            )
    # Chains, each as its groups in order: [producer], [reads], [link], [reads], ...
    made = {i: s for s, i in p.producer.items()}
    heads = [init] + [s for s, i in p.producer.items() if i not in p.needs]
    chain_of: dict[int, int] = {}
    groups: list[list[list[int]]] = []
    for c, head in enumerate(heads):
        chain: list[list[int]] = []
        state: Hashable = head
        while True:
            i = p.producer.get(state, -1) if state != init else -1
            if i >= 0:
                chain.append([i])
            rs = p.reads.get(state, [])
            if rs:
                chain.append(rs)
            nxt = p.leaves.get(state, -1)
            if nxt < 0:
                break
            state = made[nxt]
        for g in chain:
            for i in g:
                chain_of[i] = c
        groups.append(chain)
    # 2. States produced only by compare-and-sets that leave one another (a->b, b->a): no
    # write and not the initial state leads into that loop, so none of it can happen.
    stranded = sorted(i for s, i in p.producer.items() if i not in chain_of)
    if stranded:
        i = stranded[0]
        return _invalid(
            text,
            [i],
            f"{text.op(i)} needs state {text.state(p.needs[i])}, which "
            "only compare-and-sets that themselves need the states this one "
            "produces lead to: neither a write nor the initial state starts "
            "that loop",
        )
    for chain in groups:  # 3. order within each chain
        latest = -1  # the op invoked last among the earlier groups
        for g in chain:
            first_back = min(g, key=ends.__getitem__)
            if latest >= 0 and ends[first_back] < starts[latest]:
                return _invalid(
                    text,
                    [latest, first_back],
                    f"{text.op(first_back)} returned {text.returned(first_back)}, "
                    f"before {text.op(latest)} was invoked "
                    f"{text.invoked(latest)}; yet {text.op(latest)} must come "
                    "first: the state each needs or makes is written once, and "
                    "only the order of these writes and compare-and-sets leads "
                    "from one to the other",
                )
            last_in = max(g, key=starts.__getitem__)
            if latest < 0 or starts[last_in] > starts[latest]:
                latest = last_in
    if meter is not None:  # nodes: a checkpoint per op, a chain; edges: about three per op
        meter.afford(GRAPH_BYTES * (5 * len(chain_of) + 2 * len(groups)), DOING)
    cycle = _cycle(chain_of, starts, ends, len(groups))  # 4. between chains
    if cycle is None:
        return Verdict(True, None)
    steps = ", and ".join(
        f"{text.op(a)} returned {text.returned(a)}, before {text.op(b)} was invoked "
        f"{text.invoked(b)}"
        if a >= 0
        else f"{text.op(b)} comes after the initial state's ops"
        for a, b in cycle
    )
    ops = sorted({i for pair in cycle for i in pair if i >= 0}, key=starts.__getitem__)
    return _invalid(
        text,
        ops,
        "the runs of operations on each value cannot be put in any "
        f"order that real time allows: {steps}. Each value is written once, "
        "so its writer, readers and the compare-and-set that leaves it form one "
        "run in any linearization; these runs would have to precede each other",
    )


DOING: Final = "deciding a partition by its unique values"


def _cycle(
    chain_of: dict[int, int], starts: list[int], ends: list[int], n_chains: int
) -> list[tuple[int, int]] | None:
    """A cycle of real-time precedence between chains, as (op that returned first, op
    invoked after it) pairs (``-1, op``: the initial state's chain comes first), or None."""
    certain_ends = sorted(ends[i] for i in chain_of if ends[i] != INF)
    rank = {e: k for k, e in enumerate(certain_ends)}
    import networkx as nx  # here: importing it costs 0.16 s, and only big partitions need it

    g: nx.DiGraph = nx.DiGraph()
    g.add_edges_from((("t", k), ("t", k + 1)) for k in range(len(certain_ends) - 1))
    out_op: dict[tuple[int, int], int] = {}
    in_op: dict[tuple[int, int], int] = {}
    for i, c in chain_of.items():
        if ends[i] != INF:
            k = rank[ends[i]]
            g.add_edge(("c", c), ("t", k))
            out_op[(c, k)] = i
        k = bisect_left(certain_ends, starts[i]) - 1
        if k >= 0:
            g.add_edge(("t", k), ("c", c))
            in_op.setdefault((k, c), i)
    g.add_edges_from((("c", 0), ("c", c)) for c in range(1, n_chains))
    for scc in nx.strongly_connected_components(g):
        members = [node for node in scc if node[0] == "c"]
        if len(members) < 2:
            continue
        sub = g.subgraph(scc)
        a, b = members[0], members[1]
        loop = nx.shortest_path(sub, a, b)[:-1] + nx.shortest_path(sub, b, a)
        return _hops(loop, out_op, in_op, chain_of)
    return None


def _hops(
    loop: list[tuple[str, int]],
    out_op: dict[tuple[int, int], int],
    in_op: dict[tuple[int, int], int],
    chain_of: dict[int, int],
) -> list[tuple[int, int]]:
    """The cycle's chain-to-chain steps as op pairs."""
    pairs: list[tuple[int, int]] = []
    i = 0
    while i < len(loop) - 1:
        src = loop[i]
        j = i + 1
        if loop[j][0] == "c":  # the initial state's chain before every other
            first = min((op for op, c in chain_of.items() if c == loop[j][1]), default=-1)
            pairs.append((-1, first))
            i = j
            continue
        leave = out_op[(src[1], loop[j][1])]
        while loop[j + 1][0] == "t":
            j += 1
        enter = in_op[(loop[j][1], loop[j + 1][1])]
        pairs.append((leave, enter))
        i = j + 1
    return pairs


def _invalid(
    text: _Words,
    ops: list[int],
    sentence: str,
    method: str = "unique values: the runs of each value's operations, ordered",
) -> Verdict:
    """The invalid verdict ``ops`` show, ``sentence`` saying why, found by ``method``."""

    def explain() -> dict[str, Any]:
        from checkers.linear.counterexample import jsonable, op_dict  # only when invalid

        problem = text.problem
        shown = sorted(set(ops), key=problem.starts.__getitem__)
        entries = [problem.entry(i) for i in shown]
        return {
            "partition": jsonable(problem.label),
            "method": method,
            "op": op_dict(text.model, entries[0]),
            "window": {
                "start": min(e.invoke.time for e in entries),
                "end": max([e.completion.time for e in entries if e.completion] or [0]),
                "ops": [op_dict(text.model, e) for e in entries],
            },
            "sentences": [f"Not linearizable: {sentence}."],
            "time_unit": "event" if text.positional else "ns",
        }

    return Verdict(False, explain)


class _Words:
    """Operations, states and times of a partition in plain words."""

    def __init__(self, problem: Problem, model: Model) -> None:
        self.problem = problem
        self.model = model
        first = problem.invokes[0] if problem.invokes else None
        self.positional = first is None or first.time == first.index

    def op(self, i: int) -> str:
        inv = self.problem.invokes[i]
        describe = getattr(self.model, "describe_call", None)
        call = self.problem.calls[i]
        return f"process {inv.process}'s {describe(call) if describe else repr(call)}"

    def state(self, s: Any) -> str:
        describe = getattr(self.model, "describe_state", None)
        return describe(s) if describe else repr(s)

    def invoked(self, i: int) -> str:
        return self._at(self.problem.invokes[i].time)

    def returned(self, i: int) -> str:
        done = self.problem.completions[i]
        return "never" if done is None else self._at(done.time)

    def _at(self, t: int) -> str:
        return f"at event {t}" if self.positional else f"at t={t / 1e9:.3f} s"
