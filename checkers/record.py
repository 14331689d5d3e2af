"""What the checkers of a run read: its history and the side logs, as plain data.

Every checker has one signature, ``check_record(record: RunRecord) -> CheckResult``
(``Checker``): what it needs beyond the records comes from them too, the options the run
recorded (test.json) and the check-time settings (``Limits``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from checkers.result import CheckResult
from core.formats.budget import Budget
from core.history import History


@dataclass(frozen=True, slots=True)
class Limits:
    """Check-time settings, not recorded by the run: ``time_limit`` is the seconds a
    search may spend (``harness check --time-limit``, or what the budget has left); None:
    each checker's own default. ``budget``: the check's time and memory (``harness check
    --memory-limit``), which a search polls as it grows (None: the address space's cap)."""

    time_limit: float | None = None
    budget: Budget | None = None


@dataclass(frozen=True, slots=True)
class Reading:
    """What reading one record file of a run directory found (``harness.analysis``):
    whether it was there, how many entries it held and the line of a last entry cut
    short mid-JSON that was left out (None: none). ``checkers.evidence`` judges it."""

    file: str
    """Its name in the run directory: ``resource.jsonl``, ``sim/events.jsonl``."""
    present: bool
    entries: int = 0
    cut_line: int | None = None


@dataclass(frozen=True)
class RunRecord:
    """A run's records: the history, the protected resource's write log, the client
    events (lease grants, keepalive acknowledgements, losses), test.json, and the
    service's own events when it keeps a log (the sim server's exact lease grants,
    renewals, expiries and lock grants: ``run_dir/sim/events.jsonl``); ``notes``
    say what reading them left out; ``limits`` the check-time settings."""

    history: History
    resource_log: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    test: dict[str, Any] = field(default_factory=dict)
    service_events: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """What reading the records left out, said with the results (a truncated last line)."""
    limits: Limits = field(default_factory=Limits)
    readings: dict[str, Reading] = field(default_factory=dict)
    """What reading each record file found, by record kind (``checkers.evidence``: the
    history, resource, events, service); empty for records built in memory, whose files
    nobody read."""
    proven: Mapping[Any, Any] = field(default_factory=dict)
    """What a check during the run proved of the history, by key
    (``checkers.linear.resume.Cut``): the check that ends the run starts from there; any
    later check (no such proof at hand) searches the whole history."""

    @property
    def keeps_service_log(self) -> bool:
        """Whether the run's service keeps a log of its own that the run collected
        (test.json's ``service_log``: the sim's events; etcd, ZooKeeper, Consul... none)."""
        return isinstance(self.test.get("service_log"), str)

    @property
    def options(self) -> dict[str, Any]:
        opts: dict[str, Any] = self.test.get("options", {})
        return opts

    def option(self, name: str, default: Any = None) -> Any:
        """The recorded option ``name``; older runs kept some in an ``extra`` table."""
        if name in self.options:
            return self.options[name]
        extra = self.options.get("extra") or {}
        return extra.get(name, default) if isinstance(extra, dict) else default

    @property
    def linearizable_locks(self) -> bool:
        """Whether the run's target claims its locks are linearizable (a fact test.json
        records: ``linearizable_locks``)."""
        return bool(self.test.get("linearizable_locks"))

    def time_limit(self, default: float | None) -> float | None:
        """The seconds a search may spend: the check-time limit, else ``default``."""
        return default if self.limits.time_limit is None else self.limits.time_limit


Checker = Callable[[RunRecord], CheckResult]
"""The one signature of every checker: a run's records in, a result out."""
