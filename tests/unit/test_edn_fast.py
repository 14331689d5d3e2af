"""The fast path of EDN histories (core/formats/edn_fast.py, ``_edn.c``): the same ops as
the plain reader, and wherever it does not read a text, the plain reader's own error."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.formats import Budget, FormatError, OutOfBudget, edn_fast, read_file
from core.formats.jepsen_edn import read_edn_history
from core.ops import Op
from harness.cli import main

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "histories"
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("core.formats._edn") is None
    and os.environ.get("HARNESS_REQUIRE_COMPILED") != "1",
    reason="the EDN fast path is not built here (scripts/compile_checker.py)",
)

GOOD = """[{:process 0, :type :invoke, :f :write, :value 3}
 {:process 1, :type :invoke, :f :read, :value nil}
 {:process 0, :type :ok, :f :write, :value 3}
 {:process 1, :type :ok, :f :read, :value 3}
 {:process 2, :type :invoke, :f :cas, :value [3 4]}
 {:process 2, :type :fail, :f :cas, :value [3 4]}]
"""

ODD = [
    # Read by both: comments, a list, times, strings, keys, nodes, errors as strings.
    "; a comment\n(" + GOOD[1:-2] + ")\n",
    "{:process 0 :type :invoke :f :read :time 5}\n{:process 0 :type :ok :f :read :value 1 "
    ':time 9 :node "n1" :error "e" :index 7}\n',
    '[{:process "c", :type :invoke, :f :write, :value "héllo", :key 12}\n'
    ' {:process "c", :type :ok, :f :write, :value "héllo", :key 12}]',
    "[{:process 0 :type :invoke :f :write :value [[1 2] [3 [4]] -5 true :k]}\n"
    " {:process 0 :type :ok :f :write :value [[1 2] [3 [4]] -5 true :k]}]",
    # Left to the plain reader: what it reads differently or refuses.
    GOOD.replace(":value 3}", ":value 3.5}", 1),
    GOOD.replace(":value 3}", ":value sym}", 1),
    GOOD.replace(":value 3}", ":value #{1 2}}", 1),
    GOOD.replace(":value 3}", ":value {:a 1}}", 1),
    GOOD.replace(":value 3}", ':value "a\\"b"}', 1),
    GOOD.replace(":value 3}", ':value #inst "2020"}', 1),
    GOOD.replace(":value 3}", ":value #_ 7 3}", 1),
    GOOD.replace(":value 3}", ":value 12345678901234567890123}", 1),
    GOOD.replace(":value 3}", ":value 1234567890123456789}", 1),
    GOOD.replace(":value 3}", ":value 3N}", 1),
    GOOD.replace(":value 3}", ":value +3}", 1),
    GOOD.replace(":value 3}", ":value \\c}", 1),
    GOOD.replace(":value 3}", ":value 3 :value 4}", 1),
    GOOD.replace(":value 3}", ":value 3 :x}", 1),
    GOOD.replace(":value 3}", ':value 3 "s" 1}', 1),
    GOOD.replace(":value 3}", ":value [[[[[[[[[[1]]]]]]]]]]}", 1),
    GOOD.replace(":process 0,", ":process true,", 1),
    GOOD.replace(":process 0,", ":process -1,", 1),
    GOOD.replace(":process 0,", ":process 4611686018427387904,", 1),
    GOOD.replace(":process 0,", ':process "",', 1),
    GOOD.replace(":type :invoke,", ":type :started,", 1),
    GOOD.replace(":f :write,", ':f "",', 1),
    GOOD.replace(":f :write,", "", 1),
    GOOD.replace(":value 3}", ":value 3 :key [1]}", 1),
    GOOD.replace(":value 3}", ":value 3 :key true}", 1),
    GOOD.replace(":value 3}", ":value 3 :error [:timeout nil]}", 1),
    GOOD.replace(":value 3}", ":value 3 :node 1}", 1),
    GOOD.replace(":value 3}", ":value 3 :time 4}", 1),
    GOOD.replace(":value 3}", ":value 3 :time -4}", 1),
    GOOD.replace(":value 3}", ":value 3 :ti\u00a0me 4}", 1),
    GOOD.replace(" {:process 1, :type :invoke", "\u00a0{:process 1, :type :invoke", 1),
    GOOD.replace(" {:process 1, :type :invoke", "\x0b{:process 1, :type :invoke", 1),
    GOOD.replace(":f :read, :value 3}", ":f :write, :value 3}", 1),  # the op semantics
    GOOD.replace("{:process 2, :type :invoke", "{:process 1, :type :invoke", 1),
    GOOD[:-2],
    GOOD + " 7",
    GOOD + "[]",
    GOOD.replace("[", "{", 1),
    "[]",
    "",
    "[" + GOOD,
    GOOD.replace(":process", "process", 1),
    GOOD.replace(":process", '"process"', 1),
    GOOD.replace(":process", ":", 1),
]


def plain(path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    """What the plain reader makes of ``path``: its ops, or its error."""
    with monkeypatch.context() as m:
        m.setattr(edn_fast, "_native", lambda: None)
        return read(path)


def read(path: Path) -> object:
    try:
        return [(op, type(op.value)) for op in read_file(path).history]
    except FormatError as e:
        return str(e)


KV = '{:process 0, :type :invoke, :f :append, :key "1", :value "x 0 1 y"}\n' \
     '{:process 0, :type :ok, :f :append, :key "1", :value "x 0 1 y"}\n'  # fmt: skip
KV_ODD = [KV, KV.replace(':key "1", ', "", 1), KV.replace(":value", ":time 1 :value", 1)]


@pytest.mark.parametrize(
    ("name", "text"), [("h.edn", text) for text in ODD] + [("c01-ok.txt", kv) for kv in KV_ODD]
)
def test_a_text_reads_as_the_plain_reader_reads_it(
    name: str, text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An EDN history, or a porcupine kv log (whose op maps hold five keys)."""
    path = tmp_path / name
    path.write_text(text)
    assert read(path) == plain(path, monkeypatch)


def test_what_it_reads_it_reads_itself() -> None:
    """The fast path reads the common shapes (not handing them back to the plain one)."""
    error_vector = GOOD.replace(":value 3}", ":value 3 :error [:timeout nil]}", 1)
    assert error_vector in ODD
    for text in [GOOD, *ODD[:4], error_vector]:
        ops = edn_fast.read_ops(text, False, None)
        assert ops is not None and len(ops) >= 2
    assert edn_fast.read_ops(ODD[4], False, None) is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    cut=st.integers(0, len(GOOD)),
    drop=st.integers(0, 3),
    insert=st.sampled_from(["", " ", "[", "]", "{", "}", ":", '"', "1", "-", ";", "#", "\\"]),
)
def test_a_mangled_text_reads_as_the_plain_reader_reads_it(
    cut: int, drop: int, insert: str
) -> None:
    text = GOOD[:cut] + insert + GOOD[cut + drop :]
    path = Path("mangled.edn")
    try:
        fast: object = list(read_edn_history(path, text))
    except FormatError as e:
        fast = str(e)
    saved = edn_fast._native
    edn_fast._native = lambda: None  # type: ignore[method-assign]
    try:
        try:
            expected: object = list(read_edn_history(path, text))
        except FormatError as e:
            expected = str(e)
    finally:
        edn_fast._native = saved  # type: ignore[method-assign]
    assert fast == expected


def test_the_budget_is_polled_while_it_reads() -> None:
    """A text of many op maps is read within the check's budget: out of time, unknown."""
    text = "".join(
        f"{{:process {i % 7}, :type :{t}, :f :read, :value 1}}\n"
        for i in range(10_000)
        for t in ("invoke", "ok")
    )
    assert edn_fast.read_ops(text, False, None) is not None
    with pytest.raises(OutOfBudget, match="reading"):
        read_edn_history(Path("big.edn"), text, Budget(time_limit=1e-9))


@pytest.mark.skipif(not (SHARED / "MANIFEST.tsv").is_file(), reason="no reference histories")
def test_the_reference_histories_read_the_same_and_check_the_same(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``harness check`` over the Knossos and kv files: every verdict as with the plain
    reader, and every file read by the fast path (immediate-failure.edn's error vector
    kept as its text, as the plain reader keeps it)."""
    paths = sorted(SHARED.glob("knossos/**/*.edn")) + sorted(SHARED.glob("porcupine/kv/*.txt"))
    assert len(paths) == 60
    taken = [p.name for p in paths if edn_fast.read_ops(p.read_text(), p.suffix == ".txt", None)]
    assert len(taken) == 60
    argv = ["check", "--json", *map(str, paths)]

    def outcomes() -> list[tuple[object, ...]]:
        main(argv)
        lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
        return [(x["file"], x["valid"], x["ops"], x["summary"]) for x in lines]

    fast = outcomes()
    monkeypatch.setattr(edn_fast, "_native", lambda: None)
    assert fast == outcomes()
    assert len(fast) == 60
    assert all(isinstance(op, Op) for op in read_file(paths[0]).history)
