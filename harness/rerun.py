"""The command line that runs a run's options again: ``harness run`` with every option
that differs from its default, the seed included (test.json's ``command``, the report's
command line). Flags follow the options' names (``lease_ttl`` is ``--lease-ttl``), with
the few spellings of the command line translated back."""

from __future__ import annotations

import shlex
from typing import Any

from core.options import DERIVED, FOLLOW, RunOptions

SWITCHES = {
    "ssh": "--ssh",
    "ssh_keep_packages": "--ssh-keep-packages",
    "accept_unavailable": "--accept-unavailable",
    "stop_on_anomaly": "--stop-on-anomaly",
}
"""Options given by a flag alone."""


def _flags(name: str, value: Any, opts: RunOptions) -> list[str]:
    flag = "--" + name.replace("_", "-")
    if name in SWITCHES:
        return [SWITCHES[name]] if value else []
    if name == "ssh_strict":
        return [] if value else ["--ssh-no-strict"]
    if name == "sim_bugs":
        return [x for bug in value for x in ("--sim-bug", bug)]
    if name == "ssh_hosts":
        return ["--nodes", ",".join(value)] if value else []
    if name == "pause_at":
        return [flag, "0" if value is None else f"{value:g}"]
    if name == "op_timeout":
        return [flag, f"{value:g}"] if opts.op_timeout_given and value != FOLLOW else []
    if isinstance(value, bool):
        return [flag, "on" if value else "off"]
    if isinstance(value, (list, tuple)):
        return [flag, ",".join(map(str, value))]
    if isinstance(value, float):
        return [flag, f"{value:g}"]
    return [flag, str(value)]


def rerun_argv(opts: RunOptions, replay_of: str | None = None) -> list[str]:
    """``harness run`` and the flags that give ``opts`` (every one not at its default); for
    a replay, the replay of the same recording on the same target."""
    if replay_of is not None:
        return ["harness", "run", "--replay", replay_of, "--target", opts.target]
    default = RunOptions().to_dict()
    argv = ["harness", "run"]
    for name, value in opts.to_dict().items():
        if name in DERIVED or name == "out_dir" or value == default.get(name):
            continue
        argv += _flags(name, value, opts)
    return argv


def rerun_command(opts: RunOptions, replay_of: str | None = None) -> str:
    """``rerun_argv`` as one shell line."""
    return shlex.join(rerun_argv(opts, replay_of))
