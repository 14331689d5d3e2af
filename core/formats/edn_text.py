"""EDN text of a value, apart from the reader (``core.formats.edn``, whose patterns cost a
millisecond to compile at import): the fast path (``core.formats.edn_fast``) renders an
error vector such as ``[:timeout nil]`` with it, and a check of small files that path
reads should not pay for the reader."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["dumps"]


def dumps(value: Any) -> str:
    """A compact EDN rendering, for messages and for errors read from EDN (a vector error
    such as ``[:temporarily-unavailable nil]`` is kept as that text)."""
    if value is None:
        return "nil"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        if value and re.fullmatch(r"[A-Za-z*+!_?<>=-][\w*+!?<>=./-]*", value):
            return ":" + value
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, dict):
        return "{" + ", ".join(f"{dumps(k)} {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (set, frozenset)):
        return "#{" + " ".join(dumps(v) for v in value) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + " ".join(dumps(v) for v in value) + "]"
    return str(value)
