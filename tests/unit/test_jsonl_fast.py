"""The fast path of big JSONL histories (core/formats/jsonl_fast.py): the same ops as the
plain reader, and on any line it does not accept, the plain reader's own error."""

from __future__ import annotations

import importlib.util
import io
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from checkers.linear.simulate import simulate
from core.formats import FormatError, jsonl, jsonl_fast, read_file
from core.ops import Op

ROOT = Path(__file__).resolve().parents[2]

BAD_LINES = [
    '{"index": 99999999, "time": 1.5, "process": 0, "type": "ok", "f": "read"}',
    '{"index": 99999999, "time": 1, "process": 0, "type": "ok", "f": "read", "x": 1}',
    '{"index": 99999999, "time": 1, "process": 0, "type": "ok", "f": "read", "value": '
    "123456789012345678901234567890}",
    '{"index": 99999999, "time": 1, "process": 0, "type": "ok", "f": "read", "key": true}',
    '{"index": 3, "time": 1, "process": 0, "type": "ok", "f": "read"}',
    '{"index": 99999999, "time": 1, "process": 0, "type": "ok", "f": "read", "value": 1e999}',
    '{"index": 99999999, "time": 1, "process": 0, "type": "ok", "f": ""}',
    '{"index": 99999999, "time": 1, "process": 0, "type": "done", "f": "read"}',
    "[1, 2]",
    '{"index": 99999999, "time": 1, "process": 0, "type": "ok", "f": "read"',
]


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A history bigger than ``MIN_BYTES`` (so the fast path reads it), and its text."""
    ops = simulate("cas-register", 6000, processes=5, keys=3, p_info=0.05, seed=3)
    text = "".join(op.to_json() + "\n" for op in ops)
    assert len(text) > jsonl_fast.MIN_BYTES
    path = tmp_path_factory.mktemp("big") / "history.jsonl"
    path.write_text(text)
    return path, text


def plain(path: Path) -> object:
    """What the plain reader makes of ``path``: its ops, or its error."""
    saved = jsonl.MIN_BYTES
    jsonl.MIN_BYTES = 1 << 62
    try:
        return list(read_file(path).history)
    except FormatError as e:
        return str(e)
    finally:
        jsonl.MIN_BYTES = saved


def test_a_big_history_takes_the_fast_path_and_reads_the_same(big: tuple[Path, str]) -> None:
    path, text = big
    fast = jsonl_fast.read_ops(io.BytesIO(text.encode()), None, jsonl.MAX_INT)
    assert fast is not None and len(fast) > 10_000
    assert list(read_file(path).history) == fast == plain(path)


@pytest.mark.parametrize("bad", BAD_LINES)
def test_a_line_the_fast_path_refuses_gets_the_plain_readers_error(
    big: tuple[Path, str], tmp_path: Path, bad: str
) -> None:
    _, text = big
    path = tmp_path / "history.jsonl"
    path.write_text(text + bad + ("\n" if not bad.endswith('"read"') else ""))
    assert jsonl_fast.read_ops(io.BytesIO(path.read_bytes()), None, jsonl.MAX_INT) is None
    expected = plain(path)
    try:
        got: object = list(read_file(path).history)
    except FormatError as e:
        got = str(e)
    assert got == expected
    if bad.endswith('"read"'):  # a cut-short last line: left out, as the plain reader does
        assert read_file(path).notes and isinstance(got, list)
    else:
        assert isinstance(got, str) and f":{text.count(chr(10)) + 1}:" in got


def test_without_msgspec_every_file_takes_the_plain_path(
    big: tuple[Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path, text = big
    monkeypatch.setattr(jsonl_fast, "op_decoder", lambda: None)
    assert jsonl_fast.read_ops(io.BytesIO(text.encode()), None, jsonl.MAX_INT) is None
    assert list(read_file(path).history) == plain(path)


ODD_VALUES: list[object] = [
    None,
    True,
    "x",
    -(2**63),
    2**64 - 1,
    2**64,
    -(2**63) - 1,
    [1, 2],
    [2**64, 1],
    list(range(17)),
    {"a": [1]},
    {"a": 2**70},
    [[1]],
    1.5,
]
ODD_KEYS: list[object] = [None, "k", 3, 2**64 - 1, 2**64, -(2**63) - 1, True, 1.5, [1]]


@pytest.mark.skipif(
    importlib.util.find_spec("core.formats._scan") is None
    and os.environ.get("HARNESS_REQUIRE_COMPILED") != "1",
    reason="the C checks are not built here (scripts/compile_checker.py)",
)
def test_the_c_checks_agree_with_the_python_ones() -> None:
    """Every value and key the reader may meet, indices in and out of order, times under
    and over the bound: ``_scan.c`` says what ``check_lines`` says."""
    check, _ = jsonl_fast.line_checks()
    assert check is not jsonl_fast.check_lines  # the C one
    for value in ODD_VALUES:
        for key in ODD_KEYS:
            for index, time in ((5, 10), (2, 10), (5, 99)):
                lines = [Op(1, 1, 0, "ok", "read"), Op(index, time, 0, "ok", "read", value, key)]
                expected = jsonl_fast.check_lines(lines, 0, 50)
                assert check(lines, 0, 50) == expected, (value, key, index, time)


def _broken(ops: list[Op], rng: random.Random) -> list[Op]:
    """``ops`` with one change that may break the op semantics (or not: a swap of two
    ops of different processes, a time that stays after its invocation's)."""
    ops = list(ops)
    i = rng.randrange(len(ops))
    op = ops[i]
    kind = rng.choice(("f", "key", "time", "swap", "delete", "duplicate", "process", "type"))
    if kind == "f":
        ops[i] = op.with_(f=rng.choice(("read", "write", "cas", "zz")))
    elif kind == "key":
        ops[i] = op.with_(key=rng.choice((None, 0, 1, "0", 2**64 - 1)))
    elif kind == "time":
        ops[i] = op.with_(time=max(0, op.time - rng.randrange(3000)))
    elif kind == "swap":
        j = rng.randrange(len(ops))
        ops[i], ops[j] = ops[j], ops[i]
    elif kind == "delete":
        del ops[i]
    elif kind == "duplicate":
        ops.insert(rng.randrange(len(ops)), op)
    elif kind == "process":
        ops[i] = op.with_(process=rng.choice((0, 1, 7, "nemesis", "x")))
    else:
        ops[i] = op.with_(type=rng.choice(("invoke", "ok", "fail", "info")))
    return ops


@pytest.mark.skipif(
    importlib.util.find_spec("core.formats._scan") is None
    and os.environ.get("HARNESS_REQUIRE_COMPILED") != "1",
    reason="the C checks are not built here (scripts/compile_checker.py)",
)
def test_the_c_pairing_check_agrees_with_the_python_one() -> None:
    """Issue 29: ``_scan.c``'s ``first_break`` finds the op ``core.history.first_break``
    finds, on histories with one change of every kind (f, key, time, order, process)."""
    _, find = jsonl_fast.line_checks()
    assert find is not jsonl_fast.break_at  # the C one
    rng = random.Random(29)
    broken = 0
    for seed in range(300):
        ops = list(simulate("cas-register", 30, processes=4, keys=2, p_info=0.1, seed=seed))
        assert find(ops) == jsonl_fast.break_at(ops) == -1
        bad = _broken(ops, rng)
        assert find(bad) == jsonl_fast.break_at(bad), seed
        broken += jsonl_fast.break_at(bad) >= 0
    assert broken > 150


@pytest.mark.skipif(
    importlib.util.find_spec("core.formats._scan") is None
    and os.environ.get("HARNESS_REQUIRE_COMPILED") != "1",
    reason="the C checks are not built here (scripts/compile_checker.py)",
)
def test_the_c_pairing_check_holds_the_nemesis_to_one_fault_at_a_time() -> None:
    """The nemesis invoking again while its fault is open (the fuzzer's find: it crashed
    the stats and faults checkers) breaks the op semantics in C as in Python; its lone
    info, or a fault never completed at the end, does not."""
    _, find = jsonl_fast.line_checks()

    def ops(*kinds: tuple[object, str]) -> list[Op]:
        return [Op(i, i, p, t, "f", None) for i, (p, t) in enumerate(kinds)]  # type: ignore[arg-type]

    twice = ops(("nemesis", "invoke"), (0, "invoke"), ("nemesis", "invoke"), (0, "ok"))
    assert find(twice) == jsonl_fast.break_at(twice) == 2
    fine = ops(
        ("nemesis", "info"),
        ("nemesis", "invoke"),
        ("nemesis", "info"),
        (0, "invoke"),
        ("nemesis", "info"),
        ("nemesis", "invoke"),
        (0, "ok"),
    )
    assert find(fine) == jsonl_fast.break_at(fine) == -1


def test_a_big_history_that_breaks_the_op_semantics_gets_the_plain_readers_error(
    big: tuple[Path, str], tmp_path: Path
) -> None:
    """The fast path gives up on a big file whose ops break the op semantics: the plain
    reader names the line."""
    _, text = big
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if '"type":"ok","f":"write"' in line)
    lines[at] = lines[at].replace('"f":"write"', '"f":"read"')
    path = tmp_path / "history.jsonl"
    path.write_text("".join(lines))
    assert jsonl_fast.read_ops(io.BytesIO(path.read_bytes()), None, jsonl.MAX_INT) is None
    with pytest.raises(FormatError, match=rf":{at + 1}: process \d+'s ok 'read' completes"):
        read_file(path)


def test_ops_decode_with_their_constraints_when_msgspec_is_imported_alone() -> None:
    """``core.ops`` imports msgspec without ``typing_extensions`` (for start-up): in a fresh
    process the decoder still checks every constraint of ``Op``'s fields, and a later
    import of ``typing_extensions`` still works."""
    code = """if True:
        import sys
        from core.ops import Op
        import msgspec
        assert "typing_extensions" not in sys.modules
        decode = msgspec.json.Decoder(Op).decode
        line = '{"index": %s, "time": 2, "process": %s, "type": "%s", "f": "%s"}'
        assert decode(line % (1, 0, "ok", "read")) == Op(1, 2, 0, "ok", "read")
        bad = [(-1, 0, "ok", "read"), (2**62, 0, "ok", "read"), (1, '""', "ok", "read"),
               (1, 0, "done", "read"), (1, 0, "ok", "")]
        for fields in bad:
            try:
                decode(line % fields)
            except msgspec.ValidationError:
                continue
            raise SystemExit(f"accepted {fields}")
        import typing_extensions
        print("ok")
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "ok", out.stderr
