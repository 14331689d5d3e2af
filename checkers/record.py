"""What the checkers of a run read: its history and the side logs, as plain data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.history import History


@dataclass(frozen=True)
class RunRecord:
    """A run's records: the history, the protected resource's write log, the client
    events (lease grants, keepalive acknowledgements, losses), test.json, and the
    service's own events when it keeps a log (the sim server's exact lease grants,
    renewals, expiries and lock grants: ``run_dir/sim/events.jsonl``); ``notes``
    say what reading them left out."""

    history: History
    resource_log: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    test: dict[str, Any] = field(default_factory=dict)
    service_events: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What reading the records left out, said with the results (a truncated last line)."""

    @property
    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = self.test.get("options", {})
        return opts

    @property
    def extra(self) -> dict[str, Any]:
        """The free-form options (``--extra``-style settings such as ``accept_unavailable``)."""
        extra = self.options.get("extra") or {}
        return extra if isinstance(extra, dict) else {}
