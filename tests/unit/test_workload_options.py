"""A workload's options are a record of its own, handed in by the registry (issue 31):
read as ``opts.record(HerdOptions)``, flat names unchanged for suites, test.json and
flags; the command line builds each workload's flags from the record's fields and
``harness run --help`` groups them under the workload's name."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

import pytest
from test_cli import run

from core import option_checks, options
from core.option_checks import Bound, OptionError
from core.option_records import option
from core.options import RunOptions, hand_in
from workloads.herd import HerdOptions
from workloads.watch import WatchOptions
from workloads.workload_registry import WORKLOADS


@dataclass(frozen=True, slots=True)
class WidgetOptions:
    """A made-up workload's options."""

    widgets: int = option(4, "widgets per client", bound=Bound("--widgets", 1, 9, integer=True))
    shape: str = option("round", "their shape", choices=("round", "square"), named="shape")


@contextmanager
def handed_in(record: type) -> Iterator[type]:
    """``record`` handed in, and every table it went into as it was before, afterwards."""
    tables: list[dict[Any, Any]] = [
        options.FIELDS,
        options._TYPES,
        option_checks.NUMBERS,
        options.NAMED,
        options.HANDED,
    ]
    saved, titled = [dict(t) for t in tables], list(options.TITLED)
    hand_in(record)
    try:
        yield record
    finally:
        for table, before in zip(tables, saved, strict=True):
            table.clear()
            table.update(before)
        options.TITLED[:] = titled


@pytest.fixture
def widgets() -> Iterator[type]:
    with handed_in(WidgetOptions) as record:
        yield record


def test_a_record_handed_in_is_options_like_the_runs_own(widgets: type) -> None:
    opts = RunOptions.of(widgets=7, shape="square", target="sim")
    assert opts.record(WidgetOptions) == WidgetOptions(7, "square")
    assert opts.get("widgets") == 7 and opts.to_dict()["shape"] == "square"
    assert RunOptions().record(WidgetOptions) == WidgetOptions()  # defaults when not given
    assert opts.with_(widgets=4, shape="round") == RunOptions.of(target="sim")  # one value
    assert "shape-square" in opts.test_name()
    with pytest.raises(OptionError, match="--widgets must be at least 1 and at most 9"):
        RunOptions.from_mapping({"widgets": 10})
    hand_in(WidgetOptions)  # again: nothing changes


def test_a_flat_name_taken_twice_is_refused_at_once() -> None:
    @dataclass(frozen=True)
    class Clash:
        recipe: str = option("naive", "a second recipe")

    with pytest.raises(TypeError, match=r"Clash\.recipe: the option 'recipe' exists"):
        hand_in(Clash)


def test_the_workloads_records_keep_their_flat_names() -> None:
    handed = {r for w in WORKLOADS.values() for r in w.records}
    assert {HerdOptions, WatchOptions} <= handed
    flat = {f.metadata.get("flat", f.name) for r in handed for f in fields(r)}
    assert {"recipe", "watchers", "watch_mode", "keys", "read_mode", "id_generator"} <= flat
    opts = RunOptions.of(recipe="queue", watch_mode="payload", watchers=3)
    assert opts.record(HerdOptions).recipe == "queue"
    assert opts.record(WatchOptions) == WatchOptions(watchers=3, mode="payload")


def test_run_help_groups_the_flags_by_workload(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "run", "--help")
    assert code == 0
    table = out[out.index("more options, by topic") :]
    assert "  herd" in table and "--recipe" in table.split("  herd", 1)[1].splitlines()[0]
    assert "--watchers --watch-mode --compact-every" in table.split("  watch ", 1)[1]
    code, out, _ = run(capsys, "docs", "options", "herd")
    assert code == 0 and "waits on its predecessor only" in out  # the record's own help


def test_the_flags_check_what_the_records_fields_say(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "run", "--recipe", "line")
    assert code == 254 and "invalid choice: 'line'" in err  # the field's choices
    code, _, err = run(capsys, "run", "--watchers", "0")
    assert code == 254 and "--watchers: must be at least 1" in err  # the field's range


@dataclass(frozen=True, slots=True)
class GadgetOptions:
    """A made-up record with rules of its own: fewer spares than gadgets, and spares not
    given fitted to the gadgets given."""

    gadgets: int = option(4, "gadgets", bound=Bound("--gadgets", 1, 99, integer=True))
    spares: int = option(2, "spares", bound=Bound("--spares", 0, 99, integer=True))
    maker: str | None = option(None, "who makes them", title=True)

    def check(self) -> None:
        if self.spares >= self.gadgets:
            raise OptionError(f"--spares {self.spares} is not fewer than --gadgets")

    def fit(self, opts: RunOptions) -> RunOptions:
        if self.spares < self.gadgets or opts.was_given("spares"):
            return opts
        return opts.adapt("spares: fewer than the gadgets", spares=self.gadgets - 1)


@pytest.fixture
def gadgets() -> Iterator[type]:
    with handed_in(GadgetOptions) as record:
        yield record


def test_a_records_own_rules_apply_to_every_run(gadgets: type) -> None:
    from harness.validate import check_options

    fitted = check_options(RunOptions.of(gadgets=2, nemesis=("none",)))
    assert fitted.record(GadgetOptions).spares == 1
    assert fitted.adapted == ("spares: fewer than the gadgets",)
    with pytest.raises(OptionError, match="--spares 2 is not fewer than --gadgets"):
        check_options(RunOptions.of(gadgets=2, spares=2, nemesis=("none",)))
    titled = RunOptions.of(target="sim", workload="lock", maker="acme", nemesis=("none",))
    assert titled.test_name() == "sim-lock-acme-no-fault"


def test_the_lock_options_are_the_holding_workloads_record() -> None:
    """The lock and lease are not the run's own (``core``'s) but a record of the workloads
    that hold something, with their flags under the ``locks`` topic."""
    from core.option_records import RECORDS
    from workloads.common.lock_options import LockOptions

    assert LockOptions not in RECORDS.values() and not hasattr(RunOptions(), "lock")
    holding = {w.name for w in WORKLOADS.values() if w.holds}
    assert holding == {w.name for w in WORKLOADS.values() if LockOptions in w.records}
    assert {"lock", "election", "herd", "registry", "version-cas"} <= holding
    opts = RunOptions.of(target="zookeeper", workload="lock", lock="kazoo", nemesis=("kill",))
    opts = opts.with_(lease_ttl=4.0, fencing=False)
    assert opts.record(LockOptions) == LockOptions(impl="kazoo", lease_ttl=4.0, fencing=False)
    assert opts.test_name() == "zookeeper-lock-kazoo-kill-nofence"  # as before the move


def test_a_holding_workload_without_the_lock_options_is_a_programming_error() -> None:
    from workloads.workload import Workload

    with pytest.raises(TypeError, match="hold something: add LockOptions to its records"):
        Workload("w", "a workload", lambda o, s: None, False, True, "none", ())


def test_the_locks_topic_lists_the_lock_flags(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "docs", "options", "locks")
    assert code == 0
    for flag in ("--lock NAME", "--lib-version VERSION", "--lease-ttl", "--keepalive"):
        assert flag in out
    assert "--fencing on|off" in out and "--holder-check on|off" in out
    assert "a lock of your own" in out  # what takes the variants no target owns
    code, _, err = run(capsys, "run", "--keepalive", "5", "--lease-ttl", "4")
    assert code == 254 and "--keepalive 5.0 is not shorter than --lease-ttl 4.0" in err
