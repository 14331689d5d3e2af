"""Operations: the immutable records a history is made of.

Jepsen semantics. Every client operation is recorded twice: an ``invoke`` when it starts and
one completion when it ends:

- ``ok``: it happened, ``value`` is its result;
- ``fail``: it certainly did not happen (for example the request was never sent);
- ``info``: its outcome is unknown (a timeout after sending, a lost connection). It may
  have taken effect at any time after its invocation, or never. A process whose operation
  ended ``info`` never invokes again: the runner gives its worker a new process id.

Faults are recorded as ``info`` operations of the process ``"nemesis"``.
Times are nanoseconds since the start of the run, on one monotonic clock shared by every
process of the run (``CLOCK_MONOTONIC`` is system-wide on Linux).
"""

from __future__ import annotations

import json
import sys
from typing import Annotated, Any, Final, Literal


def _import_msgspec() -> None:
    """Import msgspec without letting it import ``typing_extensions`` (and, with it,
    ``inspect``: a sixth of a small check's start-up). msgspec takes ``typing``'s
    ``get_type_hints`` instead, as it does where ``typing_extensions`` is not installed,
    and is the same on the Pythons we support (``typing`` has ``Annotated``,
    ``Required``, ``NotRequired``). Whoever imports ``typing_extensions`` later gets it."""
    if "msgspec" in sys.modules or "typing_extensions" in sys.modules:
        return
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # import fails
    try:
        import msgspec  # noqa: F401
    finally:
        del sys.modules["typing_extensions"]


_import_msgspec()

import msgspec  # noqa: E402

OpType = Literal["invoke", "ok", "fail", "info"]
OP_TYPES: Final = ("invoke", "ok", "fail", "info")
COMPLETION_TYPES: Final = ("ok", "fail", "info")
NEMESIS: Final = "nemesis"

Process = int | str
MAX_INT: Final = 2**62 - 1
"""The largest index, time or integer process (below the checkers' infinity, ``1 << 62``)."""

# What a decoded field must be (msgspec checks it as it parses; ``core.formats.fields``
# checks the same for every other reader).
_Count = Annotated[int, msgspec.Meta(ge=0, le=MAX_INT)]
_Name = Annotated[str, msgspec.Meta(min_length=1)]


class Op(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """One event of a history: an invocation or a completion.

    ``key`` is set for operations on independent keys (a CAS register per key, the kv
    model); ``error`` says why an operation failed or is unknown; ``node`` names the
    server the client talked to, when it knows.

    A msgspec struct: big JSONL histories are decoded into ops in C
    (``core.formats.jsonl_fast``); it holds no reference cycles, so the cyclic collector
    does not track it.
    """

    index: _Count
    time: _Count
    process: _Count | _Name
    type: OpType
    f: _Name
    value: Any = None
    key: Any = None
    error: str | None = None
    node: str | None = None

    def __post_init__(self) -> None:
        # The EDN reader in C (core/formats/_edn.c) checks the same of every op it reads
        # and fills the op's slots without calling this: a check added here goes there too.
        if self.type not in OP_TYPES:
            raise ValueError(f"op type must be one of {OP_TYPES}, not {self.type!r}")

    @property
    def is_invoke(self) -> bool:
        return self.type == "invoke"

    @property
    def is_client(self) -> bool:
        return self.process != NEMESIS

    def with_(self, **changes: Any) -> Op:
        """A copy with some fields changed."""
        return msgspec.structs.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: optional fields only when set."""
        d: dict[str, Any] = {
            "index": self.index,
            "time": self.time,
            "process": self.process,
            "type": self.type,
            "f": self.f,
            "value": self.value,
        }
        if self.key is not None:
            d["key"] = self.key
        if self.error is not None:
            d["error"] = self.error
        if self.node is not None:
            d["node"] = self.node
        return d

    def to_json(self) -> str:
        """The JSON form as one line: by msgspec when its value and key are plain (a
        tenth of ``json``'s cost, and a run writes two ops per operation), else by
        ``json``, whose rules for the rest (a NaN kept as ``NaN``) the readers know."""
        if _plain(self.value) and _plain(self.key):
            return _FAST.encode(self.to_dict()).decode()
        return _ENCODER.encode(self.to_dict())

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Op:
        return cls(
            index=int(d["index"]),
            time=int(d["time"]),
            process=d["process"],
            type=d["type"],
            f=str(d["f"]),
            value=d.get("value"),
            key=d.get("key"),
            error=d.get("error"),
            node=d.get("node"),
        )


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    return str(obj)


def _plain(value: Any) -> bool:
    """Whether msgspec writes ``value`` as ``json`` does (text that is not ASCII written as
    itself, not escaped: the same string read back): None, a bool, an int, a string, or a
    list or tuple of those; no float (msgspec writes a NaN as null)."""
    kind = type(value)
    if value is None or kind is int or kind is str or kind is bool:
        return True
    if kind is list or kind is tuple:
        return all(x is None or type(x) is int or type(x) is str for x in value)
    return False


_FAST: Final = msgspec.json.Encoder()
_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), default=_json_default)
"""``json.dumps`` with these arguments, made once: ``dumps`` builds an encoder per call
when given any, and a run encodes two ops per operation."""
