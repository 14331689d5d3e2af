"""History readers: EDN, Jepsen/Knossos EDN, porcupine etcd and kv logs, our JSONL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.formats import FormatError, detect_format, read_history
from core.formats.edn import EdnError, dumps, iter_elements, loads
from core.ops import Op
from core.store import HistoryWriter
from workloads.workload_registry import workload_models

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "histories"
needs_shared = pytest.mark.skipif(
    not (SHARED / "MANIFEST.tsv").is_file(),
    reason=f"reference histories not found at {SHARED} (CI always has them)",
)


# EDN -------------------------------------------------------------------------------


def test_edn_scalars_and_collections() -> None:
    text = '{:a [1 -2 3N 1.5] :b nil, :c true :d false :e "x\\"y\\n" :f #{1 2} :g (:k) :h \\a}'
    assert loads(text) == {
        "a": [1, -2, 3, 1.5],
        "b": None,
        "c": True,
        "d": False,
        "e": 'x"y\n',
        "f": frozenset({1, 2}),
        "g": ["k"],
        "h": "a",
    }


def test_edn_comments_discard_and_tags() -> None:
    assert loads('; comment\n[1 #_ 2 #_[3 4] 5 #inst "2020-01-01"] ; tail') == [1, 5, "2020-01-01"]


def test_edn_collection_keys_become_tuples() -> None:
    assert loads("{[1 2] :x}") == {(1, 2): "x"}


def test_edn_elements_of_a_vector_with_lines() -> None:
    assert list(iter_elements("; head\n[{:a 1}\n {:b 2}]\n")) == [({"a": 1}, 2), ({"b": 2}, 3)]


def test_edn_one_value_per_line() -> None:
    assert list(iter_elements("{:a 1}\n\n{:b 2}\n")) == [({"a": 1}, 1), ({"b": 2}, 3)]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[{:a 1}", 1, "never closed"),
        ("\n{:a}", 2, "even number"),
        ("(1 2]", 1, "closed by"),
        ('\n\n"abc', 3, "unexpected character"),
        ("{:a 12abc}", 1, "not a number"),
        ("[1] 2", 1, "after the history vector"),
    ],
)
def test_edn_errors_name_the_line(text: str, line: int, words: str) -> None:
    with pytest.raises(EdnError) as e:
        list(iter_elements(text))
    assert e.value.line == line
    assert words in str(e.value)


def test_edn_dumps_round_trips_simple_values() -> None:
    value = {"type": "fail", "error": ["temporarily-unavailable", None], "n": 3}
    assert loads(dumps(value)) == value


# Readers ---------------------------------------------------------------------------


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_knossos_vector_history(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "h.edn",
        "[{:process 0, :type :invoke, :f :cas, :value [1 2]}\n"
        " {:process 0, :type :fail, :f :cas, :value [1 2], :error [:timeout nil]}\n"
        " {:process :nemesis, :type :info, :f :start, :value nil}]\n",
    )
    assert detect_format(p) == "edn"
    h, model = read_history(p)
    assert model == "cas-register"
    assert [(op.index, op.time) for op in h] == [(0, 0), (1, 1), (2, 2)]
    assert h[0].value == [1, 2] and h[1].type == "fail"
    assert h[1].error == "[:timeout nil]"
    assert h[2].process == "nemesis"


def test_history_edn_keeps_times(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "history.edn",
        "{:index 0, :time 100, :type :invoke, :process 0, :f :read, :value nil}\n"
        "{:index 1, :time 250, :type :ok, :process 0, :f :read, :value 3}\n",
    )
    h, _ = read_history(p)
    assert [op.time for op in h] == [100, 250]


def test_porcupine_kv(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "c01.txt",
        '{:process 0, :type :invoke, :f :append, :key "0", :value "x 0 0 y"}\n'
        '{:process 0, :type :ok, :f :append, :key "0", :value "x 0 0 y"}\n',
    )
    assert detect_format(p) == "porcupine-kv"
    h, model = read_history(p)
    assert model == "kv"
    assert h[0].key == "0" and h[0].f == "append" and h[0].value == "x 0 0 y"


def test_porcupine_etcd(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "etcd.log",
        "INFO  jepsen.util - 0\t:invoke\t:cas\t[1 2]\n"
        "INFO  jepsen.util - 0\t:fail\t:cas\t[1 2]\n"
        "INFO  jepsen.util - 1   :invoke :write  3\n"
        "INFO  jepsen.util - 1   :info   :write  :timed-out\n"
        "INFO  jepsen.util - 2\t:invoke\t:read\tnil\n"
        "INFO  jepsen.util - 2\t:ok\t:read\tnil\n",
    )
    assert detect_format(p) == "porcupine-etcd"
    h, model = read_history(p)
    assert model == "etcd"
    assert [op.type for op in h] == ["invoke", "fail", "invoke", "info", "invoke", "ok"]
    assert h[0].value == [1, 2] and h[1].type == "fail"
    assert h[3].value is None and h[3].error == "timed-out"
    assert h[5].value is None


def test_an_empty_etcd_log_is_no_history(tmp_path: Path) -> None:
    """Issue 29: porcupine's etcd_095.log (0 bytes, "the cluster failed to start") read
    as an empty history, checked valid with 0 ops."""
    path = write(tmp_path, "etcd_095.log", "")
    with pytest.raises(FormatError, match=r"etcd_095\.log: no ops in it; give a history"):
        read_history(path)


def test_jsonl_and_run_directory(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    w = HistoryWriter(run / "history.jsonl")
    w.write(Op(0, 10, 0, "invoke", "acquire", key="l"))
    w.write(Op(1, 20, 0, "ok", "acquire", key="l"))
    w.close()
    (run / "test.json").write_text(json.dumps({"workload": "lock"}))
    assert detect_format(run) == "jsonl"
    h, model = read_history(run, workload_models().get)
    assert model == "mutex"
    assert read_history(run)[1] == ""  # core knows no workload: the registry's table says
    assert [op.time for op in h] == [10, 20]
    (run / "test.json").write_text(json.dumps({"options": {"model": "kv"}}))
    assert read_history(run / "history.jsonl")[1] == "kv"
    (run / "test.json").unlink()
    assert read_history(run)[1] == ""


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("a.log", "INFO  jepsen.util - 0\t:invoke\t:read\tnil\ngarbage\n", ":2: not a jepsen.util"),
        ("b.log", "INFO  jepsen.util - 0\t:invoke\t:write\tzz\n", ":1: cannot read value"),
        ("c.log", "INFO  jepsen.util - 0\t:begin\t:read\tnil\n", ":1: unknown op type"),
        (
            "d.edn",
            "[{:process 0 :type :invoke :f :read}\n {:process 1 :f :read}]",
            ":2: op map without :type",
        ),
        ("e.edn", "[{:process 0 :type :started :f :read}]", "not one of"),
        ("f.edn", "[{:process 0 :type :invoke :f :read}\n 42]", ":2: 42 is not a map"),
        ("g.edn", "[{:process 0 :type :invoke\n :f :read]", "not EDN"),
        ("h.jsonl", '{"index": 0}\n{"index": 1, "time": 0}\n', ":1: not an op"),
        ("i.jsonl", '{"index":0,"time":0,"process":0,"type":"ok","f":"r"}\n{bad\n{"a":1}\n', ":2:"),
        ("j.dat", "hello world\n", "unrecognised history format"),
    ],
)
def test_malformed_input_raises_a_useful_format_error(
    tmp_path: Path, name: str, text: str, words: str
) -> None:
    p = write(tmp_path, name, text)
    with pytest.raises(FormatError) as e:
        read_history(p)
    message = str(e.value)
    assert words in message
    assert str(p) in message and "\n" not in message


def test_missing_file_and_directory_without_history(tmp_path: Path) -> None:
    with pytest.raises(FormatError, match="no such file"):
        read_history(tmp_path / "nope.jsonl")
    with pytest.raises(FormatError, match=r"without history\.jsonl"):
        read_history(tmp_path)


@needs_shared
def test_every_reference_history_reads() -> None:
    files = [p for p in SHARED.rglob("*") if p.suffix in (".log", ".edn", ".txt")]
    files = [p for p in files if "LICENSE" not in p.name]
    assert len(files) >= 160
    expected = {".log": "etcd", ".edn": "cas-register", ".txt": "kv"}
    for p in files:
        if p.name == "etcd_095.log":  # empty: no history
            continue
        h, model = read_history(p)
        assert model == expected[p.suffix], p
        h.pairs()  # pairs cleanly: no process invokes twice, no orphan completion
        assert len(h) > 0, p
