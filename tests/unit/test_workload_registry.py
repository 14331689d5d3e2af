"""workloads.workload_registry: one Workload value per workload, read by the CLI, the options'
defaults, the plan and the checks; a made-up workload runs end to end on the sim target
with no edit elsewhere but the sim target's clients."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from test_cli import run
from test_cli_options import assert_one_line_254

from checkers import linearizability, stats
from checkers.linear.models import MODELS
from checkers.record import RunRecord
from checkers.result import CheckResult
from clusters.sim.spec import SPEC as SIM
from clusters.target_registry import TARGETS
from core.errors import HarnessError
from core.gen import simulate
from core.history import History
from core.ops import Op
from core.options import FIELDS, RunOptions
from harness.commands.run import add_run_options, options_from
from harness.orchestrate import run_test
from harness.suite import SuiteError, load_suite
from harness.terminal import Terminal
from harness.validate import check_run
from nemesis.fault_registry import nemesis_names
from workloads import workload_registry
from workloads.common.lock_options import LockOptions
from workloads.register.gen import CasRegisterGen
from workloads.workload import When, Workload


@pytest.mark.parametrize("name", list(workload_registry.WORKLOADS))
def test_every_workload_has_a_generator_checkers_and_a_help_line(name: str) -> None:
    w = workload_registry.WORKLOADS[name]
    assert w.name == name
    assert w.help and "\n" not in w.help and len(w.help) <= 100
    assert w.default_fault in nemesis_names()
    assert w.checkers and all(callable(c) or isinstance(c, When) for c in w.checkers)
    ops = simulate(w.client_generator(RunOptions.of(workload=name), 1), 2, max_ops=6, nemesis=False)
    assert len([op for op in ops if op.type == "invoke"]) == 6
    assert name in SIM.workload_names  # the built-in target runs every workload
    assert set(w.options) <= set(FIELDS), "options it reports"
    assert w.model is None or w.model in MODELS


def test_a_history_named_by_its_workload_gets_the_workloads_model() -> None:
    models = workload_registry.workload_models()
    assert models == {"lock": "mutex", "cas-register": "register", "register": "register"}
    assert set(workload_registry.OLD_NAMES.values()) <= set(workload_registry.WORKLOADS)


def test_harness_check_of_a_history_file_takes_its_workloads_model(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ops = [Op(0, 10, 0, "invoke", "acquire", key="l"), Op(1, 20, 0, "ok", "acquire", key="l")]
    (tmp_path / "h.jsonl").write_text("".join(op.to_json() + "\n" for op in ops))
    (tmp_path / "test.json").write_text(json.dumps({"workload": "lock"}))
    code, out, _ = run(capsys, "check", "--json", str(tmp_path / "h.jsonl"))
    assert code == 0 and json.loads(out.splitlines()[0])["model"] == "mutex"


def test_every_target_offers_registered_workloads_only() -> None:
    for name, spec in TARGETS.items():
        assert set(spec.workload_names) <= set(workload_registry.WORKLOADS), name


@pytest.mark.parametrize("name", list(workload_registry.WORKLOADS))
def test_every_checker_of_a_workload_reads_a_run_record(name: str) -> None:
    test = {"options": {"workload": name}, "linearizable_locks": True}
    record = RunRecord(History([]), test=test)
    results = [check(record) for check in workload_registry.WORKLOADS[name].checks(record)]
    assert results and all(isinstance(r, CheckResult) and r.checker for r in results)


def test_checker_applies_only_where_its_fact_was_recorded() -> None:
    lock = workload_registry.WORKLOADS["lock"]
    on = RunRecord(History([]), test={"linearizable_locks": True})
    off = RunRecord(History([]), test={})
    assert len(lock.checks(on)) == len(lock.checks(off)) + 1


def test_an_unknown_workload_is_one_line_listing_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    names = ", ".join(workload_registry.WORKLOADS)
    assert_one_line_254(
        *run(capsys, "run", "--workload", "nope"),
        "invalid choice: 'nope' (choose from "
        + ", ".join(repr(n) for n in workload_registry.WORKLOADS)
        + ")",
    )
    suite = tmp_path / "s.toml"
    suite.write_text('[[run]]\nname = "r"\nworkload = "nope"\n')
    with pytest.raises(SuiteError) as e:
        load_suite(suite)
    assert "\n" not in str(e.value)
    assert f"unknown workload 'nope' for --workload: choose from {names}" in str(e.value)
    with pytest.raises(HarnessError, match=f"choose from {names}"):
        workload_registry.get_workload("nope")


def test_the_workload_help_lists_the_registry(capsys: pytest.CaptureFixture[str]) -> None:
    """``run --help`` names the workloads; ``harness docs options`` says what each does."""
    code, out, _ = run(capsys, "run", "--help")
    printed = " ".join(out.split())
    assert code == 0 and "one of: " + ", ".join(workload_registry.WORKLOADS) + ")" in printed
    code, out, _ = run(capsys, "docs", "options")
    printed = "".join(out.split())  # as wrapped, white space aside
    for w in workload_registry.WORKLOADS.values():
        assert "".join(f"{w.name}: {w.help}".split()) in printed
        assert f"{w.default_fault}for{w.name}" in printed  # --nemesis's default


def _cli(*argv: str) -> RunOptions:
    p = argparse.ArgumentParser()
    add_run_options(p)
    return options_from(p.parse_args(list(argv)))


def _suite(tmp_path: Path, table: str) -> RunOptions:
    path = tmp_path / "s.toml"
    path.write_text(f'[suite]\nname = "s"\n[[run]]\nname = "r"\n{table}\n')
    return load_suite(path).runs[0].options


def _same(a: RunOptions, b: RunOptions) -> dict[str, Any]:
    """The fields where two runs' options differ (the name and folder aside)."""
    da, db = replace(a, name=None).to_dict(), replace(b, name=None).to_dict()
    return {k: (da[k], db[k]) for k in da if da[k] != db[k] and k != "out_dir"}


@pytest.mark.parametrize("name", list(workload_registry.WORKLOADS))
def test_a_suite_and_the_command_line_give_a_workload_the_same_run(
    tmp_path: Path, name: str
) -> None:
    """Issue 17 said a suite's cas-register run got client-pause where the command line
    gave none: the same options, through either, give the same run (and fault)."""
    cli = _cli("--workload", name, "--time-limit", "30")
    suite = _suite(tmp_path, f'workload = "{name}"\ntime_limit = 30')
    assert _same(cli, suite) == {}
    assert cli.faults.nemesis == (workload_registry.WORKLOADS[name].default_fault,)


MADE_UP = Workload(
    name="one-register",
    help="read, write and compare-and-set on one register",
    generator=lambda opts, seed: CasRegisterGen(keys=1, seed=seed),
    needs_resource=False,
    holds=True,  # so that its defaults differ from cas-register's
    default_fault="pause",
    checkers=(linearizability.check_record, stats.check_record),
    records=(LockOptions,),
)


@pytest.fixture
def made_up(monkeypatch: pytest.MonkeyPatch) -> Workload:
    """MADE_UP registered, and the sim target's client backend for it (the one edit a new
    workload needs outside its module and its registry line)."""
    monkeypatch.setitem(workload_registry.WORKLOADS, MADE_UP.name, MADE_UP)
    monkeypatch.setitem(SIM.offers, MADE_UP.name, SIM.offers["cas-register"])  # type: ignore[index]
    return MADE_UP


def test_a_made_up_workloads_defaults_come_from_its_registry_entry(
    made_up: Workload, tmp_path: Path
) -> None:
    cli = _cli("--workload", made_up.name, "--time-limit", "30")
    suite = _suite(tmp_path, f'workload = "{made_up.name}"\ntime_limit = 30')
    assert cli.faults.nemesis == suite.faults.nemesis == ("pause",)
    assert _same(cli, suite) == {}
    assert "acquire wait" in cli.op_timeout_reason  # a holding workload's op timeout


@pytest.mark.slow
def test_a_made_up_workload_runs_end_to_end_on_sim(made_up: Workload, tmp_path: Path) -> None:
    seen: list[str] = []

    def counted(record: RunRecord) -> CheckResult:
        seen.append(record.options["workload"])
        return CheckResult("counted", True, f"{len(record.history)} ops", {})

    workload_registry.WORKLOADS[made_up.name] = replace(
        made_up, checkers=(*made_up.checkers, counted)
    )
    opts = _cli(
        "--workload",
        made_up.name,
        "--nemesis",
        "none",
        "--time-limit",
        "6",  # the workers' start (spawned, each importing its client) counts
        "--recovery-time",
        "1",
        "--seed",
        "3",
        "-o",
        str(tmp_path),
    )
    outcome = run_test(check_run(opts), Terminal.silent())
    results = json.loads((outcome.run_dir / "results.json").read_text())
    assert outcome.exit_code == 0, json.dumps(results["checkers"], indent=1)[:3000]
    assert list(results["checkers"]) == ["linearizability", "stats", "counted", "faults"]
    assert seen == [made_up.name]
    assert not (outcome.run_dir / "resource.jsonl").exists()  # it needs no resource
