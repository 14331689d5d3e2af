"""What a workload draws in reports, declared with it: its run's sections and its tables
across runs.

A workload names them in its ``Workload`` as ``module:attribute`` references
(``sections``: each a ``Section``; ``across``: an ``Across``), which the report loads
through the registry when it draws a run of that workload, so neither ``harness report``
nor ``harness compare`` names a workload or imports its modules before they are needed.
They draw with the ground floor's HTML elements (``core.html``) from what the run recorded
and its checkers found, nothing else: the picture and the verdict agree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from checkers.record import RunRecord
from checkers.windows import FaultWindow


@dataclass(frozen=True, slots=True)
class RunView:
    """What a section reads of one run: its records, its ``results.json`` (empty when it
    was not checked) and its fault windows (None when its history is malformed: no
    section drawn against time)."""

    record: RunRecord
    results: Mapping[str, Any] = field(default_factory=dict)
    windows: Sequence[FaultWindow] | None = ()

    def checker(self, name: str) -> dict[str, Any] | None:
        """The result of the checker ``name`` (its details), None when it has none."""
        found = (self.results.get("checkers") or {}).get(name)
        return found if isinstance(found, dict) else None


Section = Callable[[RunView], str]
"""A run's section of the report: HTML, '' when the run has nothing of it to show."""


@dataclass(frozen=True, slots=True)
class Measured:
    """One run as a table across runs reads it: its target (as the report labels it), its
    verdict in a word and its checkers' results (``results.json``'s ``checkers``)."""

    target: str
    verdict: str
    checkers: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Across:
    """What a workload shows over many runs (``harness compare``, a sweep's page): the
    runs that measured it as Markdown (a terminal, a README) under its ``title``, and as
    an HTML section with its own heading; each '' when none did."""

    title: str
    markdown: Callable[[Sequence[Measured]], str]
    html: Callable[[Sequence[Measured]], str]
