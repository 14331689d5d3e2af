"""What a power cut may take of what the service acknowledged, by its documented setting.

A target declares it per setting (``clusters.spec.ServiceRule.lost_within_s``) and the run
records it in test.json's ``service_rules``: Redis under ``appendfsync everysec`` fsyncs
about once a second, so a write acknowledged up to 2 s before the machine loses power may
be gone ("you may lose 1 second of data"; a slow fsync postpones the next write up to
2 s); under ``appendfsync always`` it fsyncs before answering, so nothing acknowledged may
be (``0``: the setting promises durability). ZooKeeper's ``forceSync``, PostgreSQL's
``synchronous_commit`` (the last 3 x ``wal_writer_delay``, 0.6 s) and ``fsync``, and etcd's
``--unsafe-no-fsync`` are said the same way (``clusters/<target>/spec.py``). The
classification of a takeover across a power cut and of a fencing number granted again
after one (``checkers.classify``) and of an id handed out again (``checkers.ids``) read it:
what the rule says may be lost is named as lost as
documented; under a setting that promised durability the records cannot tie the
acknowledged write to the bytes discarded, and nobody is blamed (``unexplained``).

A run that recorded no such rule (a setting that keeps nothing, such as Redis without
persistence, other targets, older runs) gets None: a crash is a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from checkers.expiry import recorded_rule


@dataclass(frozen=True, slots=True)
class DurabilityRule:
    """The longest a write acknowledged before a power cut may be lost (``within_s``; 0:
    none may be), the setting that says so and where it is documented."""

    within_s: float
    target: str = "the service"
    setting: str = "?"
    value: str = "?"
    source: str = ""

    @property
    def promises(self) -> bool:
        """Whether the setting promises that nothing acknowledged is lost."""
        return self.within_s <= 0

    def named(self) -> str:
        """``appendfsync everysec``."""
        return f"{self.setting} {self.value}"


def durability_rule(test: Mapping[str, Any]) -> DurabilityRule | None:
    """The durability rule a run recorded (test.json's ``service_rules``: the entry with
    ``lost_within_s``), else None."""
    found = recorded_rule(test, "lost_within_s", 0)
    if found is None:
        return None
    target, r, within = found
    return DurabilityRule(
        within,
        target,
        str(r.get("setting") or "?"),
        str(r.get("value") or "?"),
        str(r.get("source") or ""),
    )
