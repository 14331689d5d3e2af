"""Issue 29: verdicts on things that are not histories. Each file below is well formed op
by op but no history (a completion of another f than its invocation's, or timed before it,
a value of a type the model does not hold, a kv op without its key, no ops at all): each
is one line naming the file, the line and what to do, exit 254, never a verdict. Exit 2
is kept for what the budget could not decide."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_cli import run

from core.store import HISTORY_FILE
from harness.cli import EXIT_BAD_ARGS
from tests.support.synthetic import cas_register_run

OP = '{"index":%d,"time":%d,"process":%s,"type":"%s","f":"%s","value":%s%s}\n'


def jsonl(*ops: tuple[object, ...]) -> str:
    """JSONL ops from (process, type, f, value[, time[, key]]) tuples, indexed in order."""
    out = ""
    for i, o in enumerate(ops):
        process, type_, f, value = o[:4]
        time = o[4] if len(o) > 4 else 10 * (i + 1)
        key = f',"key":{json.dumps(o[5])}' if len(o) > 5 else ""
        out += OP % (i, time, json.dumps(process), type_, f, json.dumps(value), key)
    return out


def edn(*maps: str) -> str:
    return "[" + "\n ".join("{" + m + "}" for m in maps) + "]\n"


W_INV = ":process 0, :type :invoke, :f :write, :value 1"
F_FIX = "a completion must repeat its invocation's f"
T_FIX = "a completion must come no earlier than its invocation"
REGISTER = (
    "(it holds nil, booleans, numbers and strings); choose the model that matches the history"
)
EMPTY = "no ops in it; give a history with client operations"

# (file name, content, --model or "", the one-line error after "harness: PATH")
CASES: list[tuple[str, str, str, str]] = [
    (
        "f.jsonl",
        jsonl((0, "invoke", "write", 1), (0, "ok", "read", 1)),
        "register",
        f":2: process 0's ok 'read' completes its invocation 'write' at line 1; {F_FIX}",
    ),
    (
        "f.edn",
        edn(W_INV, ":process 0, :type :ok, :f :read, :value 1"),
        "",
        f":2: process 0's ok 'read' completes its invocation 'write' at line 1; {F_FIX}",
    ),
    (
        "f.log",
        "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:read\t1\n",
        "",
        f":2: process 0's ok 'read' completes its invocation 'write' at line 1; {F_FIX}",
    ),
    (
        "f.txt",
        '{:process 0, :type :invoke, :f :put, :key "1", :value "x"}\n'
        '{:process 0, :type :ok, :f :get, :key "1", :value "x"}\n',
        "",
        f":2: process 0's ok 'get' completes its invocation 'put' at line 1; {F_FIX}",
    ),
    (
        "early.jsonl",
        jsonl((0, "invoke", "write", 1, 50), (0, "ok", "write", 1, 20)),
        "register",
        f":2: process 0's ok at time 20 comes before its invocation at line 1 (time 50); {T_FIX}",
    ),
    (
        "early.edn",
        edn(W_INV + ", :time 50", ":process 0, :type :ok, :f :write, :value 1, :time 20"),
        "",
        f":2: process 0's ok at time 20 comes before its invocation at line 1 (time 50); {T_FIX}",
    ),
    (
        "key.jsonl",
        jsonl((0, "invoke", "write", 1, 10, "a"), (0, "ok", "write", 1, 20, "b")),
        "register",
        ":2: process 0's ok has key 'b', its invocation at line 1 'a'; a completion must "
        "repeat its invocation's key",
    ),
    (
        "map.edn",
        edn(
            ":process 0, :type :invoke, :f :read",
            ":process 0, :type :ok, :f :read, :value {:a 1}",
        ),
        "",
        f":2: op 1 (process 0): a read returned a map {{'a': 1}}, which the cas-register model "
        f"does not hold {REGISTER}",
    ),
    (
        "map.jsonl",
        jsonl((0, "invoke", "read", None), (0, "ok", "read", {"a": 1})),
        "register",
        f":2: op 1 (process 0): a read returned a map {{'a': 1}}, which the register model "
        f"does not hold {REGISTER}",
    ),
    (
        "list.log",
        "INFO  jepsen.util - 0\t:invoke\t:read\tnil\nINFO  jepsen.util - 0\t:ok\t:read\t[1 2]\n",
        "",
        f":2: op 1 (process 0): a read returned a list [1, 2], which the etcd model does not "
        f"hold {REGISTER}",
    ),
    (
        "rewrite.edn",
        edn(W_INV, ":process 0, :type :ok, :f :write, :value 2"),
        "",
        ":2: op 1 (process 0): the ok of write 1 says it wrote 2, which the cas-register "
        "model cannot read; a completion repeats the value its invocation wrote",
    ),
    (
        "number.txt",
        '{:process 0, :type :invoke, :f :put, :key "1", :value 5}\n'
        '{:process 0, :type :ok, :f :put, :key "1", :value 5}\n',
        "",
        ":1: op 0 (process 0): a put of an integer 5, which the kv model does not hold (it "
        "holds strings (a get may return nil: the empty string)); choose the model that "
        "matches the history",
    ),
    (
        "nokey.txt",
        '{:process 0, :type :invoke, :f :put, :key "1", :value "x"}\n'
        '{:process 0, :type :ok, :f :put, :key "1", :value "x"}\n'
        "{:process 1, :type :invoke, :f :get, :value nil}\n"
        '{:process 1, :type :ok, :f :get, :value "y"}\n',
        "",
        ":3: a kv op without :key; every op of a kv log names the key it is on",
    ),
    # Malformed pairings: were "unknown: malformed history", exit 2.
    (
        "orphan.edn",
        edn(W_INV, ":process 1, :type :ok, :f :write, :value 1"),
        "",
        ":2: a completion (ok) of process 1, which has no open invocation; a completion must "
        "follow its process's invocation",
    ),
    (
        "twice.jsonl",
        jsonl((0, "invoke", "write", 1), (0, "invoke", "write", 2), (0, "ok", "write", 2)),
        "register",
        ":2: process 0 invokes again while its op at line 1 is still open; a process must "
        "complete its op before it invokes again",
    ),
    (
        "nemesis-twice.jsonl",
        jsonl(
            ("nemesis", "invoke", "start-partition", None),
            (0, "invoke", "write", 1),
            ("nemesis", "invoke", "stop-partition", None),
            (0, "ok", "write", 1),
        ),
        "register",
        ":3: process nemesis invokes again while its op at line 1 is still open; a process "
        "must complete its op before it invokes again",
    ),
    (
        "retired.log",
        "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:info\t:write\t"
        ":timed-out\n\nINFO  jepsen.util - 0\t:invoke\t:read\tnil\n",
        "",
        ":4: process 0 invokes again after an earlier op of it ended 'info' (at line 1); an "
        "op that ended 'info' retires its process: later ops need another process",
    ),
    # No ops: an empty file, [], comments or blank lines alone, in each format.
    *[
        (name, text, "register" if name.endswith(".jsonl") else "", f": {EMPTY}")
        for name, text in (
            ("empty.jsonl", ""),
            ("blank.jsonl", "\n  \n"),
            ("empty.edn", ""),
            ("brackets.edn", "[]\n"),
            ("comments.edn", "; nothing here\n;; at all\n"),
            ("empty.log", ""),
            ("blank.log", "\n\n"),
            ("empty.txt", ""),
            ("brackets.txt", "[]"),
            ("comments.txt", "; nothing\n"),
        )
    ],
    (
        "nemesis.edn",
        edn(
            ":process :nemesis, :type :info, :f :start",
            ":process :nemesis, :type :info, :f :stop",
        ),
        "",
        ": only the nemesis's ops in it; give a history with client operations",
    ),
]


@pytest.mark.parametrize(("name", "content", "model", "said"), CASES, ids=[c[0] for c in CASES])
def test_a_file_that_is_no_history_is_one_line_and_254(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    name: str,
    content: str,
    model: str,
    said: str,
) -> None:
    path = tmp_path / name
    path.write_text(content)
    code, out, err = run(capsys, "check", *(["--model", model] if model else []), str(path))
    assert (code, err) == (EXIT_BAD_ARGS, f"harness: {path}{said}\n"), out
    assert "1 not checked (bad input)" in out and "valid (" not in out


def run_with(tmp_path: Path, change: dict[str, object]) -> tuple[Path, int, int]:
    """A cas-register run whose first ok read gets ``change``: the run, the read's line
    and its invocation's."""
    run_dir = cas_register_run(tmp_path / "run", ops=60, faults=0)
    path = run_dir / HISTORY_FILE
    ops = [json.loads(line) for line in path.read_text().splitlines()]
    at = next(i for i, op in enumerate(ops) if (op["type"], op["f"]) == ("ok", "read"))
    invoked = max(
        i
        for i, op in enumerate(ops[:at])
        if (op["process"], op["type"]) == (ops[at]["process"], "invoke")
    )
    ops[at].update(change)
    path.write_text("".join(json.dumps(op) + "\n" for op in ops))
    return run_dir, at + 1, invoked + 1


def test_a_run_whose_read_returned_a_map_is_one_line_and_254(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A run directory's history is read as strictly: its checkers draw no verdict from a
    read the register model cannot hold (it was an invalid run)."""
    run_dir, line, _ = run_with(tmp_path, {"value": {"a": 1}})
    code, out, err = run(capsys, "check", str(run_dir), "--out", str(tmp_path / "out"))
    assert code == EXIT_BAD_ARGS, out
    assert err.startswith(f"harness: {run_dir / HISTORY_FILE}:{line}: op ") and err.count("\n") == 1
    assert "a read returned a map {'a': 1}, which the register model does not hold" in err


def test_a_run_whose_completion_changed_its_f_is_one_line_and_254(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_dir, line, invoked = run_with(tmp_path, {"f": "write"})
    code, out, err = run(capsys, "check", str(run_dir), "--out", str(tmp_path / "out"))
    assert code == EXIT_BAD_ARGS, out
    assert err.startswith(f"harness: {run_dir / HISTORY_FILE}:{line}: process ")
    assert err.endswith(f"'write' completes its invocation 'read' at line {invoked}; {F_FIX}\n")


def test_a_real_history_still_checks(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """What the rules above must not refuse: a run's ops still open at its end, info
    completions, the nemesis's ops, and a Knossos history with a write invoked with nil."""
    path = tmp_path / "h.edn"
    path.write_text(
        edn(
            ":process :nemesis, :type :info, :f :start",
            ":process 0, :type :invoke, :f :write, :value nil",
            ":process 1, :type :invoke, :f :read, :value nil",
            ":process 0, :type :ok, :f :write, :value 3",
            ':process :nemesis, :type :info, :f :start, :value "cut"',
            ":process 1, :type :info, :f :read, :value nil",
            ":process 2, :type :invoke, :f :cas, :value [3 4]",
        )
    )
    code, out, err = run(capsys, "check", str(path))
    assert (code, err) == (0, ""), out
    assert out.startswith(f"{path}: valid (")


def test_a_run_whose_nemesis_invoked_twice_is_one_line_and_254(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The fuzzer's find (a line swap in a run's history): the nemesis invoking again
    while its fault is open crashed the stats and faults checkers ("the checker crashed:
    MalformedHistory"), and the run was unknown, not refused."""
    run_dir = cas_register_run(tmp_path / "run", ops=60, faults=1)
    path = run_dir / HISTORY_FILE
    lines = path.read_text().splitlines(keepends=True)
    nemesis = [i for i, line in enumerate(lines) if '"nemesis"' in line]
    first, second = nemesis[0], nemesis[1]  # a start's invocation, then its completion
    assert '"invoke"' in lines[first] and '"invoke"' not in lines[second]
    lines[second] = (
        lines[second]
        .replace('"type":"ok"', '"type":"invoke"')
        .replace('"type": "ok"', '"type": "invoke"')
    )
    assert '"invoke"' in lines[second]
    path.write_text("".join(lines))
    code, out, err = run(capsys, "check", str(run_dir), "--out", str(tmp_path / "out"))
    assert code == EXIT_BAD_ARGS, out
    assert err == (
        f"harness: {path}:{second + 1}: process nemesis invokes again while its op at line "
        f"{first + 1} is still open; a process must complete its op before it invokes again\n"
    )
