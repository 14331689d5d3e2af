"""Run options are a value: frozen, changed only into new options, recorded in test.json
as before (the same keys, lists as JSON lists), and built by the command line and a
suite's table through the same mapping."""

from __future__ import annotations

import dataclasses
import json

import pytest

from core.options import RunOptions
from harness.validate import check_run, decide


def test_options_are_frozen_and_deciding_gives_new_options() -> None:
    asked = RunOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        asked.seed = 3  # type: ignore[misc]
    decided = decide(asked)
    assert asked.nemesis == () and decided.nemesis != ()
    assert asked.op_timeout_reason == "" and decided.op_timeout_reason
    checked, target = check_run(RunOptions(target=""))
    assert checked.target == target.name and checked.target


def test_test_json_keeps_its_keys_and_json_types() -> None:
    opts = RunOptions(nemesis=["kill"], sim_bugs=["b"], ssh_hosts=["h1"])
    assert opts.nemesis == ("kill",) and opts.ssh_hosts == ("h1",)
    recorded = json.loads(json.dumps(opts.to_dict()))
    assert recorded["nemesis"] == ["kill"] and recorded["sim_bugs"] == ["b"]
    assert recorded["ssh_hosts"] == ["h1"] and recorded["extra"] == {}
    assert list(recorded) == [f.name for f in dataclasses.fields(RunOptions)]
