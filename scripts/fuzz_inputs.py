#!/usr/bin/env python3
"""Fuzz the history readers and ``harness check`` with mutated inputs (issue 16).

Seeds: a small history of each format built in (JSONL, Knossos EDN, porcupine etcd log
and kv), histories from ``scripts/gen_history.py`` (register and kv), the reference
histories in ``../shared/histories`` when they are there, synthetic run directories
(``tests.support.synthetic``: a cas-register run and a lock run) and any run directory
given with ``--run-dir`` (say one of ``harness run --target sim --time-limit 5``).

Each input is one seed with one mutation: bad bytes, random bytes inside an op, garbage
tokens, a field no op has, truncation, a field of the wrong type, a huge number, deep nesting, lines
duplicated, swapped or deleted; for run directories also a record replaced by a FIFO, a
device or a directory, and a link (to a file outside the run, dangling, or to a folder
outside) planted at a record or at a name ``check`` writes (results.json, its old
temporary name, report.html), which is then checked with its results and report written
into the run directory itself. Semantic mutations (issue 29) keep every op well formed and
make the file no history: a completion of another f than its invocation's, a write
completed with another value, a completion timed before its invocation, a value of a type
the model does not hold (a register read returning a map), an op without the key its pair
has (or, in a kv log, without a key), a file without ops (empty, ``[]``, comments alone).
A mutation says whether its result can still be a history (``must_fail`` False: garbage
tokens, truncations, line shuffles) or cannot. Each input is
checked in-process (``harness.checkcmd.check_path``, which calls the readers), with a
per-input time limit and an alarm at ``--hang`` seconds, and classified:

- ``error``: a one-line error (what bad input must get);
- ``verdict``: a verdict (valid, invalid or unknown) on an input that may be a history;
- findings: ``verdict-on-bad-input`` (a verdict where the input cannot be a history),
  ``malformed-verdict`` (an unknown verdict for a malformed history: bad input is an
  error), ``traceback`` (any other exception), ``hang`` (no answer within ``--hang`` s),
  ``long-message`` (an error of more than one line), ``write-outside`` (a file outside
  the run directory changed: a write through a planted link).

Findings are written to ``--findings DIR`` (default: a temporary directory) to reproduce.
Exit 1 if there was any finding.

    .venv/bin/python scripts/fuzz_inputs.py --inputs 100000 --seed 1
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Final

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.errors import HarnessError  # noqa: E402
from harness.checkcmd import check_path  # noqa: E402

SHARED: Final = ROOT.parent / "shared" / "histories"
FINDINGS: Final = (
    "verdict-on-bad-input",
    "malformed-verdict",
    "traceback",
    "hang",
    "long-message",
    "write-outside",
)
RECORDS: Final = ("history.jsonl", "test.json", "events.jsonl", "resource.jsonl")
WRITTEN: Final = ("results.json", "results.json.tmp", "report.html")
"""Names ``check`` writes in a run directory (or once did: the temporary name)."""
LINKS: Final = {"file": "victim.txt", "dangling": "nothing", "folder": "folder"}
"""A planted link's kind and what it points at, in the tree outside the run."""
BUILT_IN: Final = {
    "tiny.jsonl": '{"index":0,"time":10,"process":0,"type":"invoke","f":"write","value":1,'
    '"key":3}\n{"index":1,"time":20,"process":0,"type":"ok","f":"write","value":1,"key":3}\n'
    '{"index":2,"time":30,"process":1,"type":"invoke","f":"read","value":null,"key":3}\n'
    '{"index":3,"time":40,"process":1,"type":"ok","f":"read","value":1,"key":3}\n',
    "tiny.edn": "[{:process 0, :type :invoke, :f :write, :value 1}\n"
    " {:process 0, :type :ok, :f :write, :value 1}\n"
    " {:process 1, :type :invoke, :f :cas, :value [1 2]}\n"
    " {:process 1, :type :ok, :f :cas, :value [1 2]}\n"
    " {:process 0, :type :invoke, :f :read, :value nil}\n"
    " {:process 0, :type :ok, :f :read, :value 2}]\n",
    "tiny.log": "INFO  jepsen.util - 0\t:invoke\t:write\t1\nINFO  jepsen.util - 0\t:ok\t:write\t1\n"
    "INFO  jepsen.util - 1\t:invoke\t:cas\t[1 2]\nINFO  jepsen.util - 1\t:ok\t:cas\t[1 2]\n"
    "INFO  jepsen.util - 2\t:invoke\t:read\tnil\nINFO  jepsen.util - 2\t:ok\t:read\t2\n",
    "tiny.txt": '{:process 0, :type :invoke, :f :put, :key "1", :value "x"}\n'
    '{:process 0, :type :ok, :f :put, :key "1", :value "x"}\n'
    '{:process 1, :type :invoke, :f :append, :key "1", :value "y"}\n'
    '{:process 1, :type :ok, :f :append, :key "1", :value "y"}\n'
    '{:process 0, :type :invoke, :f :get, :key "1", :value nil}\n'
    '{:process 0, :type :ok, :f :get, :key "1", :value "xy"}\n',
}


@dataclass(frozen=True)
class Seed:
    """A valid input: a history file (``fmt`` its format) or a run directory."""

    name: str
    path: Path
    fmt: str  # jsonl, edn, etcd, kv, dir


@dataclass(frozen=True)
class Mutant:
    """One input: ``data`` replaces the seed's file (for a run directory, its ``record``),
    or ``special`` names what replaces the record (fifo, device, directory), or ``link``
    the kind of link planted at ``record`` (``LINKS``)."""

    seed: Seed
    mutation: str
    must_fail: bool
    data: bytes = b""
    record: str = ""
    special: str = ""
    link: str = ""


# ---- mutations of a file's bytes -------------------------------------------------------

Mutation = Callable[[random.Random, bytes, str], "tuple[bytes, bool] | None"]
_BAD_UTF8: Final = (b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80")


def bad_utf8(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    end = data.rfind(b"\n")
    if end <= 0:
        return None
    at = rng.randrange(end)
    return data[:at] + rng.choice(_BAD_UTF8) + data[at:], True


def random_bytes(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """Issue 16's 30 random bytes inside an op (one at least is not UTF-8)."""
    opens = [m.start() for m in re.finditer(rb"\{", data)]
    if not opens:
        return None
    at = rng.choice(opens) + 1
    junk = bytearray(rng.randbytes(30))
    junk[rng.randrange(30)] = 0xFF
    return data[:at] + bytes(junk) + data[at:], True


def garbage_tokens(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    opens = [m.start() for m in re.finditer(rb"\{", data)]
    if not opens:
        return None
    at = rng.choice(opens) + 1
    tokens = [":x", "1", "abc", '"s"', "nil", "[1 2]", "#_", "{", "}", ",", ":debug 1", "\\a"]
    junk = " ".join(rng.choice(tokens) for _ in range(rng.randint(1, 6))) + " "
    return data[:at] + junk.encode() + data[at:], False


def extra_field(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A field no op has: garbage in our JSONL and in a kv log (a Jepsen EDN op may carry
    keys of its own: there it may still be a history)."""
    opens = [m.end() for m in re.finditer(rb"(?m)^\{", data)]  # an op's, not a value's
    if not opens or fmt in ("etcd", "json"):
        return None
    at = rng.choice(opens)
    new = b'"zz":1,' if fmt in ("jsonl", "dir") else b":debug 1, "
    return data[:at] + new + data[at:], fmt != "edn"


def truncate(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    if len(data) < 2:
        return None
    cut = rng.randrange(1, len(data) - 1)
    # A Knossos vector cut after its opening bracket and before its closing one, or a
    # JSON object cut (test.json),
    # cannot be read; anything else may still be a (shorter) history.
    vector = data.find(b"[")
    must = (fmt == "edn" and data.rstrip().endswith(b"]") and 0 <= vector < cut) or fmt == "json"
    return data[:cut], must and cut < len(data.rstrip())


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def shuffle_lines(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    lines = _lines(data)
    body = [i for i, line in enumerate(lines) if line.strip()]
    if len(body) < 2:
        return None
    i, j = rng.sample(body, 2)
    kind = rng.choice(("swap", "duplicate", "delete"))
    if kind == "swap":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "duplicate":
        lines.insert(j, lines[i])
    else:
        del lines[i]
    return b"\n".join(lines), False


# Values of the wrong type for each field, per syntax (none of them may be read as valid).
_JSON_BAD: Final = {
    "index": ["1.5", '"1"', "null", "[1]", "true", "-1", "{}"],
    "time": ["1.5", '"t"', "null", "[1]", "false", "-5", "{}"],
    "process": ["[1]", "1.5", "null", "{}", "true", "-1", '""'],
    "type": ['"bogus"', "1", "null", "[]"],
    "f": ["1", "null", "[]", '""', "{}"],
    "key": ["[1,2]", "{}", "1.5", "true", "[[1]]"],
}
_EDN_BAD: Final = {
    "process": ["[1]", "1.5", "nil", "{}", "true", "-1", "foo"],
    "type": [":bogus", "1", "nil", "[]", "invoke"],
    "f": ["1", "nil", "[]", "read", '""'],
    "key": ["[1 2]", "{}", "1.5", "true", "#{1}"],
}
_ETCD_BAD: Final = {
    1: ["1.5", "x", "-1", "[1]"],
    2: [":bogus", ":1", "ok"],
    4: ["[[1 2]]", ":x", "1.5", "zz", "[1 [2]]", "#{}"],
}
_HUGE: Final = ("1" + "0" * 41, "1e308", "1e400", "-1e400", "7" * 5000, str(2**64))
_VALUE_HUGE: Final = ("1" + "0" * 41, "1e400", "-1e400", "7" * 5000, str(2**64))
_DEPTHS: Final = (33, 41, 1000, 5000, 100_000)


_ETCD_LINE: Final = re.compile(
    rb"(?m)^INFO\s+jepsen\.util\s+-\s+(\d+)\s+(:\w+)\s+(:[\w-]+)\s+(.*?)\s*$"
)


def _swap_group(
    data: bytes, rng: random.Random, pattern: bytes | re.Pattern[bytes], group: int, new: str
) -> bytes | None:
    """``data`` with ``group`` of one match of ``pattern`` (drawn at random) replaced."""
    spots = list(re.finditer(pattern, data))
    if not spots:
        return None
    m = rng.choice(spots)
    return data[: m.start(group)] + new.encode() + data[m.end(group) :]


def _json_field(data: bytes, rng: random.Random, field: str, new: str) -> bytes | None:
    value = rb'(-?[\w.+-]+|"[^"]*"|\[[^\]]*\]|\{\})'
    return _swap_group(data, rng, rb'"' + field.encode() + rb'":' + value, 1, new)


def _edn_field(data: bytes, rng: random.Random, field: str, new: str) -> bytes | None:
    value = rb"(\[[^\]]*\]|\"[^\"]*\"|[^\s,{}\[\]]+)"
    return _swap_group(data, rng, rb":" + field.encode() + rb"[\s,]+" + value, 1, new)


def _etcd_field(data: bytes, rng: random.Random, group: int, new: str) -> bytes | None:
    return _swap_group(data, rng, _ETCD_LINE, group, new)


def _replace(rng: random.Random, data: bytes, fmt: str, field: str, new: str) -> bytes | None:
    if fmt in ("jsonl", "dir"):
        return _json_field(data, rng, field, new)
    if fmt == "etcd":
        group = {"process": 1, "type": 2, "f": 3, "value": 4}.get(field)
        return None if group is None else _etcd_field(data, rng, group, new)
    return _edn_field(data, rng, field, new)


def type_swap(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    if fmt == "etcd":
        group = rng.choice(list(_ETCD_BAD))
        out = _etcd_field(data, rng, group, rng.choice(_ETCD_BAD[group]))
        return None if out is None else (out, True)
    table = _JSON_BAD if fmt in ("jsonl", "dir") else _EDN_BAD
    field = rng.choice(list(table))
    out = _replace(rng, data, fmt, field, rng.choice(table[field]))
    return None if out is None else (out, True)


def huge_number(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    fields = {
        "jsonl": ("index", "time", "process", "value"),
        "dir": ("index", "time", "value"),
        "etcd": ("process", "value"),
    }.get(fmt, ("process", "value"))
    field = rng.choice(fields)
    new = rng.choice(_VALUE_HUGE if field == "value" else _HUGE)
    if fmt == "etcd" and field == "value":
        new = rng.choice(("1" + "0" * 41, "7" * 5000, str(2**64)))
    if fmt == "etcd" and field == "process":
        new = rng.choice(("7" * 5000, str(2**64)))
    if fmt in ("edn", "kv") and new.endswith("e308"):
        new = "1e400"
    out = _replace(rng, data, fmt, field, new)
    return None if out is None else (out, True)


def deep_nesting(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    d = rng.choice(_DEPTHS)
    new = "[" * d + "]" * d if fmt != "edn" or rng.random() < 0.5 else "(" * d + ")" * d
    out = _replace(rng, data, fmt, "value", new)
    return None if out is None else (out, True)


# ---- semantic mutations: well-formed ops that make no history (issue 29) ---------------
# Every seed holds one op per line; each line is read into its process, type and f, and
# each client completion paired with its invocation, as the readers pair them.

_EDN_OP: Final = re.compile(rb"\{(?=\s*:(?:process|type|f)\b)")
"""The opening of an op map (a value's map starts with other keys in the seeds)."""
_EDN_PROCESS: Final = re.compile(rb":process\s+([^\s,{}]+)")
_EDN_TYPE: Final = re.compile(rb":type\s+:(\w+)")
_EDN_F: Final = re.compile(rb":f\s+:([\w-]+)")
_EDN_VALUE: Final = re.compile(rb':value\s+(\[[^\]]*\]|"[^"]*"|[^\s,{}\[\]]+)')
_EDN_KEY: Final = re.compile(rb':key\s+("[^"]*"|[^\s,{}\[\]]+),?\s*')
_FS: Final = ("read", "write", "cas", "get", "put", "append", "zz")


@dataclass(frozen=True)
class OpLine:
    """One op's line: its place among the lines, process, type and f, and the line of
    its pair (a completion's invocation, an invocation's completion; -1: none)."""

    at: int
    process: str
    type: str
    f: str
    pair: int


def _fields(line: bytes, fmt: str) -> tuple[str, str, str] | None:
    """(process, type, f) of an op's line, or None for a line that holds no op."""
    if fmt in ("jsonl", "dir"):
        try:
            d = json.loads(line)
        except ValueError:
            return None
        if not isinstance(d, dict) or not {"process", "type", "f"} <= d.keys():
            return None
        return str(d["process"]), str(d["type"]), str(d["f"])
    if fmt == "etcd":
        m = _ETCD_LINE.match(line)
        if m is None:
            return None
        return m[1].decode(), m[2].decode()[1:], m[3].decode()[1:]
    found = [r.search(line) for r in (_EDN_PROCESS, _EDN_TYPE, _EDN_F)]
    if not all(found):
        return None
    return tuple(m[1].decode() for m in found)  # type: ignore[index,return-value]


def op_lines(lines: list[bytes], fmt: str) -> list[OpLine]:
    """The ops of a file's lines, each client op paired as the readers pair them."""
    fields = [(i, _fields(line, fmt)) for i, line in enumerate(lines)]
    pairs: dict[int, int] = {}
    open_: dict[str, int] = {}
    for i, got in fields:
        if got is None or got[0].lstrip(":").strip('"') == "nemesis":
            continue
        process, type_, _ = got
        if type_ == "invoke":
            open_[process] = i
        elif process in open_:
            j = open_.pop(process)
            pairs[i], pairs[j] = j, i
    return [OpLine(i, *got, pairs.get(i, -1)) for i, got in fields if got is not None]


def _json_set(line: bytes, **changes: object) -> bytes:
    d = json.loads(line)
    for k, v in changes.items():
        if v is _DROP:
            d.pop(k, None)
        else:
            d[k] = v
    return json.dumps(d, separators=(",", ":")).encode()


_DROP: Final = object()


def _other(value: bytes) -> bytes:
    """Another value of the same kind, as text: a number plus 1000, a string longer, the
    last number of a list plus 1000."""
    if value.startswith(b'"'):
        return value[:-1] + b'zz"'
    nums = list(re.finditer(rb"-?\d+", value))
    if not nums:
        return value + b"1"
    m = nums[-1]
    return value[: m.start()] + str(int(m[0]) + 1000).encode() + value[m.end() :]


def _mutate_line(
    rng: random.Random, data: bytes, fmt: str, pick: Callable[[OpLine], bool]
) -> tuple[list[bytes], OpLine] | None:
    lines = _lines(data)
    chosen = [o for o in op_lines(lines, fmt) if pick(o)]
    return None if not chosen else (lines, rng.choice(chosen))


def pairing_f(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A completion of another f than its invocation's."""
    got = _mutate_line(rng, data, fmt, lambda o: o.type != "invoke" and o.pair >= 0)
    if got is None:
        return None
    lines, o = got
    new = rng.choice([f for f in _FS if f != o.f])
    line = lines[o.at]
    if fmt in ("jsonl", "dir"):
        lines[o.at] = _json_set(line, f=new)
    elif fmt == "etcd":
        m = _ETCD_LINE.match(line)
        assert m is not None
        lines[o.at] = line[: m.start(3)] + f":{new}".encode() + line[m.end(3) :]
    else:
        lines[o.at] = _EDN_F.sub(f":f :{new}".encode(), line, count=1)
    return b"\n".join(lines), True


def pairing_value(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """An ok write (put, append, cas) that says it wrote another value than it was invoked
    with. In a run directory a write's completion may carry its result (a lock's fenced
    write): there it may still be a history."""
    writes = ("write", "put", "append", "cas")
    got = _mutate_line(rng, data, fmt, lambda o: o.type == "ok" and o.f in writes and o.pair >= 0)
    if got is None:
        return None
    lines, o = got
    line = lines[o.at]
    if fmt in ("jsonl", "dir"):
        value = json.loads(line).get("value")
        if value is None:
            return None
        new = _other(json.dumps(value).encode())
        lines[o.at] = _json_set(line, value=json.loads(new))
    elif fmt == "etcd":
        m = _ETCD_LINE.match(line)
        assert m is not None
        if m[4] in (b"nil", b":timed-out"):
            return None
        lines[o.at] = line[: m.start(4)] + _other(m[4]) + line[m.end(4) :]
    else:
        m = _EDN_VALUE.search(line)
        if m is None or m[1] == b"nil":
            return None
        lines[o.at] = line[: m.start(1)] + _other(m[1]) + line[m.end(1) :]
    return b"\n".join(lines), fmt != "dir"


def early_completion(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A completion timed before its invocation (in an EDN file, every op given a time)."""
    if fmt not in ("jsonl", "dir", "edn"):
        return None  # porcupine's logs have no times
    got = _mutate_line(rng, data, fmt, lambda o: o.type != "invoke" and o.pair >= 0)
    if got is None:
        return None
    lines, o = got
    if fmt == "edn":  # every op map given a time (a nemesis's may span lines)
        times = iter(range(100, 10**9, 100))  # every invocation is at 100 or later
        for i, line in enumerate(lines):
            stamp = (lambda _: b"{:time 50, ") if i == o.at else _next_time(times)
            lines[i] = _EDN_OP.sub(stamp, line)
        return b"\n".join(lines), True
    invoked = json.loads(lines[o.pair])["time"]
    if invoked == 0:
        return None
    lines[o.at] = _json_set(lines[o.at], time=rng.randrange(invoked))
    return b"\n".join(lines), True


def _next_time(times: Iterator[int]) -> Callable[[re.Match[bytes]], bytes]:
    return lambda _: f"{{:time {next(times)}, ".encode()


_WRONG_JSON: Final = ({"a": 1}, [1, 2], {"k": [1]})
_WRONG_EDN: Final = (b"{:a 1}", b"[1 2]", b"#{1}")
_WRONG_KV: Final = (b"{:a 1}", b"5", b"[1]")


def wrong_type(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A value of a type the model does not hold: a read (get) returning a map or a list,
    or (not in a run directory, whose writes may carry anything) a write of one."""
    kinds = ("read", "get") if fmt == "dir" else ("read", "get", "write", "put", "append")
    got = _mutate_line(rng, data, fmt, lambda o: o.type == "ok" and o.f in kinds and o.pair >= 0)
    if got is None:
        return None
    lines, o = got
    targets = [o.at] if o.f in ("read", "get") else [o.at, o.pair]  # a write: both alike
    for at in targets:
        line = lines[at]
        if fmt in ("jsonl", "dir"):
            lines[at] = _json_set(line, value=rng.choice(_WRONG_JSON))
        elif fmt == "etcd":
            m = _ETCD_LINE.match(line)
            assert m is not None
            lines[at] = line[: m.start(4)] + b"[1 2]" + line[m.end(4) :]
        else:
            m = _EDN_VALUE.search(line)
            new = rng.choice(_WRONG_EDN if fmt == "edn" else _WRONG_KV)
            if m is None:
                lines[at] = line.replace(b"}", b", :value " + new + b"}", 1)
            else:
                lines[at] = line[: m.start(1)] + new + line[m.end(1) :]
    return b"\n".join(lines), True


def missing_key(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """An op without the key its pair has (in a kv log, any op without its key)."""
    if fmt == "kv":
        spots = [i for i, line in enumerate(_lines(data)) if _EDN_KEY.search(line)]
        if not spots:
            return None
        lines = _lines(data)
        at = rng.choice(spots)
        lines[at] = _EDN_KEY.sub(b"", lines[at], count=1)
        return b"\n".join(lines), True
    if fmt not in ("jsonl", "dir"):
        return None  # Knossos and etcd logs have no keys
    got = _mutate_line(rng, data, fmt, lambda o: o.pair >= 0)
    if got is None:
        return None
    lines, o = got
    if json.loads(lines[o.at]).get("key") is None:
        return None
    lines[o.at] = _json_set(lines[o.at], key=_DROP)
    return b"\n".join(lines), True


_EMPTY: Final = {
    "jsonl": (b"", b"\n\n", b"  \n"),
    "edn": (b"", b"[]", b"[]\n", b"; nothing\n;; here\n", b"()"),
    "kv": (b"", b"[]", b"; nothing here\n", b"\n"),
    "etcd": (b"", b"\n", b"\n  \n"),
}


def empty(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A file without ops: empty, ``[]``, comments or blank lines alone."""
    if fmt not in _EMPTY:
        return None  # a run directory's empty history is another matter
    return rng.choice(_EMPTY[fmt]), True


FILE_MUTATIONS: Final[dict[str, Mutation]] = {
    "bad-utf8": bad_utf8,
    "random-bytes": random_bytes,
    "garbage-tokens": garbage_tokens,
    "extra-field": extra_field,
    "truncate": truncate,
    "shuffle-lines": shuffle_lines,
    "type-swap": type_swap,
    "huge-number": huge_number,
    "deep-nesting": deep_nesting,
    "pairing-f": pairing_f,
    "pairing-value": pairing_value,
    "early-completion": early_completion,
    "wrong-type": wrong_type,
    "missing-key": missing_key,
    "empty": empty,
}
RECORD_MUTATIONS: Final = {
    "history.jsonl": (
        "bad-utf8",
        "random-bytes",
        "truncate",
        "type-swap",
        "huge-number",
        "deep-nesting",
        "shuffle-lines",
        "extra-field",
        "pairing-f",
        "pairing-value",
        "early-completion",
        "wrong-type",
        "missing-key",
    ),
    "test.json": ("bad-utf8", "truncate"),
    "events.jsonl": ("bad-utf8", "random-bytes"),
    "resource.jsonl": ("bad-utf8", "random-bytes"),
}
SPECIALS: Final = ("fifo", "/dev/zero", "/dev/urandom", "/dev/null", "directory")


def mutants(seeds: list[Seed], rng: random.Random) -> Iterator[Mutant]:
    """An endless stream of inputs, seeds and mutations drawn in turn."""
    contents = {s.name: s.path.read_bytes() for s in seeds if s.fmt != "dir"}
    by_format: dict[str, list[Seed]] = {}
    for s in seeds:
        by_format.setdefault(s.fmt, []).append(s)
    formats = sorted(by_format)
    while True:  # each format as often as the others, however many seeds it has
        seed = rng.choice(by_format[rng.choice(formats)])
        if seed.fmt != "dir":
            name = rng.choice(list(FILE_MUTATIONS))
            made = FILE_MUTATIONS[name](rng, contents[seed.name], seed.fmt)
            if made is not None:
                yield Mutant(seed, name, made[1], made[0])
            continue
        present = [r for r in RECORDS if (seed.path / r).exists()]
        if rng.random() < 0.1:  # a record must not be a link; what check writes, never through
            at = rng.choice(present + list(WRITTEN))
            yield Mutant(seed, "link", at in RECORDS, record=at, link=rng.choice(list(LINKS)))
            continue
        record = rng.choice(present)
        if rng.random() < 0.2:
            yield Mutant(seed, "special", True, record=record, special=rng.choice(SPECIALS))
            continue
        name = rng.choice(RECORD_MUTATIONS[record])
        fmt = "json" if record == "test.json" else "dir"
        made = FILE_MUTATIONS[name](rng, (seed.path / record).read_bytes(), fmt)
        if made is not None:
            yield Mutant(seed, name, made[1], made[0], record=record)


# ---- running one input -----------------------------------------------------------------


class Hang(BaseException):
    """No answer within the alarm's time (a BaseException, so that no ``except
    Exception`` in the code under test turns a hang into a verdict)."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang


def materialise(m: Mutant, work: Path) -> Path:
    """Write the input under ``work`` (emptied first); the path to check."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if m.seed.fmt != "dir":
        path = work / m.seed.path.name
        path.write_bytes(m.data)
        test = m.seed.path.parent / "test.json"  # a JSONL history's model
        if m.seed.fmt == "jsonl" and test.is_file():
            shutil.copy(test, work / "test.json")
        return path
    run = work / "run"
    shutil.copytree(m.seed.path, run, symlinks=True)
    target = run / m.record
    if m.link:
        target.unlink(missing_ok=True)
        target.symlink_to(outside_tree(work) / LINKS[m.link])
    elif m.special:
        target.unlink()
        if m.special == "fifo":
            os.mkfifo(target)
        elif m.special == "directory":
            target.mkdir()
        else:
            target.symlink_to(m.special)
    else:
        target.write_bytes(m.data)
    return run


def outside_tree(work: Path) -> Path:
    """The tree outside the run that its planted links point into (made once per input):
    a file, a folder holding one, and no ``nothing``."""
    tree = work / "outside"
    if not tree.is_dir():
        (tree / "folder").mkdir(parents=True)
        (tree / "victim.txt").write_text("precious\n")
        (tree / "folder" / "kept.txt").write_text("kept\n")
    return tree


def _digest(tree: Path) -> list[tuple[str, bytes]]:
    """Every entry below ``tree`` with its content (a link: its target), links not
    followed."""
    out = []
    for top, dirs, files in os.walk(tree):
        for name in sorted(dirs + files):
            p = Path(top) / name
            data = os.readlink(p).encode() if p.is_symlink() else b"" if p.is_dir() else None
            out.append((str(p), data if data is not None else p.read_bytes()))
    return sorted(out)


def classify(m: Mutant, path: Path, out: Path, time_limit: float, hang: float) -> str:
    """Check one input in-process; its outcome (see the module's docstring). A run
    directory with a planted link is checked with its results and report written into
    itself, and then the tree outside it must be as it was."""
    if m.link:
        before = _digest(outside_tree(path.parent))
        outcome = _classify(m, path, None, time_limit, hang, path / "report.html")
        return "write-outside" if _digest(outside_tree(path.parent)) != before else outcome
    return _classify(m, path, out, time_limit, hang, None)


def _classify(
    m: Mutant, path: Path, out: Path | None, time_limit: float, hang: float, html: Path | None
) -> str:
    oom = [b""]
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, hang)
    try:
        got = check_path(
            path, model=None, time_limit=time_limit, memory_limit=None, out=out, oom=oom, html=html
        )
    except HarnessError as e:
        return "error" if "\n" not in str(e) else "long-message"
    except Hang:
        return "hang"
    except Exception:
        return "traceback"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if "malformed history" in json.dumps(got.get("details"), default=str):
        return "malformed-verdict"
    return "verdict-on-bad-input" if m.must_fail else "verdict"


def _keep(m: Mutant, path: Path, findings: Path, n: int, outcome: str) -> Path:
    dest = findings / f"{n:06d}-{outcome}-{m.seed.name.replace('/', '_')}-{m.mutation}"
    if path.is_dir():
        shutil.copytree(path, dest, symlinks=True)
    else:
        dest.mkdir(parents=True)
        shutil.copy(path, dest / path.name)
    return dest


@dataclass
class Report:
    """What a fuzzing run found: counts per (mutation, outcome), and the findings kept."""

    counts: Counter[tuple[str, str]]
    findings: list[str]
    inputs: int
    seconds: float

    def outcomes(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for (_, outcome), n in self.counts.items():
            out[outcome] += n
        return out


def fuzz(
    seeds: list[Seed],
    inputs: int,
    seed: int,
    time_limit: float = 10.0,
    hang: float = 30.0,
    findings: Path | None = None,
    progress: Callable[[int, Counter[str]], None] | None = None,
) -> Report:
    """Check ``inputs`` mutants of ``seeds``; the findings are kept under ``findings``."""
    rng = random.Random(seed)
    counts: Counter[tuple[str, str]] = Counter()
    kept: list[str] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-inputs-") as tmp:
        work, out = Path(tmp) / "input", Path(tmp) / "out"
        keep = findings or Path(tmp) / "findings"
        for n, m in enumerate(mutants(seeds, rng)):
            if n >= inputs:
                break
            path = materialise(m, work)
            outcome = classify(m, path, out, time_limit, hang)
            counts[(m.mutation, outcome)] += 1
            if outcome in FINDINGS:
                where = _keep(m, path, keep, n, outcome) if findings else path
                kept.append(
                    f"{outcome}: {m.seed.name} {m.mutation} {m.record} {m.special}{m.link} "
                    f"-> {where}"
                )
            if progress is not None and n and not n % 1000:
                progress(n, Report(counts, kept, n, 0.0).outcomes())
    return Report(counts, kept, inputs, time.perf_counter() - started)


# ---- seeds -----------------------------------------------------------------------------


def built_in_seeds(where: Path) -> list[Seed]:
    """The small seed of each format, written under ``where``."""
    fmts = {".jsonl": "jsonl", ".edn": "edn", ".log": "etcd", ".txt": "kv"}
    seeds = []
    for name, text in BUILT_IN.items():
        d = where / "built-in" / name.replace(".", "-")
        d.mkdir(parents=True, exist_ok=True)
        (d / name).write_text(text)
        if name.endswith(".jsonl"):
            (d / "test.json").write_text('{"model": "register"}\n')
        seeds.append(Seed(f"built-in/{name}", d / name, fmts[Path(name).suffix]))
    return seeds


def generated_seeds(where: Path) -> list[Seed]:
    """Histories of ``scripts/gen_history.py`` (register and kv) and synthetic runs."""
    from tests.support.synthetic import cas_register_run, lock_run

    seeds = []
    for model in ("register", "kv"):
        out = where / f"gen-{model}" / "history.jsonl"
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "scripts" / "gen_history.py"),
                str(out),
                "--ops",
                "60",
                "--keys",
                "3",
                "--model",
                model,
                "--seed",
                "3",
            ],
            check=True,
            capture_output=True,
        )
        (out.parent / "test.json").write_text(json.dumps({"model": model}) + "\n")
        seeds.append(Seed(f"gen-{model}", out, "jsonl"))
    seeds.append(
        Seed(
            "synthetic-cas", cas_register_run(where / "cas", ops=80, faults=1, duration_s=3), "dir"
        )
    )
    seeds.append(Seed("synthetic-lock", lock_run(where / "lock"), "dir"))
    return seeds


def shared_seeds(limit: int | None = None, max_bytes: int = 40_000) -> list[Seed]:
    """The reference histories of up to ``max_bytes`` (the biggest, porcupine's c10 and c50
    kv logs, take 0.1-0.4 s a check: they would be most of a run's time), at most ``limit``
    of each format."""
    if not SHARED.is_dir():
        return []
    fmts = {".log": "etcd", ".edn": "edn", ".txt": "kv"}
    seeds: list[Seed] = []
    for suffix, fmt in fmts.items():
        files = sorted(p for p in SHARED.rglob(f"*{suffix}") if "LICENSE" not in p.name)
        files = [p for p in files if 0 < p.stat().st_size <= max_bytes]
        for p in files[:limit]:
            seeds.append(Seed(str(p.relative_to(SHARED)), p, fmt))
    return seeds


def all_seeds(where: Path, run_dirs: list[Path], shared_limit: int | None = None) -> list[Seed]:
    seeds = built_in_seeds(where) + generated_seeds(where) + shared_seeds(shared_limit)
    seeds += [Seed(f"run:{d.name}", d, "dir") for d in run_dirs]
    return seeds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=10_000, help="inputs to check")
    ap.add_argument("--seed", type=int, default=1, help="random seed (replayable)")
    ap.add_argument(
        "--run-dir",
        type=Path,
        action="append",
        default=[],
        help="a run directory to mutate too (repeatable)",
    )
    ap.add_argument("--time-limit", type=float, default=10.0, help="check's limit per input")
    ap.add_argument("--hang", type=float, default=30.0, help="seconds before a hang is called")
    ap.add_argument("--findings", type=Path, default=None, help="keep findings here")
    ap.add_argument(
        "--shared-limit",
        type=int,
        default=None,
        help="at most this many reference histories of each format",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fuzz-seeds-") as tmp:
        seeds = all_seeds(Path(tmp), args.run_dir, args.shared_limit)
        print(f"{len(seeds)} seeds; {args.inputs} inputs, seed {args.seed}", flush=True)

        def progress(n: int, c: Counter[str]) -> None:
            print(f"  {n} inputs: {dict(sorted(c.items()))}", flush=True)

        findings = args.findings or Path(tempfile.mkdtemp(prefix="fuzz-findings-"))
        report = fuzz(seeds, args.inputs, args.seed, args.time_limit, args.hang, findings, progress)
    print(f"{report.inputs} inputs in {report.seconds:.0f} s")
    for mutation in sorted({m for m, _ in report.counts}):
        row = {o: n for (m, o), n in sorted(report.counts.items()) if m == mutation}
        print(f"  {mutation:16} {row}")
    print(f"outcomes: {dict(sorted(report.outcomes().items()))}")
    for line in report.findings[:50]:
        print(f"  {line}")
    print(
        f"findings: {len(report.findings)}" + (f" (kept in {findings})" if report.findings else "")
    )
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
