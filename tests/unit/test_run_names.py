"""Run names and times: a test's name carries the choices that change its outcome (fencing
on and off are two tests), run and suite folders are named in UTC with the zone marked,
older local-time folders still read, and ``<out>/<test>/latest`` follows the newest run of
each test beside ``<out>/latest``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from calendar import timegm
from pathlib import Path

import pytest

from core.option_checks import NUMBERS
from core.options import NAMED, RunOptions
from harness.report._runs import load_run
from nemesis.fault_registry import FAULTS
from workloads.workload_registry import WORKLOADS

ZONED = re.compile(r"\d{8}T\d{6}Z")
AWAY_FROM_UTC = "Asia/Kathmandu"  # UTC+05:45: a local time would not pass for UTC


def name(**values: object) -> str:
    return RunOptions.of(**{"target": "sim", "workload": "lock", **values}).test_name()


@pytest.mark.parametrize(
    ("values", "expected"),
    [  # the default runs keep the names they had
        ({"nemesis": ("client-pause",)}, "sim-lock-client-pause"),
        ({"workload": "cas-register", "nemesis": ("none",)}, "sim-cas-register-no-fault"),
        (
            {"target": "etcd", "lock": "lease-lock", "nemesis": ("kill",)},
            "etcd-lock-lease-lock-kill",
        ),
        ({"nemesis": ("partition", "kill"), "fencing": True}, "sim-lock-partition+kill"),
    ],
)
def test_default_runs_keep_their_names(values: dict[str, object], expected: str) -> None:
    assert name(**values) == expected


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"nemesis": ("client-pause",), "fencing": False}, "sim-lock-client-pause-nofence"),
        (
            {"workload": "cas-register", "nemesis": ("none",), "sim_bugs": ("stale-read",)},
            "sim-cas-register-no-fault-bug-stale-read",
        ),
        (
            {"target": "etcd", "workload": "cas-register", "nemesis": ("partition",)}
            | {"read_mode": "serializable"},
            "etcd-cas-register-partition-read-serializable",
        ),
        (
            {"target": "redis", "nemesis": ("kill",), "persistence": "none", "fencing": False},
            "redis-lock-kill-nofence-persist-none",
        ),
        (
            {"workload": "herd", "nemesis": ("none",), "recipe": "queue"},
            "sim-herd-no-fault-recipe-queue",
        ),
        (
            {"workload": "unique-ids", "id_generator": "snowflake", "nemesis": ("client-clock",)}
            | {"snowflake_defence": "wait"},
            "sim-unique-ids-client-clock-defence-wait",
        ),
        ({"nemesis": ("none",), "sim_bugs": ("a", "b")}, "sim-lock-no-fault-bug-a+b"),
        (
            {"workload": "watch", "nemesis": ("none",), "watch_mode": "payload"},
            "sim-watch-no-fault-mode-payload",
        ),
        ({"name": "mine", "fencing": False}, "mine"),
    ],
)
def test_what_changes_the_outcome_is_in_the_name(values: dict[str, object], expected: str) -> None:
    assert name(**values) == expected


def test_every_choice_a_workload_or_fault_is_shaped_by_is_named() -> None:
    """The registries say which options shape a workload or fault; each of them that is a
    choice (not a number) is spelled in the name when not at its default, except the id
    generator, which the target decides for every run."""
    shaping = {o for spec in (*WORKLOADS.values(), *FAULTS.values()) for o in spec.options}
    choices = shaping - set(NUMBERS)
    assert choices - set(NAMED) == {"id_generator"}
    assert {"fencing", "read_mode", "sim_bugs"} <= set(NAMED)


def test_a_zoned_folder_reads_as_utc_and_an_old_one_as_local_time(tmp_path: Path) -> None:
    new = tmp_path / "t" / "20261205T131254Z-2"
    old = tmp_path / "t" / "20261205T131254"
    unnamed = tmp_path / "t" / "mine"
    for d in (new, old, unnamed):
        d.mkdir(parents=True)
        (d / "test.json").write_text("{}")
    os.utime(unnamed / "test.json", (0, 0))
    assert load_run(new).when == "2026-12-05 13:12:54 UTC"
    assert load_run(new).date is not None and load_run(new).date.timestamp() == timegm(
        (2026, 12, 5, 13, 12, 54)
    )
    assert load_run(old).when == "2026-12-05 13:12:54 (local time)"
    assert load_run(unnamed).when == "1970-01-01 00:00:00 UTC"  # test.json's mtime


def _harness(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def _utc(folder: str) -> float:
    return float(timegm(time.strptime(folder[:16], "%Y%m%dT%H%M%SZ")))


SHORT = ("--nemesis", "none", "--time-limit", "1", "--recovery-time", "0.5", "--seed", "3")


@pytest.mark.slow
def test_runs_from_the_command_line_are_named_in_utc_and_linked(tmp_path: Path) -> None:
    """Three short sim runs, in a zone away from UTC: each folder is named by what shapes
    the run and stamped in UTC; each test's ``latest`` follows its own newest run and
    ``<out>/latest`` the newest of all."""
    env = {**os.environ, "TZ": AWAY_FROM_UTC}
    out = tmp_path / "results"
    bug = ("run", "--workload", "cas-register", "--sim-bug", "stale-read", *SHORT)
    nofence = ("run", "--workload", "lock", "--fencing", "off", *SHORT)
    started = time.time()
    runs = []
    for argv in (bug, nofence, bug):
        r = _harness(*argv, "-o", str(out), env=env)
        assert r.returncode in (0, 1), r.stdout + r.stderr  # valid or invalid: it ran
        runs.append((out / "latest").resolve())
    ended = time.time()
    first, unfenced, second = runs
    assert first.parent.name == second.parent.name == "sim-cas-register-no-fault-bug-stale-read"
    assert unfenced.parent.name == "sim-lock-no-fault-nofence"
    for run in runs:
        assert run.parent.parent == out.resolve() and ZONED.fullmatch(run.name[:16]), run
        assert started - 1 <= _utc(run.name) <= ended, (run.name, started, ended)
        test = json.loads((run / "test.json").read_text())
        assert test["name"] == run.parent.name
    assert first != second
    assert (out / first.parent.name / "latest").resolve() == second
    assert (out / unfenced.parent.name / "latest").resolve() == unfenced
    assert os.readlink(out / first.parent.name / "latest") == second.name


@pytest.mark.slow
def test_a_suite_folder_is_named_in_utc(tmp_path: Path) -> None:
    suite = tmp_path / "s.toml"
    suite.write_text(
        "[suite]\nname = 't'\n[[run]]\nname = 'one'\nworkload = 'cas-register'\n"
        "nemesis = 'none'\ntime_limit = 1\nrecovery_time = 0.5\n"
    )
    env = {**os.environ, "TZ": AWAY_FROM_UTC}
    started = time.time()
    r = _harness("suite", "run", str(suite), "-o", str(tmp_path / "out"), env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    (folder,) = (tmp_path / "out" / "suite-t").iterdir()
    assert ZONED.fullmatch(folder.name) and started - 1 <= _utc(folder.name) <= time.time()
    run = (folder / "t-one" / "latest").resolve()
    assert run.parent == (folder / "t-one").resolve() and ZONED.fullmatch(run.name)
