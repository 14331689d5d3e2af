"""History readers: our JSONL, Jepsen EDN, porcupine's etcd and kv logs.

``read_history(path)`` sniffs the format from the content and returns the history with the
linearizability model that format implies (its authors' semantics):

=================  ==============================================  ===============
format             what it is                                      default model
=================  ==============================================  ===============
``jsonl``          our ``history.jsonl`` (or a run directory)      from test.json
``edn``            Knossos ``data/`` files, Jepsen ``history.edn``  ``cas-register``
``porcupine-etcd`` porcupine's ``test_data/jepsen/etcd_*.log``      ``etcd``
``porcupine-kv``   porcupine's ``test_data/kv/c*.txt``              ``kv``
=================  ==============================================  ===============

Every reader raises ``FormatError`` with a one-line message (file, line, what is wrong,
what to do): for an op whose fields are wrong, for ops that break the op semantics (a
completion of another ``f`` or key than its invocation's, or timed before it: see
``core.formats.semantics``) and for a file without a client's op. ``op_line`` finds the
line of an op again, for an error found later (a value of the wrong type for the model).
"""

from __future__ import annotations

from core.compiled import extend_path

__path__ = extend_path(__name__, __path__)  # the checks of big JSONL files, compiled

import gc
import os
import re
import stat
from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from core.formats.budget import Budget, OutOfBudget
from core.formats.errors import FilePath, FormatError, format_error
from core.formats.fields import MAX_INT
from core.formats.files import decode, open_regular, read_rest
from core.formats.jsonl import read_history_jsonl, read_json, truncation_note
from core.formats.semantics import refuse_empty
from core.history import History
from core.ops import Op

__all__ = [
    "FORMATS",
    "Budget",
    "FormatError",
    "OutOfBudget",
    "Read",
    "default_model",
    "detect_format",
    "history_file",
    "history_stat",
    "op_line",
    "read_file",
    "read_history",
]

HISTORY_FILE: Final = "history.jsonl"

FORMATS: Final = ("jsonl", "edn", "porcupine-etcd", "porcupine-kv")
ModelOf = Callable[[str], "str | None"]
"""The linearizability model of a workload's histories (None: it has none), asked only when
a history's test.json names its workload: the workloads know, the formats do not."""

DEFAULT_MODELS: Final = {"edn": "cas-register", "porcupine-etcd": "etcd", "porcupine-kv": "kv"}
_BY_SUFFIX: Final = {".jsonl": "jsonl", ".json": "jsonl", ".edn": "edn", ".log": "porcupine-etcd"}
_SNIFF_BYTES: Final = 4096
_KV_FS: Final = r":f\s+:(?:get|put|append)\b"
"""The ops of a porcupine kv log (compiled on first use, by ``re``'s cache: a check of
EDN or JSONL files never needs it, nor the etcd log's pattern)."""


class Read(NamedTuple):
    """A history read from a file: the ops, the model its format implies (``""`` when it
    implies none), the format, and notes to say (a truncated last line left out)."""

    history: History
    model: str
    format: str
    notes: tuple[str, ...] = ()


def detect_format(path: FilePath) -> str:
    """The format of a history file, from its first bytes (its suffix when it is empty).

    A run directory means its ``history.jsonl``.
    """
    path = history_file(path)
    with open_regular(path) as f:
        return _sniff(path, f.read(_SNIFF_BYTES))


def _sniff(path: FilePath, head_bytes: bytes) -> str:
    head = head_bytes.decode("utf-8", "replace")  # only to recognise the format
    stripped = head.lstrip()
    if not stripped:
        suffix = os.path.splitext(path)[1]
        if suffix == ".txt":
            return "porcupine-kv"
        return _BY_SUFFIX.get(suffix, "jsonl")
    if stripped.startswith("INFO") and re.match(r"INFO\s+jepsen\.util", stripped):
        return "porcupine-etcd"
    if stripped.startswith('{"'):
        return "jsonl"
    if stripped[0] in "[(;{#":
        first = stripped.split("}", 1)[0]
        if ":key" in first and re.search(_KV_FS, first):
            return "porcupine-kv"
        return "edn"
    raise format_error(
        path,
        1,
        f"unrecognised history format (starts with {stripped[:30]!r})",
        f"give a file in one of: {', '.join(FORMATS)}",
    )


def read_history(path: FilePath, model_of: ModelOf | None = None) -> tuple[History, str]:
    """The history in a file (or run directory) and the default model name for it.

    The model is ``""`` when the format does not imply one (a JSONL history without a
    test.json naming its model, or a workload ``model_of`` gives the model of).
    """
    read = read_file(path, model_of=model_of)
    return read.history, read.model


def read_file(
    path: FilePath,
    budget: Budget | None = None,
    max_time: int = MAX_INT,
    model_of: ModelOf | None = None,
) -> Read:
    """The history in a file (or run directory), read within ``budget`` (OutOfBudget when
    it runs out), with the model its format implies and what to say about it. Times
    above ``max_time`` (ns) are errors; ``model_of`` maps the workload a JSONL
    history's test.json names to its model (the workloads' registry knows them). Raises
    FormatError (one line) for anything that is not a history of a known format."""
    path = history_file(path)
    read = _read_file(path, budget, max_time, model_of)
    refuse_empty(path, read.history.ops)
    return read


def _read_file(
    path: FilePath, budget: Budget | None, max_time: int, model_of: ModelOf | None
) -> Read:
    paused = gc.isenabled()
    gc.disable()  # reading makes many long-lived objects and no cycles
    try:
        with open_regular(path) as f:
            head = f.read(_SNIFF_BYTES)
            fmt = _sniff(path, head)
            f.seek(0)
            if fmt == "jsonl":
                history, cut = read_history_jsonl(path, budget, max_time, f)
                notes = () if cut is None else (truncation_note(path, cut),)
                return Read(history, default_model(path, model_of), fmt, notes)
            text = decode(path, read_rest(path, f, budget))
        if fmt == "porcupine-etcd":
            from core.formats.porcupine_etcd import read_etcd_log

            return Read(read_etcd_log(path, text, budget), DEFAULT_MODELS[fmt], fmt)
        from core.formats.jepsen_edn import read_edn_history

        history = read_edn_history(path, text, budget, kv=fmt == "porcupine-kv")
        return Read(history, DEFAULT_MODELS[fmt], fmt)
    finally:
        if paused:
            gc.enable()


def op_line(path: FilePath, fmt: str, ops: Sequence[Op], op: Op) -> int | None:
    """The line of ``op`` in the file ``ops`` were read from (``path``, in the format
    ``fmt``), for an error found after reading (a value of the wrong type for the model);
    None when ``op`` is not one of ``ops`` (an op a checker made)."""
    at = next((i for i, o in enumerate(ops) if o is op), None)
    if at is None:
        return None
    path = history_file(path)
    if fmt == "jsonl":
        from core.formats.jsonl import op_line as line
    elif fmt == "porcupine-etcd":
        from core.formats.porcupine_etcd import op_line as line
    else:
        from core.formats.jepsen_edn import op_line as line
    return line(path, at)


def default_model(path: FilePath, model_of: ModelOf | None = None) -> str:
    """The model for a JSONL history: ``model`` (top level or under ``options``) in the
    test.json beside it, else the model ``model_of`` gives its ``workload``; ``""``
    if neither says."""
    test = os.path.join(os.path.dirname(path), "test.json")
    if not os.path.isfile(test):
        return ""
    data = read_json(test)
    if not isinstance(data, dict):
        return ""
    for section in (data, data.get("options"), data.get("opts")):
        if isinstance(section, dict):
            if isinstance(section.get("model"), str):
                return str(section["model"])
            workload = section.get("workload")
            model = model_of(workload) if model_of and isinstance(workload, str) else None
            if model:
                return model
    return ""


def history_file(path: FilePath) -> FilePath:
    """The history file a path names: itself, or a run directory's ``history.jsonl``.
    FormatError if there is none; what it is, if it is not a regular file, is said when
    it is opened."""
    return history_stat(path)[0]


def history_stat(path: FilePath) -> tuple[FilePath, int]:
    """The history file a path names (``history_file``) and its size in bytes, from one
    look at a file (two at a run directory: it, then its ``history.jsonl``), none opened.
    FormatError as ``history_file`` says; a size of 0 for a run directory's history that
    cannot be looked at (a dangling link), which its opening then says in words."""
    try:
        found = os.stat(path)
    except FileNotFoundError:
        raise format_error(path, None, "no such file or directory", "check the path") from None
    except OSError as e:
        problem = f"cannot look at it ({e.strerror})"
        raise format_error(path, None, problem, "check the path") from None
    if not stat.S_ISDIR(found.st_mode):
        return path, found.st_size
    candidate = os.path.join(path, HISTORY_FILE)
    if not os.path.lexists(candidate):
        raise format_error(
            path, None, "a directory without history.jsonl", "give a run directory or a file"
        )
    try:
        return candidate, os.stat(candidate).st_size
    except OSError:
        return candidate, 0
