"""scripts/sim_sweep.py: its plan covers every fault's workloads and every sim bug."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from clusters.sim.service import BUGS

ROOT = Path(__file__).resolve().parents[2]


def sweep() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sim_sweep", ROOT / "scripts" / "sim_sweep.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["sim_sweep"] = module
    spec.loader.exec_module(module)
    return module


def test_every_sim_bug_has_a_scenario_that_must_be_invalid() -> None:
    s = sweep()
    assert set(s.BUGS) == set(BUGS)  # a new bug needs its scenario here
    runs = s.plan([], 0, list(BUGS), 2)
    assert len(runs) == 2 * len(BUGS) and all(r.expect == "invalid" for r in runs)
    assert all(r.args[r.args.index("--sim-bug") + 1] in BUGS for r in runs)


def test_fault_runs_cycle_the_workloads_with_distinct_seeds() -> None:
    s = sweep()
    runs = s.plan(["kill", "client-pause"], 6, [], 0)
    assert [r.group for r in runs] == ["kill"] * 6 + ["client-pause"] * 6
    kill = [r.args[r.args.index("--workload") + 1] for r in runs[:6]]
    assert kill == ["lock", "cas-register", "election"] * 2
    seeds = [r.args[r.args.index("--seed") + 1] for r in runs[:6]]
    assert seeds == ["1", "2", "3", "4", "5", "6"] and all(r.expect == "valid" for r in runs)
