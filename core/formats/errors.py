"""The one error every history reader raises."""

from __future__ import annotations

from pathlib import Path


class FormatError(ValueError):
    """A history file that cannot be read. The message is one line: the file (and line),
    what is wrong, and what to do about it."""


def format_error(path: Path, line: int | None, problem: str, fix: str) -> FormatError:
    """A FormatError saying ``path:line: problem; fix``."""
    where = f"{path}:{line}" if line is not None else str(path)
    return FormatError(f"{where}: {problem}; {fix}")
