"""Shrinking (issue 33): ``harness check FILE --shrink OUT`` writes the fewest operations of
an invalid history that still cannot be ordered, in the input's format, so that ``harness
check OUT`` is invalid too; a run's results.json carries it and its report opens on it.

The histories are written here, one per format, each around a violation a reader knows
(a stale read hidden among other operations). The shrink must keep the write the stale
read saw: a read of 3 alone "cannot be ordered" too, but only because the write of 3 was
dropped, which is another story than the history's (the first shrink told it: a reproduction).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from checkers import linearizability
from checkers.linear.models import get_model
from checkers.linear.shrink import Shrunk, shrink
from core.formats import detect_format, read_file
from core.history import History
from core.ops import Op
from harness.cli import main
from tests.support.synthetic import cas_register_run

EXIT_INVALID, EXIT_BAD_INPUT = 1, 254
_LINE = re.compile(r"shrunk: (\d+) of ([\d,]+) operations? still cannot be ordered")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as e:  # argparse refuses a bad argument so
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


Row = tuple[int, str, str, object]  # process, type, f, value


def _ops(*calls: tuple[int, str, object]) -> list[Row]:
    """Each call ``(process, f, value)`` invoked and completed ok, one after the other
    (a read is invoked with nil)."""
    return [
        row
        for p, f, v in calls
        for row in ((p, "invoke", f, None if f == "read" else v), (p, "ok", f, v))
    ]


def _noise(n: int) -> list[Row]:
    """A write of 9, then ``n`` sequential reads of 9 by processes 10..12: harmless."""
    return _ops((10, "write", 9), *((11 + k % 3, "read", 9) for k in range(n)))


# write 3, then write 4, then a read of 3 (stale), after a write of 9 and its reads.
STALE = [*_noise(20), *_ops((1, "write", 3), (2, "write", 4), (3, "read", 3))]
N_STALE = 24  # operations: the write of 9, 20 reads, the three of the story


def _edn(rows: list[Row]) -> str:
    nil = lambda v: "nil" if v is None else str(v)  # noqa: E731
    return "".join(
        f"{{:process {p}, :type :{t}, :f :{f}, :value {nil(v)}}}\n" for p, t, f, v in rows
    )


def _etcd(rows: list[Row]) -> str:
    nil = lambda v: "nil" if v is None else str(v)  # noqa: E731
    return "".join(f"INFO  jepsen.util - {p}\t:{t}\t:{f}\t{nil(v)}\n" for p, t, f, v in rows)


def _jsonl(rows: list[Row]) -> str:
    return "".join(
        json.dumps({"index": i, "time": 1000 * i, "process": p, "type": t, "f": f, "value": v})
        + "\n"
        for i, (p, t, f, v) in enumerate(rows)
    )


def _kv(rows: list[Row]) -> str:
    out = []
    for p, t, f, v in rows:
        f, v = {"write": ("put", v), "read": ("get", v)}[f]
        value = "nil" if v is None else f'"{v}"'
        out.append(f'{{:process {p}, :type :{t}, :f :{f}, :key "k", :value {value}}}\n')
    return "".join(out)


FORMATS = {  # name: (file name, text, format, --model needed)
    "edn": ("stale.edn", _edn(STALE), "edn", None),
    "porcupine-etcd": ("stale.log", _etcd(STALE), "porcupine-etcd", None),
    "porcupine-kv": ("stale.txt", _kv(STALE), "porcupine-kv", None),
    "jsonl": ("stale.jsonl", _jsonl(STALE), "jsonl", "register"),
}


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_shrink_writes_the_stale_read_in_the_inputs_format(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    name, text, detected, model = FORMATS[fmt]
    src, out = tmp_path / name, tmp_path / f"shrunk-{name}"
    src.write_text(text)
    given = ["--model", model] if model else []
    code, said, _ = run(capsys, "check", str(src), "--shrink", str(out), *given)
    assert code == EXIT_INVALID
    m = _LINE.search(said)
    assert m, said
    assert (int(m.group(1)), int(m.group(2).replace(",", ""))) == (3, N_STALE)
    assert said.rstrip().splitlines()[-2].endswith(f"still cannot be ordered: {out}")
    assert detect_format(out) == detected
    # the story, not a read of 3 alone: write 3, write 4, read 3, in their order
    kept = [(o.f, o.value) for o in read_file(out).history if o.type == "ok"]
    assert kept in (
        [("write", 3), ("write", 4), ("read", 3)],
        [("put", "3"), ("put", "4"), ("get", "3")],
    )
    # checked again, the same verdict, from a smaller file
    code, said, _ = run(capsys, "check", str(out), *given)
    assert code == EXIT_INVALID and ", 6 ops," in said
    assert out.stat().st_size < src.stat().st_size


def test_a_read_of_a_value_nothing_wrote_shrinks_to_that_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src, out = tmp_path / "never.edn", tmp_path / "out.edn"
    src.write_text(_edn([*_noise(10), (5, "invoke", "read", None), (5, "ok", "read", 7)]))
    code, said, _ = run(capsys, "check", str(src), "--shrink", str(out))
    assert code == EXIT_INVALID and "shrunk: 1 of 12 operation still cannot be ordered" in said
    assert [o.value for o in read_file(out).history] == [None, 7]


def test_a_cas_that_needs_its_own_effect_is_not_a_story_alone(tmp_path: Path) -> None:
    """A cas 2->2 needs the state 2, which it leaves itself: with the write of 2 it saw
    dropped, it cannot be ordered, but that is not the history's violation (write 2, write
    1, read 2)."""
    rows = _ops((0, "write", 2), (1, "cas", "[2 2]"), (2, "write", 1), (3, "read", 2))
    src = tmp_path / "cas.log"
    src.write_text(_etcd(rows))
    read = read_file(src)
    r = linearizability.check(read.history, read.model, 30, shrink=True)
    assert r.valid is False
    kept = [(o["f"], o["value"]) for o in r.details["shrunk"]["ops"] if o["type"] == "ok"]
    assert ("read", 2) in kept and ("write", 1) in kept and len(kept) == 3


def test_a_get_that_misses_an_append_keeps_the_append(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The kv model's appends leave a state the hints cannot name: a get alone of a value
    never appended cannot be ordered with no real time at all, and is refused."""
    lines = [
        '{:process 0, :type :invoke, :f :append, :key "7", :value "x 0 0 y"}',
        '{:process 0, :type :ok, :f :append, :key "7", :value "x 0 0 y"}',
        '{:process 1, :type :invoke, :f :append, :key "7", :value "x 1 0 y"}',
        '{:process 1, :type :ok, :f :append, :key "7", :value "x 1 0 y"}',
        '{:process 2, :type :invoke, :f :get, :key "7", :value nil}',
        '{:process 2, :type :ok, :f :get, :key "7", :value "x 0 0 y"}',
        '{:process 3, :type :invoke, :f :get, :key "8", :value nil}',
        '{:process 3, :type :ok, :f :get, :key "8", :value ""}',
    ]
    src, out = tmp_path / "kv.txt", tmp_path / "out.txt"
    src.write_text("\n".join(lines) + "\n")
    code, said, _ = run(capsys, "check", str(src), "--shrink", str(out))
    assert code == EXIT_INVALID and "shrunk: 3 of 4 operations" in said
    assert [o.value for o in read_file(out).history if o.type == "ok"] == [
        "x 0 0 y",
        "x 1 0 y",
        "x 0 0 y",
    ]


def test_a_valid_history_writes_nothing_and_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src, out = tmp_path / "ok.edn", tmp_path / "out.edn"
    src.write_text(_edn(_noise(5)))
    code, said, _ = run(capsys, "check", str(src), "--shrink", str(out))
    assert code == 0
    assert f"not shrunk: the history is linearizable; {out} not written" in said
    assert not out.exists()


def test_shrink_refuses_a_link_and_several_paths(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src, victim, link = tmp_path / "stale.edn", tmp_path / "victim", tmp_path / "link.edn"
    src.write_text(_edn(STALE))
    victim.write_text("keep me\n")
    os.symlink(victim, link)
    code, said, err = run(capsys, "check", str(src), "--shrink", str(link))
    assert code == EXIT_BAD_INPUT
    assert "a symbolic link; the harness never writes through one" in err
    assert victim.read_text() == "keep me\n" and os.path.islink(link)
    assert "verdict invalid" in said  # the verdict is still said
    code, said, err = run(capsys, "check", str(src), str(src), "--shrink", str(tmp_path / "o"))
    assert code == EXIT_BAD_INPUT and said == ""
    assert err.strip() == "harness: --shrink writes one history: give one PATH, not 2"


def test_out_of_time_gives_the_smallest_so_far_not_minimal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no time to shrink, the whole failing partition is what was found so far: said
    not minimal (out of time), still confirmed by the plain search and still invalid."""
    import checkers.linear.shrink as module

    monkeypatch.setattr(module, "DEFAULT_SHRINK_S", 0.0)
    src, out = tmp_path / "stale.edn", tmp_path / "out.edn"
    src.write_text(_edn(STALE))
    code, said, _ = run(capsys, "check", str(src), "--shrink", str(out))
    assert code == EXIT_INVALID
    assert (
        f"shrunk: {N_STALE} of {N_STALE} operations still cannot be ordered, "
        f"not minimal (out of time): {out}" in said
    )
    assert run(capsys, "check", str(out))[0] == EXIT_INVALID


def test_the_plain_search_confirms_what_is_shown() -> None:
    """The shrink re-checks its result by the plain search; a fast check that lied (here:
    everything fails) gives a history the plain search refutes, which is not shown."""
    ops = [
        Op(0, 0, 1, "invoke", "write", 1),
        Op(1, 1, 1, "ok", "write", 1),
        Op(2, 2, 2, "invoke", "read", None),
        Op(3, 3, 2, "ok", "read", 1),
    ]
    s: Shrunk = shrink(History(ops), get_model("register"), None, lambda h, t: True, None)
    assert s.confirmed is False and s.operations == 1
    s = shrink(
        History(ops),
        get_model("register"),
        None,
        lambda h, t: linearizability.check(h, "register").valid is False,
        time.perf_counter() + 10,
    )
    assert s.confirmed is False  # valid: nothing fails, the whole is returned, refuted


def test_a_runs_results_and_report_open_on_the_shrunk_counterexample(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_dir = cas_register_run(tmp_path / "run", ops=600, stale_read=True)
    out, page = tmp_path / "shrunk.jsonl", tmp_path / "report.html"
    code, said, _ = run(capsys, "check", str(run_dir), "--shrink", str(out), "--html", str(page))
    assert code == EXIT_INVALID
    results = json.loads((run_dir / "results.json").read_text())
    shrunk = results["checkers"]["linearizability"]["shrunk"]
    assert 1 <= shrunk["operations"] <= 4 and shrunk["of"] == 600 and shrunk["minimal"]
    assert shrunk["confirmed_by"] == "the plain search"
    m = _LINE.search(said)
    model = results["checkers"]["linearizability"]["model"]  # the run's, which OUT lacks
    assert m and int(m.group(1)) == shrunk["operations"] and f"--model {model})" in said
    assert [Op.from_dict(d) for d in shrunk["ops"]] == list(read_file(out).history)
    text = page.read_text()
    main_starts = text.index("<main>")
    assert text.index('id="shrunk"', main_starts) < text.index('id="figure"', main_starts)
    n = shrunk["operations"]
    assert f"These {n} operations cannot be ordered" in text
    assert 'href="#figure"' in text and 'href="history.jsonl"' in text
    assert run(capsys, "check", str(out), "--model", model)[0] == EXIT_INVALID


def test_a_shrink_the_plain_search_does_not_confirm_is_not_written(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Were the fast search wrong, the plain one would not confirm the shrunk history: it
    is then neither written nor shown, and the line says why."""
    import checkers.linear.shrink as module

    monkeypatch.setattr(module, "plain_check", lambda *a: True)
    src, out = tmp_path / "stale.edn", tmp_path / "out.edn"
    src.write_text(_edn(STALE))
    code, said, _ = run(capsys, "check", str(src), "--shrink", str(out))
    assert code == EXIT_INVALID and not out.exists()
    assert (
        "not shrunk: the plain search did not confirm that the 3 operations it shrank to "
        f"cannot be ordered; {out} not written"
    ) in said


def test_json_says_where_the_shrunk_history_went(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src, out = tmp_path / "stale.edn", tmp_path / "out.edn"
    src.write_text(_edn(STALE))
    code, said, _ = run(capsys, "check", "--json", str(src), "--shrink", str(out))
    answer = json.loads(said)
    assert code == EXIT_INVALID and answer["valid"] is False and "_format" not in answer
    assert answer["shrunk"] == f"shrunk: 3 of {N_STALE} operations still cannot be ordered: {out}"
    code, said, _ = run(capsys, "check", "--json", str(src))
    assert "_format" not in json.loads(said) and "shrunk" not in json.loads(said)


# The first half of each (as delta debugging splits it) fails alone, but only for want of
# an operation of the second half, concurrent with the read or cas of the first.
BAITS = {
    # write 0, write 5, write 4, then a read of 0 that a concurrent write of 0 explains
    "edn": [
        *_ops((1, "write", 0), (5, "write", 5), (2, "write", 4)),
        (4, "invoke", "read", None),
        *_ops((3, "write", 0)),
        (4, "ok", "read", 0),
    ],
    # write 5, write 2, then a failed cas 2->2 that a concurrent write of 1 explains
    "porcupine-etcd": [
        *_ops((5, "write", 5), (1, "write", 2)),
        (3, "invoke", "cas", "[2 2]"),
        *_ops((2, "write", 1)),
        (3, "fail", "cas", "[2 2]"),
    ],
}


@pytest.mark.parametrize("fmt", BAITS)
def test_a_dropped_write_does_not_make_the_story(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    """The first reference runs shrank cas-failure.edn to 'write 4, read 0' (the writes of
    0 between them dropped) and etcd_000.log to 'write 2, cas 2->2 failed' (the write of 1
    between them dropped): violations the history does not have. The one it has here is
    the stale read of 5 (overwritten by 4, 2 or 1, then 6)."""
    rows = [*BAITS[fmt], *_ops((6, "write", 6), (7, "read", 5))]
    name = "bait.edn" if fmt == "edn" else "bait.log"
    src, out = tmp_path / name, tmp_path / f"out-{name}"
    src.write_text((_edn if fmt == "edn" else _etcd)(rows))
    code, said, _ = run(capsys, "check", str(src), "--shrink", str(out))
    assert code == EXIT_INVALID and "shrunk: 3 of " in said
    kept = [(o.f, o.value) for o in read_file(out).history if o.type != "invoke"]
    assert kept[0] == ("write", 5) and kept[2] == ("read", 5) and kept[1][0] == "write"


def test_shrink_out_is_bounded_and_its_folder_checked_before_any_checking(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--shrink OUT`` is a path like the others: a name over 255 bytes, or a folder that
    does not exist, is one line (exit 254) before the history is read."""
    history = tmp_path / "h.jsonl"
    history.write_text("")
    long = str(tmp_path / ("a" * 300))
    code, out, err = run(capsys, "check", "--shrink", long, str(history))
    assert code == 254 and out == "" and len(err.splitlines()) == 1 and "255" in err, err
    missing = str(tmp_path / "no-such-folder" / "out.jsonl")
    code, out, err = run(capsys, "check", "--shrink", missing, str(history))
    assert code == 254 and out == "" and len(err.splitlines()) == 1, err
    assert "--shrink" in err and "no-such-folder" in err
    assert not (tmp_path / "no-such-folder").exists()
