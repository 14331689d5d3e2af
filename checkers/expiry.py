"""When the run's service ends a lease its holder stopped renewing, by its documented rule.

A lease's deadline is its last renewal plus its TTL; a service may keep it past that. The
rule is data the run's target declares (``clusters.spec.ServiceRule.expiry_ttls``) and the
run records in test.json's ``service_rules``: Consul invalidates a session no sooner than
its TTL after the last renewal and up to twice the TTL after it. The checkers measure a
handover by it: a grant between the deadline and the rule's latest end is the service
keeping its word, not slowness; only a grant past the latest end is a delay.

A run that recorded no such rule (every other target, and runs from before the rules were
recorded) has the plain rule: the lease ends at its deadline.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from checkers.words import NS


@dataclass(frozen=True, slots=True)
class ExpiryRule:
    """The latest end of a lease, in TTLs after its last renewal (``ttls``; 1: at its
    deadline), and where the service documents it."""

    ttls: float = 1.0
    target: str = "the service"
    setting: str | None = None
    value: str | None = None
    source: str | None = None

    @property
    def lazy(self) -> bool:
        """Whether the service may keep a lease past its deadline."""
        return self.ttls > 1

    def latest(self, deadline: int, ttl: float | None) -> int:
        """The latest end the rule allows of a lease whose deadline (last renewal + TTL)
        is ``deadline``, with TTL ``ttl`` seconds (None: unknown, the deadline)."""
        if ttl is None:
            return deadline
        return deadline + int((self.ttls - 1) * ttl * NS)

    def words(self) -> str:
        """``consul's documented rule (session TTL a lower bound): a lease ends up to
        2 x TTL after its last renewal [source]``; the plain rule in plain words."""
        if not self.lazy:
            return "a lease ends at its last renewal + TTL"
        what = f" ({self.setting} {self.value})" if self.setting and self.value else ""
        cited = f" [{self.source}]" if self.source else ""
        return (
            f"{self.target}'s documented rule{what}: a lease ends up to {self.ttls:g} x TTL "
            f"after its last renewal{cited}"
        )

    def short(self) -> str:
        """``by consul's rule, up to 2 x TTL after the last renewal``, for a matrix cell."""
        return f"by {self.target}'s rule, up to {self.ttls:g} x TTL after the last renewal"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ttls": self.ttls,
            "target": self.target,
            "setting": self.setting,
            "value": self.value,
            "source": self.source,
        }


AT_DEADLINE: Final = ExpiryRule()
"""The plain rule: a lease ends at its last renewal + TTL."""


def recorded_rule(
    test: Mapping[str, Any], key: str, least: float
) -> tuple[str, Mapping[str, Any], float] | None:
    """The first of test.json's ``service_rules`` whose number ``key`` is at least
    ``least``: the run's target (or "the service"), the rule, the number; else None."""
    options = test.get("options")
    target = options.get("target") if isinstance(options, Mapping) else None
    for r in test.get("service_rules") or ():
        number = r.get(key) if isinstance(r, Mapping) else None
        if isinstance(number, int | float) and not isinstance(number, bool) and number >= least:
            return (target if isinstance(target, str) else "the service", r, float(number))
    return None


def expiry_rule(test: Mapping[str, Any]) -> ExpiryRule:
    """The expiry rule a run recorded (test.json's ``service_rules``: the entry with
    ``expiry_ttls``), else ``AT_DEADLINE``."""
    found = recorded_rule(test, "expiry_ttls", 1)
    if found is None:
        return AT_DEADLINE
    target, r, ttls = found
    return ExpiryRule(
        ttls, target, _text(r.get("setting")), _text(r.get("value")), _text(r.get("source"))
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None
