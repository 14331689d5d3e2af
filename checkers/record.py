"""What the checkers of a run read: its history and the side logs, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.history import History


@dataclass(frozen=True)
class RunRecord:
    """A run's records: the history, the protected resource's write log, client and
    service events (lease grants, keepalive acknowledgements, losses), and test.json."""

    history: History
    resource_log: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    test: dict[str, Any] = field(default_factory=dict)

    @property
    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = self.test.get("options", {})
        return opts
