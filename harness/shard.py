"""A suite cut into N balanced shards, for engines that run many machines at once.

A GitHub Actions matrix or a Kubernetes Indexed Job runs shard I of N on each of its
machines (``harness suite run NAME --shard I/N``); ``harness merge`` puts their results
back together. Every machine computes the split on its own, so the split depends on
nothing but the suite's runs, N and the durations handed in: the same inputs give the
same shards everywhere.

The unit of a split is a suite entry: an entry that repeats its run (``repeat``) stays
whole, on one shard, and weighs its repeats. Each entry weighs its expected duration: the
seconds an earlier result recorded for it (a ``suite.json`` given with ``--durations``,
the same file to every shard), else an estimate from its options (time limit, recovery
time and a start-up allowance). Entries go heaviest first to the lightest shard (longest
processing time first; ties to the earlier entry and the lower shard), and each shard
runs its entries in the suite's order.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

from core.errors import HarnessError
from core.options import RunOptions

START_S: Final = 10.0
"""Seconds an estimate adds to a run's time limit and recovery time: starting its
cluster, healing, checking and writing its report."""


class SuiteRun(Protocol):
    """What a split reads of a suite's entry (``harness.suite.SuiteRun``; an entry may
    also say how many times it runs, ``repeat``)."""

    @property
    def name(self) -> str: ...
    @property
    def options(self) -> RunOptions: ...


R = TypeVar("R", bound=SuiteRun)


class ShardError(HarnessError):
    """A split that cannot be made: more shards than entries, or a durations file that
    cannot be read. The message names the fix."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``of`` (1-based): the entries it runs, in suite order."""

    index: int
    of: int
    runs: tuple[str, ...]
    expected_s: float

    @property
    def label(self) -> str:
        """``I/N``, as ``--shard`` takes it."""
        return f"{self.index}/{self.of}"


def parse_shard(text: str) -> tuple[int, int]:
    """``I/N`` as (I, N), 1 <= I <= N; ``argparse.ArgumentTypeError`` (one line) else."""
    index, slash, count = text.partition("/")
    if not (slash and index.isdecimal() and count.isdecimal()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not I/N: give shard I of N, e.g. --shard 1/4"
        )
    i, n = int(index), int(count)
    if n < 1 or not 1 <= i <= n:
        raise argparse.ArgumentTypeError(
            f"{text}: I must be from 1 to N (N at least 1), e.g. --shard 1/{max(n, 1)}"
        )
    return i, n


def repeats(run: SuiteRun) -> int:
    """How many times an entry runs (``repeat``, where the suite has it; else once)."""
    count = getattr(run, "repeat", 1)
    return count if isinstance(count, int) and count > 0 else 1


def estimate_s(run: SuiteRun) -> float:
    """An entry's expected seconds from its options alone."""
    opts = run.options
    return repeats(run) * (opts.time_limit + opts.recovery_time + START_S)


def recorded_durations(path: Path) -> dict[str, float]:
    """Seconds per entry an earlier result recorded (its ``suite.json``: every outcome's
    ``seconds``, an entry's repeats added up)."""
    from core.store import read_json

    try:
        data = read_json(path)
        outcomes = data["outcomes"]
        seconds: dict[str, float] = {}
        for o in outcomes:
            name, s = o["name"], o["seconds"]
            if isinstance(s, int | float) and s >= 0:
                seconds[str(name)] = seconds.get(str(name), 0.0) + float(s)
    except HarnessError as e:
        raise ShardError(f"--durations: {e}") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ShardError(
            f"--durations {path}: not a suite result's suite.json ({type(e).__name__}: {e}); "
            "give the suite.json of an earlier run of the suite"
        ) from None
    return seconds


def expected_s(run: SuiteRun, recorded: Mapping[str, float]) -> float:
    """An entry's weight: its recorded seconds when an earlier result has them."""
    seen = recorded.get(run.name)
    return seen if seen is not None and seen > 0 else estimate_s(run)


def split(runs: Sequence[SuiteRun], n: int, recorded: Mapping[str, float]) -> list[Shard]:
    """``runs`` cut into ``n`` shards of about equal expected time (see the module)."""
    if n > len(runs):
        raise ShardError(
            f"{n} shards for {len(runs)} suite entries would leave a shard with nothing to "
            f"run: use at most {len(runs)} shards"
        )
    weights = [expected_s(r, recorded) for r in runs]
    loads = [0.0] * n
    members: list[list[int]] = [[] for _ in range(n)]
    for pos in sorted(range(len(runs)), key=lambda p: (-weights[p], p)):
        lightest = min(range(n), key=lambda s: (loads[s], s))
        loads[lightest] += weights[pos]
        members[lightest].append(pos)
    return [
        Shard(s + 1, n, tuple(runs[p].name for p in sorted(members[s])), round(loads[s], 1))
        for s in range(n)
    ]


def plan_answer(suite: str, digest: str, shards: Sequence[Shard]) -> dict[str, Any]:
    """The split as ``suite plan --format json`` prints it: the GitHub matrix, the
    Indexed Job's completions and indexes (``JOB_COMPLETION_INDEX`` I-1 runs shard I),
    and each shard's entries."""
    return {
        "suite": suite,
        "digest": digest,
        "shards": len(shards),
        "matrix": github_matrix(shards),
        "completions": len(shards),
        "indexes": [s.index - 1 for s in shards],
        "plan": [
            {"shard": s.label, "index": s.index, "runs": list(s.runs), "expected_s": s.expected_s}
            for s in shards
        ],
    }


def github_matrix(shards: Sequence[Shard]) -> dict[str, Any]:
    """The value of a workflow's ``strategy.matrix``: one job per shard, ``matrix.shard``
    for ``--shard`` and ``matrix.index`` for names (an artifact's may not hold a slash)."""
    return {
        "include": [
            {"shard": s.label, "index": s.index, "runs": len(s.runs), "expected_s": s.expected_s}
            for s in shards
        ]
    }


def sharded(
    runs: Sequence[R], shard: tuple[int, int], durations: Path | None
) -> tuple[list[R], dict[str, Any]]:
    """The entries of shard ``shard`` (I, N) of ``runs``, and what its result records of
    the split (``harness merge`` checks that the shards fit together)."""
    index, count = shard
    recorded = recorded_durations(durations) if durations is not None else {}
    mine = split(runs, count, recorded)[index - 1]
    chosen = [r for r in runs if r.name in mine.runs]
    return chosen, {"index": index, "of": count, "runs": list(mine.runs)}
