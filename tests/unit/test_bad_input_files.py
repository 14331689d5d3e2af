"""Issue 16's malformed history files: each is one line naming the file and line, exit 254,
never a traceback and never a verdict; several files each get their own line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from test_cli import run

from harness.cli import EXIT_BAD_ARGS

OP = '{"index":%s,"time":%s,"process":%s,"type":"invoke","f":"read","value":%s}\n'


def op_line(index: str = "0", time: str = "0", process: str = "0", value: str = "null") -> str:
    return OP % (index, time, process, value)


# (file name, content, words the one-line error holds)
BAD: list[tuple[str, bytes, str]] = [
    (
        "deep.edn",
        b"[{:process 0 :type :invoke :f :read :value " + b"[" * 3000 + b"]" * 3000 + b"}]",
        ":1: not EDN (collections nested more than 40 deep)",
    ),
    (
        "deep.log",
        b"INFO  jepsen.util - 0\t:invoke\t:write\t" + b"[" * 5000 + b"]" * 5000,
        ":1: cannot read value",
    ),
    ("deep.jsonl", op_line(value="[" * 5000 + "]" * 5000).encode(), ":1: nested too deeply"),
    ("deep2.jsonl", op_line(value="[" * 40 + "]" * 40).encode(), "nested more than 32 deep"),
    ("digits.jsonl", op_line(value="1" * 5000).encode(), ":1: an integer of thousands of digits"),
    (
        "digits.edn",
        b"[{:process 0 :type :invoke :f :read :value " + b"7" * 5000 + b"}]",
        ":1: not EDN (an integer of 5000 digits",
    ),
    (
        "digits.log",
        b"INFO  jepsen.util - " + b"9" * 5000 + b"\t:invoke\t:read\tnil\n",
        ":1: " + "9" * 20 + "... is beyond 64 bits",
    ),
    ("big.jsonl", op_line(value=str(2**64)).encode(), ":1: value holds an integer beyond 64"),
    ("t400.jsonl", op_line(time="1e400").encode(), ":1: time inf is not an integer"),
    ("t41.jsonl", op_line(time="1" + "0" * 41).encode(), ":1: time <an integer of 137 bits>"),
    ("t308.jsonl", op_line(time="1e308").encode(), ":1: time 1e+308 is not an integer"),
    ("t15.jsonl", op_line(time="1.5").encode(), ":1: time 1.5 is not an integer"),
    ("i15.jsonl", op_line(index="1.5").encode(), ":1: index 1.5 is not an integer"),
    ("i308.jsonl", op_line(index="1e308").encode(), ":1: index 1e+308 is not an integer"),
    ("tneg.jsonl", op_line(time="-5").encode(), ":1: time -5 is not an integer from 0"),
    ("p.jsonl", op_line(process="[1]").encode(), ":1: process [1] is neither an integer"),
    ("pbool.jsonl", op_line(process="true").encode(), ":1: process True is neither"),
    ("nan.jsonl", op_line(value="NaN").encode(), ":1: not JSON that can be read (NaN"),
    ("inf.jsonl", op_line(value="1e999").encode(), ":1: value holds a number that is not finite"),
    (
        "order.jsonl",
        (op_line("1") + op_line("1", process="1")).encode(),
        ":2: index 1 does not follow index 1",
    ),
    (
        "key.edn",
        b"[{:process 0 :type :invoke :f :read :value nil :key [1 2]}]",
        ":1: key [1, 2] is not an integer (64 bits) or a string",
    ),
    (
        "key.txt",
        b'{:process 0, :type :invoke, :f :put, :key [1 2], :value "x"}\n',
        ":1: key [1, 2] is not an integer",
    ),
    ("p.edn", b"[{:process [1] :type :invoke :f :read :value nil}]", ":1: process [1] is"),
    ("f.edn", b"[{:process 0 :type :invoke :f 3 :value nil}]", ":1: f 3 is not a non-empty name"),
    ("tm.edn", b"[{:process 0 :type :invoke :f :read :time 1.5}]", ":1: time 1.5 is not"),
    (
        "tmiss.edn",
        b"[{:process 0 :type :invoke :f :read :time 1}\n {:process 0 :type :ok :f :read}]",
        ":2: an op without :time, where others have one",
    ),
    ("ratio.edn", b"[{:process 0 :type :invoke :f :read :value 1/0}]", "not a ratio"),
    ("esc.edn", b'[{:process 0 :type :invoke :f :read :value "\\u12"}]', "not a unicode escape"),
    (
        "surrogate.edn",
        b'[{:process 0 :type :invoke :f :read :value "\\ud800"}]',
        "half a character",
    ),
    (
        "utf8.edn",
        b'[{:process 0 :type :invoke :f :read :value "\xff\xfe"}]',
        ":1: not UTF-8 (byte 0xff",
    ),
    ("utf8.log", b"INFO  jepsen.util - 0\t:invoke\t:read\tnil\n\xc3(\n", ":2: not UTF-8"),
    (
        "utf8.jsonl",
        op_line().encode() + b'{"index":1,"f":"\xe9"}\n' + op_line("2").encode(),
        ":2: not UTF-8",
    ),
    (
        "mid.jsonl",
        (op_line() + '{"index":1,"ti\n' + op_line("2")).encode(),
        ":2: not a JSON object",
    ),
    ("lastnl.jsonl", (op_line() + '{"index":1,"ti\n').encode(), ":2: not a JSON object"),
    ("junk.jsonl", (op_line() + "garbage").encode(), ":2: not a JSON object"),
]


@pytest.mark.parametrize(("name", "content", "words"), BAD, ids=[b[0] for b in BAD])
def test_a_malformed_file_is_one_line_and_254(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, content: bytes, words: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    code, out, err = run(capsys, "check", "--model", "register", str(path))
    assert code == EXIT_BAD_ARGS, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"harness: {path}:"), err
    assert words in lines[0]
    assert "Traceback" not in err + out and "valid (" not in out


def test_thirty_random_bytes_inside_a_kv_op_are_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 16: garbage inside an op map of a porcupine kv file checked valid."""
    good = '{:process 0, :type :invoke, :f :get, :key "1", :value nil}\n'
    cases = [
        bytes(range(200, 230)),  # not UTF-8
        b"abc 12 :foo 1 :bar 2 xyz 77 !",  # printable: an even number of extra forms
        b":debug 1 :extra [1 2] :more 30",  # keywords, but not a kv op's
    ]
    for i, junk in enumerate(cases):
        path = tmp_path / f"c{i}.txt"
        text = good.encode() + b"{:process 1, :type :invoke, " + junk + b' :f :get, :key "1"}\n'
        path.write_bytes(text)
        code, out, err = run(capsys, "check", str(path))
        assert code == EXIT_BAD_ARGS and f"{path}:2:" in err and "Traceback" not in err, err
        assert "valid" not in out.splitlines()[0] if out else True


def test_a_truncated_last_line_of_our_jsonl_is_left_out_and_said(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "history.jsonl"
    done = op_line() + op_line("1", process="1")
    for tail in ('{"index":2,"ti', '{"index":2,"time":3,"process":tr', '{"f":"\xc3'):
        path.write_bytes(
            done.encode() + tail.encode("utf-8", "surrogateescape")[:-1]
            if tail.endswith("\xc3")
            else (done + tail).encode()
        )
        code, out, err = run(capsys, "check", "--model", "register", str(path))
        assert code == 0, err
        assert f"note: {path}:3: the last line is cut short" in out and "2 ops" in out


def test_several_files_each_get_their_line_and_254(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 16: `check ok.txt missing bad.txt` stopped at the missing file."""
    ok = tmp_path / "ok.txt"
    ok.write_text(
        '{:process 0, :type :invoke, :f :get, :key "1", :value nil}\n'
        '{:process 0, :type :ok, :f :get, :key "1", :value ""}\n'
    )
    bad = tmp_path / "bad.txt"
    bad.write_text("{:process 0, :type :invoke, :f :get, :key [1], :value nil}\n")
    missing = tmp_path / "missing"
    code, out, err = run(capsys, "check", str(ok), str(missing), str(bad))
    assert code == EXIT_BAD_ARGS
    assert out.splitlines()[0].startswith(f"{ok}: valid (")
    assert "2 not checked (bad input)" in out
    assert err.splitlines() == [
        f"harness: {missing}: no such file or directory; check the path",
        f"harness: {bad}:1: key [1] is not an integer (64 bits) or a string; expected one op "
        "map per form, like {:process 0, :type :invoke, :f :read, :value nil}",
    ]
    code, out, _ = run(capsys, "check", "--json", str(ok), str(bad))
    assert code == EXIT_BAD_ARGS
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["valid"] for r in rows] == [True, None] and "key [1]" in rows[1]["error"]


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "1e309", "x"])
def test_check_time_limit_must_be_positive_and_finite(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(op_line())
    code, _, err = run(capsys, "check", "--model", "register", "--time-limit", value, str(path))
    assert code == EXIT_BAD_ARGS and "--time-limit" in err and "Traceback" not in err


@pytest.mark.parametrize("value", ["0", "-1G", "nan", "1k", "lots"])
def test_check_memory_limit_must_be_a_sane_size(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(op_line())
    code, _, err = run(capsys, "check", "--memory-limit", value, str(path))
    assert code == EXIT_BAD_ARGS and "--memory-limit" in err and "Traceback" not in err


def test_check_model_bogus_is_refused_on_files_and_run_dirs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "history.jsonl").write_text(op_line())
    for target in (tmp_path, tmp_path / "history.jsonl"):
        code, out, err = run(capsys, "check", "--model", "bogus", str(target))
        assert code == EXIT_BAD_ARGS and not out
        assert err.strip() == (
            "harness: unknown model 'bogus': --model takes one of register, "
            "cas-register, etcd, kv, mutex, multi-register"
        )


def test_special_files_passed_directly_are_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 16: a FIFO passed directly was reported as "no such file"."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO (named pipe)"), (Path("/dev/zero"), "a character device")):
        code, _, err = run(capsys, "check", "--model", "register", str(path))
        assert code == EXIT_BAD_ARGS
        assert err.strip() == f"harness: {path}: {kind}, not a regular file; give a history file"


def test_a_field_an_op_does_not_have_is_garbage_in_our_jsonl(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(op_line() + op_line("1").replace('"f"', '"x7":1,"f"'))
    code, _, err = run(capsys, "check", "--model", "register", str(path))
    assert code == EXIT_BAD_ARGS and f"{path}:2: an op with a field 'x7' ops do not have" in err
