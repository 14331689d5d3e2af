"""A workload's options are a record of its own, handed in by the registry (issue 31):
read as ``opts.record(HerdOptions)``, flat names unchanged for suites, test.json and
flags; the command line builds each workload's flags from the record's fields and
``harness run --help`` groups them under the workload's name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields

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


@pytest.fixture
def widgets() -> Iterator[type]:
    """WidgetOptions handed in, and taken out again afterwards."""
    hand_in(WidgetOptions)
    try:
        yield WidgetOptions
    finally:
        for name in ("widgets", "shape"):
            options.FIELDS.pop(name)
            options._TYPES.pop(name)
        option_checks.NUMBERS.pop("widgets")
        options.NAMED.pop("shape")
        options.HANDED.pop(WidgetOptions)


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
