"""Splitting a history into independent parts by key, for models whose keys do not
interact (P-compositionality: the history is linearizable iff every part is)."""

from __future__ import annotations

from typing import Any

from core.history import History
from core.ops import NEMESIS, Op


def by_key(history: History) -> list[tuple[Any, History]]:
    """Partition by ``op.key``: one part per key (a single part when no op has a key);
    nemesis ops are left out of keyed parts, as in ``History.by_key``. Keys must be
    hashable."""
    # Plain loops: attribute reads of slotted ops are faster here than ``attrgetter``.
    for op in history:
        if op.key is not None:
            break
    else:
        return [(None, history)] if len(history) else []
    parts: dict[Any, list[Op]] = {}
    get = parts.get
    for op in history:
        if op.process == NEMESIS:
            continue
        k = op.key
        part = get(k)
        if part is None:
            parts[k] = [op]
        else:
            part.append(op)
    return [(k, History(part)) for k, part in parts.items()]
