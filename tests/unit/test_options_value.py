"""Run options are a value: frozen, changed only into new options, recorded in test.json
as before (the same keys, lists as JSON lists), and built by the command line and a
suite's table through the same mapping."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.option_checks import OptionError
from core.options import FIELDS, RunOptions
from harness.validate import check_run, decide
from workloads.common.lock_options import LockOptions
from workloads.register import RegisterOptions


def test_options_are_frozen_and_deciding_gives_new_options() -> None:
    asked = RunOptions.of()
    with pytest.raises(dataclasses.FrozenInstanceError):
        asked.seed = 3  # type: ignore[misc]
    decided = decide(asked)
    assert asked.faults.nemesis == () and decided.faults.nemesis != ()
    assert asked.op_timeout_reason == "" and decided.op_timeout_reason
    checked, target = check_run(RunOptions.of(target=""))
    assert checked.target == target.name and checked.target


def test_test_json_keeps_its_keys_and_json_types() -> None:
    opts = RunOptions.of(nemesis=["kill"], sim_bugs=["b"], ssh_hosts=["h1"])
    assert opts.faults.nemesis == ("kill",) and opts.ssh.hosts == ("h1",)
    recorded = json.loads(json.dumps(opts.to_dict()))
    assert recorded["nemesis"] == ["kill"] and recorded["sim_bugs"] == ["b"]
    assert recorded["ssh_hosts"] == ["h1"] and not recorded["accept_unavailable"]
    assert list(recorded) == list(FIELDS)


def _run_dests() -> set[str]:
    import argparse

    from harness.cli import build_parser

    parser = build_parser("run")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {a.dest for a in sub.choices["run"]._actions if a.option_strings} - {"help"}


def test_every_option_is_a_flag_of_run_under_its_own_name() -> None:
    """The command line builds the options from its argparse dests: a new option without a
    flag, or a flag whose dest is not an option, is caught here (the few the command line
    translates itself are listed)."""
    from core.options import DERIVED, FIELDS

    translated = {"ssh_hosts"}  # from --nodes/--nodes-file
    cli_only = {"nodes_file", "replay", "json"}  # replay: a run to run again; json: output
    cli_only |= {"repeat", "pass_rule", "repeat_seed"}  # how many runs of the options
    dests = _run_dests()
    assert set(FIELDS) - set(DERIVED) - translated <= dests
    assert dests - cli_only <= set(FIELDS)


def test_the_default_workload_is_the_registry_s_first() -> None:
    from workloads.workload_registry import DEFAULT_WORKLOAD, WORKLOADS

    assert next(iter(WORKLOADS)) == DEFAULT_WORKLOAD
    assert RunOptions.of().workload == ""
    assert decide(RunOptions.of()).workload == DEFAULT_WORKLOAD
    assert decide(RunOptions.of()).faults.nemesis == (WORKLOADS[DEFAULT_WORKLOAD].default_fault,)


def test_a_fault_at_its_own_time_must_end_inside_the_run() -> None:
    """A fault with a time of its own (``FaultSpec.timing``) is not in the periodic
    schedule and is refused when it would end after the time limit."""
    from core.option_checks import OptionError
    from harness.validate import check_options
    from nemesis.fault_registry import FAULTS, rules_of

    own = 0
    for name, spec in FAULTS.items():
        opts = RunOptions.of(nemesis=[name], time_limit=60)
        timing = spec.timing(opts)
        assert (name in rules_of(opts).periodic) == (timing is None), name
        if timing is None:
            continue
        own += 1
        at, lasts = timing
        given = {o: opts.get(o) for o in spec.options}  # its time as the user wrote it
        short = RunOptions.of(nemesis=[name], time_limit=at + lasts - 1, **given)
        with pytest.raises(OptionError, match="does not end inside --time-limit"):
            check_options(short)
    assert own, "no fault keeps a time of its own: this test tests nothing"


def test_a_fault_freezing_a_holder_lengthens_the_followed_op_timeout() -> None:
    from core.options import OP_TIMEOUT_MARGIN
    from nemesis.fault_registry import FAULTS
    from workloads.workload_registry import WORKLOADS

    holds = next(w.name for w in WORKLOADS.values() if w.holds)
    holding = RunOptions.of(workload=holds, work_time=1.0, acquire_wait=0.5, time_limit=600)
    for name, spec in FAULTS.items():
        frozen = spec.freezes(holding.with_(nemesis=(name,)))
        decided = decide(holding.with_(nemesis=(name,)))
        extra = 0.0 if frozen is None else frozen[0]
        assert decided.op_timeout == max(10.0, 1.0 + extra + OP_TIMEOUT_MARGIN), name
        if frozen is not None:
            assert decided.op_timeout_reason.startswith(f"not given: {frozen[1]} + "), name


def test_options_are_typed_records_read_by_one_flat_name_each() -> None:
    """Every option has one flat name (suite key, argparse dest, test.json key) and one
    place in a typed record; building from the flat table and reading back agree."""
    flat = RunOptions().to_dict()
    assert RunOptions.of(**flat) == RunOptions()
    opts = RunOptions.of(lock="recipe", lease_ttl=4, keepalive=1, keys=7, ssh=True)
    assert (
        opts.record(LockOptions).impl,
        opts.record(LockOptions).lease_ttl,
        opts.record(RegisterOptions).keys,
    ) == (
        "recipe",
        4,
        7,
    )
    assert opts.ssh.enabled and opts.get("lock") == "recipe" and opts.get("keys") == 7
    assert opts.with_(keys=9).record(RegisterOptions) == RegisterOptions(keys=9)
    with pytest.raises(TypeError, match="no option 'lease'"):
        RunOptions.of(lease=3)


def test_pause_at_0_means_the_periodic_schedule_in_suites_as_on_the_command_line() -> None:
    assert RunOptions.from_mapping({"pause_at": 0}).faults.pause_at is None
    assert RunOptions.from_mapping({"pause_at": 5}).faults.pause_at == 5


def test_an_older_extra_table_is_read_as_the_options_it_holds() -> None:
    opts = RunOptions.from_mapping({"extra": {"clock_delta": 30, "accept_unavailable": True}})
    assert opts.faults.clock_delta == 30 and opts.accept_unavailable
    with pytest.raises(OptionError, match="unknown option 'bogus' in extra"):
        RunOptions.from_mapping({"extra": {"bogus": 1}})
