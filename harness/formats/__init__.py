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
what to do).
"""

from __future__ import annotations

import gc
import json
import re
from pathlib import Path
from typing import Final

from harness.formats.errors import FormatError, format_error
from harness.history import History

__all__ = ["FORMATS", "FormatError", "default_model", "detect_format", "read_history"]

FORMATS: Final = ("jsonl", "edn", "porcupine-etcd", "porcupine-kv")
DEFAULT_MODELS: Final = {"edn": "cas-register", "porcupine-etcd": "etcd", "porcupine-kv": "kv"}
# Our workloads and the model that checks their histories (a test.json may also name one).
WORKLOAD_MODELS: Final = {"cas-register": "register", "register": "register", "lock": "mutex"}
_BY_SUFFIX: Final = {".jsonl": "jsonl", ".json": "jsonl", ".edn": "edn", ".log": "porcupine-etcd"}
_SNIFF_BYTES: Final = 4096
_KV_FS: Final = re.compile(r":f\s+:(?:get|put|append)\b")


def detect_format(path: Path | str) -> str:
    """The format of a history file, from its first bytes (its suffix when it is empty).

    A run directory means its ``history.jsonl``.
    """
    path = _history_file(Path(path))
    head = _head(path)
    stripped = head.lstrip()
    if not stripped:
        if path.suffix == ".txt":
            return "porcupine-kv"
        return _BY_SUFFIX.get(path.suffix, "jsonl")
    if re.match(r"INFO\s+jepsen\.util", stripped):
        return "porcupine-etcd"
    if stripped.startswith('{"'):
        return "jsonl"
    if stripped[0] in "[(;{#":
        first = stripped.split("}", 1)[0]
        if ":key" in first and _KV_FS.search(first):
            return "porcupine-kv"
        return "edn"
    raise format_error(
        path,
        1,
        f"unrecognised history format (starts with {stripped[:30]!r})",
        f"give a file in one of: {', '.join(FORMATS)}",
    )


def read_history(path: Path | str) -> tuple[History, str]:
    """The history in a file (or run directory) and the default model name for it.

    The model is ``""`` when the format does not imply one (a JSONL history without a
    test.json naming its workload or model).
    """
    path = _history_file(Path(path))
    fmt = detect_format(path)
    paused = gc.isenabled()
    gc.disable()  # reading makes many long-lived objects and no cycles
    try:
        if fmt == "jsonl":
            return _read_jsonl(path), default_model(path)
        text = _text(path)
        if fmt == "porcupine-etcd":
            from harness.formats.porcupine_etcd import read_etcd_log

            return read_etcd_log(path, text), DEFAULT_MODELS[fmt]
        from harness.formats.jepsen_edn import read_edn_history

        return read_edn_history(path, text), DEFAULT_MODELS[fmt]
    finally:
        if paused:
            gc.enable()


def default_model(path: Path) -> str:
    """The model for a JSONL history: ``model`` (top level or under ``options``) in the
    test.json beside it, else the model of its ``workload``; ``""`` if neither says."""
    test = path.parent / "test.json"
    if not test.is_file():
        return ""
    try:
        data = json.loads(test.read_text())
    except (OSError, ValueError):
        return ""
    if not isinstance(data, dict):
        return ""
    for section in (data, data.get("options"), data.get("opts")):
        if isinstance(section, dict):
            if isinstance(section.get("model"), str):
                return str(section["model"])
            workload = section.get("workload")
            if isinstance(workload, str) and workload in WORKLOAD_MODELS:
                return WORKLOAD_MODELS[workload]
    return ""


def _history_file(path: Path) -> Path:
    if path.is_dir():
        candidate = path / "history.jsonl"
        if not candidate.is_file():
            raise format_error(
                path, None, "a directory without history.jsonl", "give a run directory or a file"
            )
        return candidate
    if not path.is_file():
        raise format_error(path, None, "no such file", "check the path")
    return path


def _head(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(_SNIFF_BYTES).decode("utf-8", "replace")
    except OSError as e:
        raise format_error(
            path, None, f"cannot read it ({e.strerror})", "check permissions"
        ) from None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise format_error(
            path, None, f"cannot read it ({e.strerror})", "check permissions"
        ) from None


def _read_jsonl(path: Path) -> History:
    from harness.store import read_history_jsonl

    try:
        return read_history_jsonl(path)
    except ValueError as e:
        msg = str(e)
        if msg.startswith(str(path)):
            msg = msg[len(str(path)) + 1 :]
        line, _, problem = msg.partition(": ")
        raise format_error(
            path,
            int(line) if line.isdigit() else None,
            problem or msg,
            "each line must be one op object with index, time, process, type and f",
        ) from None
