"""The bounds of a path a user names, as the file system bounds it, checked before
anything opens it: an empty name, a NUL byte, a component over ``NAME_MAX`` bytes or a
path over ``PATH_MAX`` is one line (``PathError``), never an OSError from deep inside.
Light to import: ``harness check`` checks its paths before anything else is loaded."""

from __future__ import annotations

import os
from typing import Final

from core.errors import HarnessError

NAME_MAX: Final = 255
"""Bytes of one component of a path (Linux's ``NAME_MAX``)."""
PATH_MAX: Final = 4096
"""Bytes of a whole path (Linux's ``PATH_MAX``)."""


class PathError(HarnessError, ValueError):
    """A path no file system takes; the message says what is wrong and what to do."""


def check_path(value: str, what: str) -> str:
    """A path a user names (``what``: the option or argument, for the message): not empty,
    no NUL byte, each component at most ``NAME_MAX`` bytes and the whole at most
    ``PATH_MAX``, as the file system allows; PathError (one line) otherwise."""
    if not isinstance(value, str) or not value:
        raise PathError(f"{what}: an empty path names nothing: give a file or folder")
    if "\0" in value:
        raise PathError(f"{what}: {value!r:.60} holds a NUL byte, which no path can")
    size = len(os.fsencode(value))
    if size > PATH_MAX:
        raise PathError(
            f"{what}: a path of {size} bytes, longer than the {PATH_MAX} a path may have: "
            "give a shorter one"
        )
    long = next((p for p in value.split("/") if len(os.fsencode(p)) > NAME_MAX), None)
    if long is not None:
        raise PathError(
            f"{what}: {value[:40]!r}... has a name of {len(os.fsencode(long))} bytes, longer "
            f"than the {NAME_MAX} a file or folder name may have: give a shorter one"
        )
    return value
