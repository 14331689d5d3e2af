#!/usr/bin/env python3
"""Fuzz the history readers and ``harness check`` with mutated inputs (issue 16).

Seeds: a small history of each format built in (JSONL, Knossos EDN, porcupine etcd log
and kv), histories from ``scripts/gen_history.py`` (register and kv), the reference
histories in ``../shared/histories`` when they are there, synthetic run directories
(``tests.support.synthetic``: a cas-register run and a lock run) and any run directory
given with ``--run-dir`` (say one of ``harness run --target sim --time-limit 5``).

Each input is one seed with one mutation: bad bytes, random bytes inside an op, garbage
tokens, a field no op has, truncation, a field of the wrong type, a huge number, deep nesting, lines
duplicated, swapped or deleted. Semantic mutations (issue 29) keep every op well formed and
make the file no history: a completion of another f than its invocation's, a write
completed with another value, a completion timed before its invocation, a value of a type
the model does not hold (a register read returning a map, a kv put of an integer), an op
without the key its pair has (or, in a kv log, without a key), a file without ops (empty,
``[]``, comments alone); and values of another plain type that leave a history (a
register given a string, nil, an integer past 64 bits). Now and then (``--rare``) an input
is huge: a write of a 10 MB string, or a history of 200,000 ops (``scripts/gen_bounds.py``'s
shapes), checked with a time limit of 3 s.

Run directories get a record replaced by a FIFO, a device or a directory; a link (to a file
outside the run, dangling, or to a folder outside) planted at a record, at a name written
into the run (results.json, report.html, their temporary names) or at the results index
beside it; the run directory itself a link to a copy outside; and a record missing,
emptied, cut mid-line or with its last lines gone. Such a run directory is checked with its
results and report written into itself (``check``), or reported (``harness report``, in
this process), or its folder indexed. A mutation says whether its result can still be a
history (``must_fail`` False: garbage tokens, truncations, line shuffles) or cannot. Each
input is checked in-process (``harness.checkcmd.check_path``, which calls the readers),
with a per-input time limit and an alarm at ``--hang`` seconds, beside a tree outside the
output root (a file, a folder, the target of every planted link), and classified:

- ``error``: a one-line error naming the file (and, for a semantic mutation, its line):
  what bad input must get, exit 254 from the command line;
- ``verdict``: a verdict (valid, invalid or unknown) on an input that may be a history;
- findings: ``verdict-on-bad-input`` (a verdict where the input cannot be a history),
  ``malformed-verdict`` (an unknown verdict for a malformed history: bad input is an
  error), ``traceback`` (any other exception), ``crashed`` (a checker crashed, or the
  command said so or exited 255), ``hang`` (no answer within ``--hang`` s), ``overrun``
  (an answer past the time limit + 2 s), ``long-message`` (an error of more than one
  line), ``unnamed-file``, ``unnamed-line`` (an error not naming the file, or the line of
  a semantic mutation), ``write-outside`` (the tree outside changed: a write through a
  planted link, or a file created through one; through a run directory that is a link,
  only its results and report may be written, in the directory the link names);
  ``valid-without-evidence`` (a run directory missing a record, or with one emptied or
  cut, judged valid without saying which record changed since the run; or judged valid at
  all with its resource log missing, emptied or cut mid-line).

Findings are written to ``--findings DIR`` (default: a temporary directory) to reproduce.
The closing lines count the inputs per mutation class (with the slowest input's seconds)
and per outcome. Exit 1 if there was any finding.

    nice prlimit --as=4000000000 .venv/bin/python scripts/fuzz_inputs.py --count 100000 --seed 29
"""

from __future__ import annotations

import argparse
import contextlib
import io
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
from dataclasses import dataclass, field
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
    "crashed",
    "hang",
    "overrun",
    "long-message",
    "unnamed-file",
    "unnamed-line",
    "write-outside",
    "valid-without-evidence",
)
BROKEN: Final = {"resource.jsonl": ("missing", "emptied", "cut-mid-line")}
"""Tamperings that break a record a checker reads (``checkers.evidence``): such a run is
never valid, whatever else it says; any other tampering's valid must say which record
changed since the run."""
RECORDS: Final = ("history.jsonl", "test.json", "events.jsonl", "resource.jsonl")
WRITTEN: Final = ("results.json", "results.json.tmp", "report.html", "report.html.tmp")
"""Names ``check`` and ``report`` write in a run directory (or once did: the temporary
names)."""
INDEX: Final = "index.html"
"""The results index, written into the folder that holds the run directory."""
WRITERS: Final = ("check", "report", "index")
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
    or ``special`` names what replaces the record (fifo, device, directory, ``missing``:
    nothing), or ``link`` the kind of link planted at ``record`` (``LINKS``; ``run``: the
    run directory itself a link to a copy outside)."""

    seed: Seed
    mutation: str
    must_fail: bool
    data: bytes = b""
    record: str = ""
    special: str = ""
    link: str = ""
    writer: str = "check"
    """What is asked of a run directory: ``check`` (results and report written into it),
    ``report`` (``harness report RUN``) or ``index`` (the results index of its folder);
    of a history file: ``check`` (in this process) or ``command`` (``harness check``)."""
    evidence: bool = False
    """A record of the run was tampered with (missing, emptied, cut): never valid."""


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
    "jsonl": (b"", b"\n\n", b"  \n", b"[]\n"),
    "edn": (b"", b"[]", b"[]\n", b"; nothing\n;; here\n", b"()"),
    "kv": (b"", b"[]", b"; nothing here\n", b"\n"),
    "etcd": (b"", b"\n", b"\n  \n", b"INFO  jepsen.core - no op logged\n"),
}


def empty(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A file without ops: empty, ``[]``, comments or blank lines alone."""
    if fmt not in _EMPTY:
        return None  # a run directory's empty history is another matter
    return rng.choice(_EMPTY[fmt]), True


_SCALARS: Final = ('"s"', "null", str(2**70), "10" + "0" * 25, "true", "2.5", '""')
"""Values a register holds, however odd (a string, nil, an integer past 64 bits...)."""
_KV_WRONG: Final = ("5", str(2**70), "true", "2.5")
"""Values a kv store does not hold (it holds strings, and nil for an empty get)."""


def value_type(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A value of another plain type, in our JSONL: a register's read or write given a
    string, nil, a huge integer, a boolean or a number (still a history: a verdict, maybe
    invalid), a kv store's put, append or get given one that is not a string (no history)."""
    if fmt != "jsonl":
        return None
    kv = b'"f":"get"' in data or b'"f":"put"' in data or b'"f":"append"' in data
    kinds = ("put", "append", "get") if kv else ("read", "write")
    got = _mutate_line(rng, data, fmt, lambda o: o.type == "ok" and o.f in kinds and o.pair >= 0)
    if got is None:
        return None
    lines, o = got
    new = json.loads(rng.choice(_KV_WRONG if kv else _SCALARS))
    targets = [o.at] if o.f in ("read", "get") else [o.at, o.pair]  # a write: both alike
    for at in targets:
        lines[at] = _json_set(lines[at], value=new)
    return b"\n".join(lines), kv


HUGE_VALUE_BYTES: Final = 10 << 20
"""The size of a huge value (issue 29: a 10 MB string)."""


def huge_value(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """One write's (put's, append's) value, and its completion's, a string of
    ``HUGE_VALUE_BYTES``: read within the budget, a verdict (or, where the model holds no
    strings, an error)."""
    if fmt not in ("jsonl", "edn"):
        return None
    writes = ("write", "put", "append")
    got = _mutate_line(rng, data, fmt, lambda o: o.type == "ok" and o.f in writes and o.pair >= 0)
    if got is None:
        return None
    lines, o = got
    huge = "x" * HUGE_VALUE_BYTES
    for at in (o.at, o.pair):
        if fmt == "jsonl":
            lines[at] = _json_set(lines[at], value=huge)
        else:
            m = _EDN_VALUE.search(lines[at])
            if m is None:
                return None
            lines[at] = lines[at][: m.start(1)] + f'"{huge}"'.encode() + lines[at][m.end(1) :]
    return b"\n".join(lines), False


HUGE_HISTORY_OPS: Final = 200_000
"""The operations of a huge history: past what a check decides in a second or two."""


def huge_history(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """The file replaced by a big plain register history of ``scripts/gen_bounds.py``
    (sequential, a process per op, or all writes concurrent; integers or floats): the check
    must keep to its time limit, a verdict or unknown with the reason."""
    if fmt != "jsonl":
        return None
    from gen_bounds import concurrent, sequential

    values = rng.choice(("cycle", "unique", "float"))
    shape = rng.choice(("sequential", "processes", "concurrent"))
    if shape == "concurrent":
        events = concurrent(HUGE_HISTORY_OPS // 4, "float" if values == "float" else "unique")
    else:
        events = sequential(HUGE_HISTORY_OPS, rng.randint(1, 5), values, shape == "processes")
    out = []
    for i, p, t, f_, v in events:
        value = "null" if v is None else v
        out.append(
            f'{{"index":{i},"time":{i},"process":{p},"type":"{t}","f":"{f_}","value":{value}}}'
        )
    return ("\n".join(out) + "\n").encode(), False


# ---- run-directory tampering: a record missing, emptied or cut (issue 29) --------------


def emptied(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A record with nothing in it."""
    return (b"", False) if fmt == "dir" and data else None


def cut_mid_line(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A record cut inside a line (as a copy cut short, or a full disk, leaves it)."""
    if fmt != "dir":
        return None
    spots = [i for i in range(1, len(data) - 1) if data[i - 1 : i] != b"\n" and data[i] != 10]
    if not spots:
        return None
    return data[: rng.choice(spots)], False


def fewer_lines(rng: random.Random, data: bytes, fmt: str) -> tuple[bytes, bool] | None:
    """A record with its last lines gone, whole (what is left reads as a shorter record)."""
    lines = data.rstrip(b"\n").split(b"\n")
    if fmt != "dir" or len(lines) < 2:
        return None
    return b"\n".join(lines[: rng.randrange(1, len(lines))]) + b"\n", False


TAMPERINGS: Final = ("emptied", "cut-mid-line", "fewer-lines", "missing")
"""The mutations of a run's record that leave less evidence than the run wrote."""


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
    "value-type": value_type,
    "huge-value": huge_value,
    "huge-history": huge_history,
    "emptied": emptied,
    "cut-mid-line": cut_mid_line,
    "fewer-lines": fewer_lines,
}
RARE: Final = frozenset({"huge-value", "huge-history"})
"""Mutations drawn only now and then (each input takes a second or more): a share
``rare`` of the inputs (``fuzz``), as against the others' turn."""
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


def mutants(seeds: list[Seed], rng: random.Random, rare: float = 0.002) -> Iterator[Mutant]:
    """An endless stream of inputs, seeds and mutations drawn in turn (a share ``rare``
    of them the ``RARE`` mutations of a JSONL history)."""
    contents = {s.name: s.path.read_bytes() for s in seeds if s.fmt != "dir"}
    by_format: dict[str, list[Seed]] = {}
    for s in seeds:
        by_format.setdefault(s.fmt, []).append(s)
    formats = sorted(by_format)
    common = [name for name in FILE_MUTATIONS if name not in RARE]
    while True:  # each format as often as the others, however many seeds it has
        if rng.random() < rare and "jsonl" in by_format:
            seed = rng.choice(by_format["jsonl"])
            name = rng.choice(sorted(RARE))
        else:
            seed = rng.choice(by_format[rng.choice(formats)])
            name = rng.choice(common)
        if seed.fmt != "dir":
            made = FILE_MUTATIONS[name](rng, contents[seed.name], seed.fmt)
            if made is not None:  # now and then through the command line, as a user would
                writer = "command" if rng.random() < 0.05 else "check"
                yield Mutant(seed, name, made[1], made[0], writer=writer)
            continue
        yield from _run_mutant(seed, rng)


def _run_mutant(seed: Seed, rng: random.Random) -> Iterator[Mutant]:
    """One input made of a run directory (none when the mutation drawn does not apply)."""
    present = [r for r in RECORDS if (seed.path / r).exists()]
    writer = rng.choice(WRITERS)
    draw = rng.random()
    if draw < 0.02:  # the run directory itself a link, to a copy outside
        yield Mutant(seed, "run-link", False, record=".", link="run", writer=writer)
        return
    if draw < 0.12:  # a record must not be a link; what is written, never through one
        at = rng.choice(present + list(WRITTEN) + [INDEX])
        kind = rng.choice(list(LINKS))
        writer = "index" if at == INDEX else writer
        yield Mutant(seed, "link", at in RECORDS, record=at, link=kind, writer=writer)
        return
    record = rng.choice(present)
    if draw < 0.3:
        yield Mutant(seed, "special", True, record=record, special=rng.choice(SPECIALS))
        return
    if draw < 0.45:  # less evidence than the run wrote
        name = rng.choice(TAMPERINGS)
        if name == "missing":
            yield Mutant(seed, name, False, record=record, special=name, evidence=True)
            return
        made = FILE_MUTATIONS[name](rng, (seed.path / record).read_bytes(), "dir")
        if made is not None:
            yield Mutant(seed, name, made[1], made[0], record=record, evidence=True)
        return
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
    """Write the input under ``work`` (emptied first), beside the tree outside it
    (``outside_tree``); the path to check."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    outside = outside_tree(work)
    if m.seed.fmt != "dir":
        path = work / m.seed.path.name
        path.write_bytes(m.data)
        test = m.seed.path.parent / "test.json"  # a JSONL history's model
        if m.seed.fmt == "jsonl" and test.is_file():
            shutil.copy(test, work / "test.json")
        return path
    run = work / "run"
    if m.link == "run":  # the run directory a link to a copy outside
        shutil.copytree(m.seed.path, outside / "run", symlinks=True)
        run.symlink_to(outside / "run")
        return run
    shutil.copytree(m.seed.path, run, symlinks=True)
    target = work / INDEX if m.record == INDEX else run / m.record
    if m.link:
        target.unlink(missing_ok=True)
        target.symlink_to(outside / LINKS[m.link])
    elif m.special:
        target.unlink()
        if m.special == "fifo":
            os.mkfifo(target)
        elif m.special == "directory":
            target.mkdir()
        elif m.special != "missing":
            target.symlink_to(m.special)
    else:
        target.write_bytes(m.data)
    return run


def outside_tree(work: Path) -> Path:
    """The tree outside the output root (the run directory, the results folder holding
    it, and ``--out``) that planted links point into, a sentinel for every input: a file,
    a folder holding one, and no ``nothing``."""
    tree = work.parent / "outside"
    shutil.rmtree(tree, ignore_errors=True)
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


def _changed(
    before: list[tuple[str, bytes]], after: list[tuple[str, bytes]], run: Path | None
) -> bool:
    """Whether the tree outside changed, but for what a check of ``run`` (a run directory
    the user named through a link: the resolved one) writes into it: its results and
    report, whole."""
    allowed = set() if run is None else {str(run / name) for name in WRITTEN}
    return [e for e in before if e[0] not in allowed] != [e for e in after if e[0] not in allowed]


SEMANTIC: Final = frozenset(
    {"pairing-f", "pairing-value", "early-completion", "wrong-type", "missing-key", "value-type"}
)
"""Mutations whose error must name the line of the op that makes the file no history."""


@dataclass(frozen=True)
class Answer:
    """What one input got: a verdict (``valid``, and whether a checker crashed), or an
    error (its ``message``: stderr's lines), or ``fault`` (traceback, hang)."""

    valid: object = None
    message: str = ""
    crashed: bool = False
    fault: str = ""
    changed: bool = False
    """The verdict said a record changed since the run (its digest differs)."""


def classify(m: Mutant, path: Path, out: Path, time_limit: float, hang: float) -> tuple[str, float]:
    """Check one input; its outcome (see the module's docstring) and the seconds it
    took. The tree outside the output root must be as it was after it."""
    outside = path.parent.parent / "outside"
    before = _digest(outside)
    started = time.perf_counter()
    answer = _ask(m, path, out, time_limit, hang)
    took = time.perf_counter() - started
    if _changed(before, _digest(outside), outside / "run" if m.link == "run" else None):
        return "write-outside", took
    return _judge(m, path, answer, took, time_limit), took


def _judge(m: Mutant, path: Path, answer: Answer, took: float, time_limit: float) -> str:
    if answer.fault:
        return answer.fault
    if answer.crashed:
        return "crashed"
    if took > time_limit + OVERRUN_SLACK:
        return "overrun"
    if answer.message:
        if "\n" in answer.message:
            return "long-message"
        name = m.record if m.record in RECORDS else path.name  # the file to blame
        if name not in answer.message and path.name not in answer.message:
            return "unnamed-file"
        if m.mutation in SEMANTIC and not re.search(re.escape(name) + r":\d+", answer.message):
            return "unnamed-line"
        return "error"
    if "malformed history" in json.dumps(answer.valid, default=str):
        return "malformed-verdict"
    if m.must_fail:
        return "verdict-on-bad-input"
    broken = m.mutation in BROKEN.get(m.record, ())
    if m.evidence and answer.valid is True and (broken or not answer.changed):
        return "valid-without-evidence"
    return "verdict"


OVERRUN_SLACK: Final = 2.0
"""Seconds past its time limit that a check may take (issue 29: limit + 2 s)."""


def _ask(m: Mutant, path: Path, out: Path, time_limit: float, hang: float) -> Answer:
    """Run what ``m`` asks of ``path`` within an alarm of ``hang`` seconds. A run
    directory with a link planted, or tampered with, has its results and report written
    into itself (``check``), or is reported (``harness report``), or its folder indexed."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, hang)
    try:
        if m.seed.fmt == "dir" and m.writer == "report" and (m.link or m.evidence):
            return _command(["report", str(path)])
        if m.writer == "command":
            return _command(["check", "--time-limit", str(time_limit), str(path)])
        plant = m.seed.fmt == "dir" and (m.link or m.evidence)
        got = check_path(
            path,
            model=None,
            time_limit=time_limit,
            memory_limit=None,
            out=None if plant else out,
            oom=[b""],
            html=path / "report.html" if plant else None,
        )
        if plant and m.writer == "index":
            from core.writes import WriteRefused
            from harness.report import write_index

            with contextlib.suppress(WriteRefused):
                write_index(path.parent)
    except HarnessError as e:
        return Answer(message=str(e))
    except Hang:
        return Answer(fault="hang")
    except Exception:
        return Answer(fault="traceback")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    details = json.dumps(got.get("details"), default=str)
    valid = "malformed history" if "malformed history" in details else got.get("valid")
    changed = bool(got.get("changed"))
    return Answer(valid=valid, crashed="the checker crashed" in details, changed=changed)


def _command(argv: list[str]) -> Answer:
    """``harness ARGV`` in this process: a verdict (exit 0, 1, 2: ``valid``), or the
    error it printed (exit 254), or a crash (255, or "crashed" said)."""
    from harness.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(argv)
    said = stdout.getvalue() + stderr.getvalue()
    if code == 255 or "crashed" in said:
        return Answer(crashed=True)
    if code == 254:
        return Answer(message=stderr.getvalue().strip())
    changed = "changed: " in stdout.getvalue()
    return Answer(valid={0: True, 1: False}.get(code, "unknown"), changed=changed)


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
    """What a fuzzing run found: counts per (mutation, outcome), the findings kept and
    the slowest input of each mutation."""

    counts: Counter[tuple[str, str]]
    findings: list[str]
    inputs: int
    seconds: float
    slowest: dict[str, float] = field(default_factory=dict)

    def outcomes(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for (_, outcome), n in self.counts.items():
            out[outcome] += n
        return out


HUGE_TIME_LIMIT: Final = 3.0
"""The time limit of a ``RARE`` input's check (what a huge input tests is the bound)."""


def fuzz(
    seeds: list[Seed],
    inputs: int,
    seed: int,
    time_limit: float = 10.0,
    hang: float = 30.0,
    findings: Path | None = None,
    progress: Callable[[int, Counter[str]], None] | None = None,
    rare: float = 0.002,
) -> Report:
    """Check ``inputs`` mutants of ``seeds`` (a share ``rare`` of them huge); the
    findings are kept under ``findings``."""
    rng = random.Random(seed)
    report = Report(Counter(), [], inputs, 0.0)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fuzz-inputs-") as tmp:
        work, out = Path(tmp) / "input", Path(tmp) / "out"
        keep = findings or Path(tmp) / "findings"
        for n, m in enumerate(mutants(seeds, rng, rare)):
            if n >= inputs:
                break
            path = materialise(m, work)
            limit = min(time_limit, HUGE_TIME_LIMIT) if m.mutation in RARE else time_limit
            outcome, took = classify(m, path, out, limit, hang)
            report.counts[(m.mutation, outcome)] += 1
            report.slowest[m.mutation] = max(took, report.slowest.get(m.mutation, 0.0))
            said = f"{outcome}: {m.seed.name} {m.mutation} {m.record} {m.special}{m.link}"
            if outcome in FINDINGS:
                where = _keep(m, path, keep, n, outcome) if findings else path
                report.findings.append(f"{said} -> {where}")
            if progress is not None and n and not n % 1000:
                progress(n, report.outcomes())
    report.seconds = time.perf_counter() - started
    return report


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
    """Histories of ``scripts/gen_history.py`` (register and kv) and synthetic runs, each
    checked as a run's end checks it (its results.json holds the records' digests)."""
    from harness.analysis import check_run
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
    runs = {
        "synthetic-cas": cas_register_run(where / "cas", ops=80, faults=1, duration_s=3),
        "synthetic-lock": lock_run(where / "lock"),
    }
    for name, run in runs.items():
        check_run(run, at_run=True)  # its results.json, with the digests a run records
        seeds.append(Seed(name, run, "dir"))
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
    ap.add_argument(
        "--count", "--inputs", dest="count", type=int, default=10_000, help="inputs to check"
    )
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
        "--rare", type=float, default=0.002, help="share of huge inputs (10 MB values, 200,000 ops)"
    )
    ap.add_argument(
        "--shared-limit",
        type=int,
        default=None,
        help="at most this many reference histories of each format",
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="fuzz-seeds-") as tmp:
        seeds = all_seeds(Path(tmp), args.run_dir, args.shared_limit)
        print(f"{len(seeds)} seeds; {args.count} inputs, seed {args.seed}", flush=True)

        def progress(n: int, c: Counter[str]) -> None:
            print(f"  {n} inputs: {dict(sorted(c.items()))}", flush=True)

        findings = args.findings or Path(tempfile.mkdtemp(prefix="fuzz-findings-"))
        report = fuzz(
            seeds,
            args.count,
            args.seed,
            args.time_limit,
            args.hang,
            findings,
            progress,
            args.rare,
        )
    print(f"{report.inputs} inputs in {report.seconds:.0f} s")
    print("per mutation class (slowest input in s):")
    for mutation in sorted({m for m, _ in report.counts}):
        row = {o: n for (m, o), n in sorted(report.counts.items()) if m == mutation}
        print(f"  {mutation:22} {row} ({report.slowest[mutation]:.2f} s)")
    print(f"per outcome: {dict(sorted(report.outcomes().items()))}")
    for line in report.findings[:50]:
        print(f"  {line}")
    print(
        f"findings: {len(report.findings)}" + (f" (kept in {findings})" if report.findings else "")
    )
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
