"""The report's pages: a verdict's badge, and a whole self-contained page (``page``); the
elements themselves are ``core.html``'s.

Every page is one self-contained file: styles and scripts are inlined from the package's
``static`` folder and data travels as JSON in a ``<script type="application/json">``
tag, so a page opened from disk, mailed, or archived by CI works offline and fetches
nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

from checkers.result import Validity
from core.html import esc, tag
from harness.report._runs import NOT_APPLICABLE, verdict_word


def badge(valid: Validity | None) -> str:
    """The verdict as a coloured word."""
    return word_badge(verdict_word(valid))


def word_badge(word: str) -> str:
    """A verdict word (valid, invalid, unknown, not checked, n/a) as a coloured badge."""
    cls = "not-applicable" if word == NOT_APPLICABLE else word.replace(" ", "-")
    return tag("span", esc(word.upper()), class_=f"badge {cls}")


@cache
def asset(name: str) -> str:
    """The text of a file of the package's ``static`` folder."""
    return resources.files("harness.report.static").joinpath(name).read_text(encoding="utf-8")


def json_script(data: Any, id_: str) -> str:
    """Data for the page's scripts. ``<`` is escaped so no text in it can end the tag."""
    text = json.dumps(data, separators=(",", ":"), default=str, allow_nan=False)
    text = text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f'<script type="application/json" id="{esc(id_)}">{text}</script>'


def page(
    title: str,
    body: str,
    *,
    styles: Sequence[str] = ("base.css",),
    scripts: Sequence[str] = (),
    data: Any = None,
) -> str:
    """A whole self-contained page: inline styles and scripts, optional JSON data."""
    css = "\n".join(asset(s) for s in styles)
    js = "\n".join(f"<script>\n{asset(s)}\n</script>" for s in scripts)
    payload = json_script(data, "data") if data is not None else ""
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        # No favicon request, from file:// or from `harness serve`.
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>\n{css}\n</style></head>\n"
        f"<body>\n{body}\n{payload}\n{js}\n</body></html>\n"
    )
