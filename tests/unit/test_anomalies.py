"""Named anomalies of the linearizability checker: stale reads, lost updates, the rest.

The recorded history is the start of a real run of the sim with its ``stale-read`` bug
(``harness run --target sim --workload cas-register --sim-bug stale-read --nemesis none``),
the shape of etcd's serializable reads on a partitioned node.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from checkers.anomalies import KEY, KINDS, MAX_SENTENCE, Anomaly, bounded, first_sentences
from checkers.linear.stale import nonlinearizable
from checkers.linearizability import check
from core.history import History
from core.store import read_history_jsonl

HISTORIES = Path(__file__).parent / "histories"


def h(*events: tuple[Any, ...]) -> History:
    """A history from (process, type, f, value) tuples, one second apart."""
    return History.from_events(
        {"process": e[0], "type": e[1], "f": e[2], "value": e[3], "time": i * 1_000_000_000}
        for i, e in enumerate(events)
    )


def story(events: str) -> dict[str, Any]:
    """The named anomaly of a register history written ``"1 invoke write 1; 1 ok write 1;
    2 invoke cas nil,2; ..."`` (process, type, f, value; ``nil`` for None), one second
    apart."""
    parsed = []
    for event in events.split(";"):
        process, kind, f, value = event.split()
        values = [None if v == "nil" else int(v) for v in value.split(",")]
        parsed.append((int(process), kind, f, values if len(values) > 1 else values[0]))
    return anomaly(check(h(*parsed), "register"))


def anomaly(result: Any) -> dict[str, Any]:
    assert result.valid is False, result.summary
    (a,) = result.details[KEY]
    assert a["kind"] in KINDS
    assert result.summary == a["sentence"]
    assert len(a["sentence"]) <= MAX_SENTENCE
    return dict(a)


def test_recorded_sim_stale_read_is_named_with_its_ops_and_times() -> None:
    history = read_history_jsonl(HISTORIES / "sim-stale-read.jsonl")
    a = anomaly(check(history, "register"))
    assert a["kind"] == "stale-read"
    assert a["sentence"] == (
        "stale read (key 1): process 2 read 14 at t=2.788 s, but process 0's write 17 had "
        "taken effect before the read began (acknowledged at t=2.785 s). 14 was set by "
        "process 2's cas 12->14, which was acknowledged at t=2.782 s, before the write 17 "
        "began."
    )
    assert a["key"] == 1 and a["processes"] == [2, 0] and a["ops"] == [42, 30, 25]
    read, overwrite, source = a["involved"]
    assert (read["role"], overwrite["role"], source["role"]) == ("read", "overwrite", "source")
    assert overwrite["complete_time"] < read["invoke_time"]


def test_stale_read_after_a_write_that_followed_the_value_read() -> None:
    a = story(
        "1 invoke write 1; 1 ok write 1; 2 invoke write 2; 2 ok write 2; "
        "3 invoke read nil; 3 ok read 1; 2 invoke read nil; 2 ok read 2"
    )
    assert a["kind"] == "stale-read"
    assert a["sentence"] == (
        "stale read: process 3 read 1 at t=4.000 s, but process 2's write 2 had taken effect "
        "before the read began (acknowledged at t=3.000 s). 1 was set by process 1's write 1, "
        "which was acknowledged at t=1.000 s, before the write 2 began."
    )


def test_reading_the_initial_value_after_a_write_is_a_stale_read() -> None:
    a = story(
        "1 invoke write 1; 1 ok write 1; 2 invoke read nil; 2 ok read nil; "
        "1 invoke read nil; 1 ok read 1"
    )
    assert a["kind"] == "stale-read"
    assert a["sentence"].endswith("nil was the initial value.")


def test_two_cas_from_the_same_value_is_a_lost_update() -> None:
    a = story("1 invoke cas nil,1; 1 ok cas nil,1; 2 invoke cas nil,2; 2 ok cas nil,2")
    assert a["kind"] == "lost-update"
    assert a["sentence"].startswith(
        "lost update: process 1's cas nil->1, acknowledged at t=1.000 s, was lost: process "
        "2's cas nil->2 was applied to nil"
    )
    assert a["processes"] == [2, 1]


def test_a_write_nobody_ever_saw_while_reads_keep_the_old_value_is_a_lost_update() -> None:
    a = story(
        "1 invoke write 1; 1 ok write 1; 1 invoke write 2; 1 ok write 2; "
        "2 invoke read nil; 2 ok read 1; 3 invoke read nil; 3 ok read 1"
    )
    assert a["kind"] == "lost-update"
    assert "write 2, acknowledged at t=3.000 s, vanished" in a["sentence"]


def test_concurrent_writes_prove_no_story_and_stay_non_linearizable() -> None:
    # Read 1 then 2 then 1 again, with both writes concurrent with everything: no
    # real-time proof that any write followed another, so no stale read is claimed.
    a = story(
        "1 invoke write 1; 2 invoke write 2; 3 invoke read nil; 3 ok read 1; "
        "3 invoke read nil; 3 ok read 2; 3 invoke read nil; 3 ok read 1; "
        "1 ok write 1; 2 ok write 2"
    )
    assert a["kind"] == "non-linearizable"
    assert a["sentence"].startswith("non-linearizable (other): process 3 read 1")


def test_an_uncertain_overwrite_seen_by_a_read_took_effect() -> None:
    # The write of 2 timed out (info), but a read saw 2, the only write of it: it took
    # effect before that read returned, so the later read of 1 is stale.
    a = story(
        "1 invoke write 1; 1 ok write 1; 2 invoke write 2; 2 info write 2; "
        "3 invoke read nil; 3 ok read 2; 3 invoke read nil; 3 ok read 1"
    )
    assert a["kind"] == "stale-read"
    assert (
        "write 2 had taken effect before the read began (seen by process 3's read 2 "
        in (a["sentence"])
    )


def test_an_uncertain_write_nobody_saw_proves_nothing() -> None:
    # write 2 may have taken effect before either read or never: read 1, read 2, read 1
    # is invalid (2 cannot be undone), but no write certainly followed the write of 1.
    a = story(
        "1 invoke write 1; 2 invoke write 2; 2 info write 2; 1 ok write 1; "
        "3 invoke read nil; 3 ok read 1; 3 invoke read nil; 3 ok read 2; "
        "3 invoke read nil; 3 ok read 1"
    )
    assert a["kind"] == "non-linearizable"


def test_the_summary_of_a_huge_counterexample_is_bounded() -> None:
    # issue 15 item 8: a counterexample of one 21,236-character sentence
    long = "Not linearizable: " + "x returned before y was invoked, and " * 574
    assert len(long) >= 21_236
    cx = {"sentences": [long], "partition": 3, "op": {"process": 1, "index": 7}}
    a = nonlinearizable(cx).to_dict()
    assert len(a["sentence"]) <= MAX_SENTENCE and a["sentence"].endswith("…")
    assert a["sentence"].startswith("non-linearizable (other) (key 3): x returned before")
    assert a["ops"] == [7] and a["processes"] == [1]


def test_first_sentences_keeps_three_and_numbers_whole() -> None:
    text = "One at 12.5 s. Two. Three! Four."
    assert first_sentences(text) == "One at 12.5 s. Two. Three!"
    assert bounded("short") == "short"


def test_kinds_are_a_closed_list() -> None:
    with pytest.raises(ValueError, match="unknown anomaly kind"):
        Anomaly("garbage", "garbage")
