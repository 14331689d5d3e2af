"""Small HTML building blocks for every page the harness writes and every section drawn on
one: the report's own and the sections each workload declares (``Workload.sections``), which
live above the report's floor and so cannot import it.

Text from a run is escaped by ``esc``; the strings these helpers take as ``content`` are
HTML already. The page itself (inlined styles and scripts, data as JSON) is the report's:
``harness/report/_html.py``.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from typing import Any


def esc(value: Any) -> str:
    """Text as HTML."""
    return html.escape("" if value is None else str(value), quote=True)


def tag(name: str, content: str = "", **attrs: Any) -> str:
    """An element; ``class_`` stands for ``class``, None attributes are left out."""
    parts = [name]
    for k, v in attrs.items():
        if v is None or v is False:
            continue
        key = k.rstrip("_").replace("_", "-")
        parts.append(key if v is True else f'{key}="{esc(v)}"')
    return f"<{' '.join(parts)}>{content}</{name}>"


def table(
    headers: Sequence[str],
    rows: Iterable[Sequence[str]],
    class_: str = "",
    *,
    row_classes: Sequence[str] | None = None,
    id_: str | None = None,
) -> str:
    """A table of already-HTML cells; ``row_classes`` gives each body row a class."""
    head = "".join(tag("th", esc(h)) for h in headers)
    body = "".join(
        tag(
            "tr", "".join(tag("td", c) for c in row), class_=row_classes[i] if row_classes else None
        )
        for i, row in enumerate(rows)
    )
    return tag(
        "table", tag("thead", tag("tr", head)) + tag("tbody", body), class_=class_ or None, id=id_
    )


def definitions(items: Iterable[tuple[str, str]]) -> str:
    """A definition list of (term, already-HTML description) pairs."""
    return tag("dl", "".join(tag("dt", esc(k)) + tag("dd", v) for k, v in items))
