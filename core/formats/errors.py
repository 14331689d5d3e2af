"""The one error every history reader raises."""

from __future__ import annotations

import os
from typing import TypeAlias

FilePath: TypeAlias = "str | os.PathLike[str]"
"""A file a reader is given: its name, or a ``pathlib.Path``. The readers and
``harness check`` of a history file go by names and ``os.path`` (``pathlib`` and the
``urllib.parse`` it imports cost a small check's start-up 3 ms), and say a path as given."""


class FormatError(ValueError):
    """A history file that cannot be read. The message is one line: the file (and line),
    what is wrong, and what to do about it."""


def format_error(path: FilePath, line: int | None, problem: str, fix: str) -> FormatError:
    """A FormatError saying ``path:line: problem; fix``."""
    where = f"{path}:{line}" if line is not None else str(path)
    return FormatError(f"{where}: {problem}; {fix}")
