"""Jepsen store directories: what ``store/<test>/<time>/`` holds that we read.

Jepsen saves each test in a directory of its own: ``history.edn`` (the operations, read by
``core.formats.jepsen_edn`` like any EDN history) and ``results.edn``, the map its checkers
returned, whose ``:valid?`` is Jepsen's own verdict (``true``, ``false`` or ``:unknown``)
and whose entries that are maps with a ``:valid?`` of their own are its checkers'. We check
the history ourselves and say Jepsen's verdict beside ours: theirs composes every checker
the test ran, ours is linearizability alone, so the two may rightly differ.

A directory holding our own ``history.jsonl`` is a run directory, never a store.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final, NamedTuple

from core.formats.budget import Budget, OutOfBudget
from core.formats.edn import EdnError, loads
from core.formats.errors import FormatError
from core.formats.files import read_text

__all__ = ["STORE_HISTORY", "STORE_RESULTS", "JepsenVerdict", "is_store", "read_verdict"]

STORE_HISTORY: Final = "history.edn"
STORE_RESULTS: Final = "results.edn"
_RUN_HISTORY: Final = "history.jsonl"


class JepsenVerdict(NamedTuple):
    """What a store's ``results.edn`` says: ``valid`` is its ``:valid?`` (True, False,
    ``"unknown"``; None when it says none or cannot be read), ``said`` the line to print
    (``jepsen said valid? true``, or why nothing is said) and ``checkers`` each checker's
    ``:valid?`` in Jepsen's words, as (name, word) pairs."""

    valid: bool | str | None
    said: str
    checkers: tuple[tuple[str, str], ...] = ()


def is_store(path: Path) -> bool:
    """Whether ``path`` is a Jepsen store directory: a directory with ``history.edn`` and
    without our ``history.jsonl``."""
    return (
        path.is_dir()
        and not os.path.lexists(path / _RUN_HISTORY)
        and os.path.lexists(path / STORE_HISTORY)
    )


def read_verdict(store: Path, budget: Budget | None = None) -> JepsenVerdict:
    """Jepsen's verdict in ``store/results.edn``, read within ``budget``'s memory; a file
    that is missing, too big or not a results map gives a verdict of None that says so
    (it never stops our own check)."""
    path = store / STORE_RESULTS
    if not os.path.lexists(path):
        return JepsenVerdict(
            None, f"jepsen said nothing: no {STORE_RESULTS} (its analysis never ran)"
        )
    try:
        results = loads(read_text(path, budget))
    except FormatError as e:
        return JepsenVerdict(None, f"jepsen's verdict unread: {e}")
    except OutOfBudget as e:
        return JepsenVerdict(None, f"jepsen's verdict unread: {path}: {e}")
    except EdnError as e:
        return JepsenVerdict(
            None, f"jepsen's verdict unread: {path}:{e.line}: not EDN ({e.reason})"
        )
    if not isinstance(results, dict) or "valid?" not in results:
        return JepsenVerdict(None, f"jepsen's verdict unread: {path} has no top-level :valid?")
    valid = results["valid?"]
    checkers = tuple(
        (str(name), word(r["valid?"]))
        for name, r in results.items()
        if isinstance(r, dict) and "valid?" in r
    )
    if not isinstance(valid, bool):
        valid = str(valid)
    return JepsenVerdict(valid, f"jepsen said valid? {word(valid)}", checkers)


def word(valid: Any) -> str:
    """A ``:valid?`` as Jepsen prints it: ``true``, ``false``, ``:unknown``."""
    if isinstance(valid, bool):
        return "true" if valid else "false"
    return f":{valid}" if isinstance(valid, str) else str(valid)
