"""The watch workload: its generator's roles, its refusals, and one run on the sim."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from clusters.target_registry import TARGETS
from core import gen
from core.option_checks import OptionError
from core.options import RunOptions
from harness.validate import check_options, check_run
from workloads.watch.gen import WatchGen


def test_watchers_only_collect_and_writers_write_unique_values() -> None:
    g = gen.clients(gen.time_limit(3, WatchGen(keys=2, watchers=2, compact_every=1, seed=3)))
    ops = [o for o in gen.simulate(gen.seeded(1, g), 5, latency=10_000_000) if o.is_invoke]
    by_thread = {o.process % 5 for o in ops if o.f == "collect"}
    assert by_thread == {0, 1}
    writes = [o for o in ops if o.f == "write"]
    assert writes and {o.process % 5 for o in writes} <= {2, 3, 4}
    assert len({o.value for o in writes}) == len(writes)
    assert {o.key for o in writes} == {0, 1}
    assert len([o for o in ops if o.f == "compact"]) == 2  # at 1 s and 2 s


def test_the_recovery_generator_writes_nothing() -> None:
    g = gen.clients(gen.time_limit(2, WatchGen(keys=2, watchers=1, writes=False)))
    ops = [o for o in gen.simulate(gen.seeded(1, g), 3, latency=10_000_000) if o.is_invoke]
    assert ops and {o.f for o in ops} == {"collect"}


def test_a_writer_is_needed_besides_the_watchers() -> None:
    with pytest.raises(OptionError, match="--watchers 3 leaves no writer"):
        check_options(RunOptions.of(workload="watch", concurrency=3, watchers=3))


def test_redis_refuses_the_workload_with_the_reason() -> None:
    for name in ("redis", "redlock"):
        assert TARGETS[name].offers["watch"].why_not
        with pytest.raises(OptionError, match="fire-and-forget pub/sub"):
            check_run(RunOptions.of(target=name, workload="watch", concurrency=4))


@pytest.mark.slow
def test_a_sim_run_delivers_every_change_and_handles_compactions(tmp_path: Path) -> None:
    args = ["--target", "sim", "--workload", "watch", "--concurrency", "4", "--watchers", "2"]
    args += ["--time-limit", "8", "--recovery-time", "2", "--compact-every", "0.5"]
    r = subprocess.run(
        [sys.executable, "-m", "harness.cli", "run", *args, "-o", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    results = json.loads((tmp_path / "latest" / "results.json").read_text())
    delivery = results["checkers"]["watch-delivery"]
    assert delivery["valid"] is True
    assert all(w["missed"] == 0 and w["settled"] for w in delivery["watchers"])
    assert sum(w["delivered"] for w in delivery["watchers"]) > 0
