"""A grant lost to a power cut (issue 34), named by the run's fsync setting: lost as
documented when the setting says it may be (Redis's appendfsync everysec, a grant
acknowledged within 2 s of the cut), the service's failure when the setting promised it
(appendfsync always), a plain crash when no rule was recorded or the rule does not cover it."""

from __future__ import annotations

from typing import Any

import pytest
from test_classify import HOLDER, facts
from test_mutex_records import S, fault, history

from checkers.classify import CRASH, UNEXPLAINED, UNSYNCED, classify_number, classify_takeover
from checkers.durability import DurabilityRule, durability_rule
from checkers.windows import CRASHES, LOSES_UNSYNCED, FaultWindow, fault_windows
from clusters.target_registry import TARGETS
from core.options import RunOptions
from harness.suite import found_causes

FACTS = {
    "power-loss": {
        "start": "start-power-loss",
        "stop": "stop-power-loss",
        "describe": "node {nodes} lost power {when}",
        "effects": sorted({CRASHES, LOSES_UNSYNCED}),
    }
}
EVERYSEC = DurabilityRule(2.0, "redis", "appendfsync", "everysec", "https://redis.io/persistence")
ALWAYS = DurabilityRule(0.0, "redis", "appendfsync", "always", "https://redis.io/persistence")


def cut(at: float, discarded: dict[str, Any]) -> list[FaultWindow]:
    value = {"nodes": ["n1"], "discarded": discarded, "proof": {"n1": True}}
    return fault_windows(history(fault("power-loss", at, at + 1.0, value)), FACTS)


def takeover(ws: list[FaultWindow], rule: DurabilityRule | None) -> Any:
    return classify_takeover(HOLDER, facts([0.05, 3.0]), int(2.5 * S), ws, rule).classification


def test_a_grant_acknowledged_just_before_an_everysec_cut_is_lost_as_documented() -> None:
    c = takeover(cut(0.6, {"n1": {"/appendonlydir/appendonly.aof.1.incr.aof": 115}}), EVERYSEC)
    assert c.cause == UNSYNCED and c.expected
    assert "acknowledged 0.501 s before the power cut" in c.evidence
    assert "not fsynced under redis's appendfsync everysec" in c.evidence
    assert "115 bytes on n1" in c.evidence and "lost, as documented" in c.evidence


def test_a_grant_between_the_cuts_invocation_and_its_answer_was_lost_by_it() -> None:
    """The nemesis invokes the cut, kills, then discards: a grant in between is lost."""
    value = {"nodes": ["n1"], "discarded": {"n1": {"aof": 115}}, "proof": {"n1": True}}
    late = [(0.05, "nemesis", "invoke", "start-power-loss", None)]
    late += [(0.5, "nemesis", "ok", "start-power-loss", value)]
    ws = fault_windows(history(late), FACTS)
    c = takeover(ws, EVERYSEC)
    assert c.cause == UNSYNCED and "acknowledged 0.400 s before the power cut" in c.evidence


def test_the_same_records_under_a_setting_that_promised_durability_blame_nobody() -> None:
    """The bytes a cut discarded were not fsynced, but neither is a write not yet
    answered: nothing ties the grant to them, so the service is not blamed for it (it
    was, as a service bug, on the discarded bytes alone)."""
    c = takeover(cut(0.6, {"n1": {"aof": 115}}), ALWAYS)
    assert c.cause == UNEXPLAINED and not c.expected
    assert "under redis's appendfsync always every acknowledged write is fsynced" in c.evidence
    assert "the records do not show whether the write was among the bytes discarded" in c.evidence


def test_what_the_rule_does_not_cover_stays_a_crash() -> None:
    late = DurabilityRule(0.3, "redis", "appendfsync", "everysec")
    assert takeover(cut(0.6, {"n1": {"aof": 115}}), late).cause == CRASH  # 0.5 s > 0.3 s
    assert takeover(cut(0.6, {"n1": {}}), EVERYSEC).cause == CRASH  # nothing discarded
    assert takeover(cut(0.6, {"n1": {"aof": 115}}), None).cause == CRASH  # no rule recorded


def recorded(persistence: str | None, target: str = "redis") -> DurabilityRule | None:
    """The durability rule a run on ``target`` with ``persistence`` records, as read back."""
    opts = RunOptions.of(
        target=target, workload="lock", persistence=persistence, nemesis=["kill", "power-loss"]
    )
    rules = [r.to_dict() for r in TARGETS[target].rules_for(opts)]
    return durability_rule({"options": {"target": target}, "service_rules": rules})


def test_redis_records_its_rule_for_each_fsync_setting_and_the_checkers_read_it() -> None:
    assert recorded("aof-everysec") == DurabilityRule(
        2.0, "redis", "appendfsync", "everysec", EVERYSEC_SOURCE
    )
    always = recorded("aof-always")
    assert always is not None and always.promises
    assert recorded("none") is None


EVERYSEC_SOURCE = "https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/"


def test_zookeeper_records_force_sync_as_a_promise_and_its_absence_as_a_bounded_loss() -> None:
    """forceSync=yes (the default, given or not) fsyncs before acknowledging: nothing may
    be lost; forceSync=no leaves acknowledged writes to the kernel's writeback."""
    for given in (None, "force-sync"):
        promised = recorded(given, "zookeeper")
        assert promised is not None and promised.promises
        assert promised.named() == "forceSync yes" and "zookeeperAdmin" in promised.source
    unsynced = recorded("no-force-sync", "zookeeper")
    assert unsynced is not None and not unsynced.promises
    assert unsynced.named() == "forceSync no" and unsynced.within_s == 35.0


def test_a_zookeeper_grant_lost_to_a_cut_under_no_force_sync_is_lost_as_documented() -> None:
    rule = recorded("no-force-sync", "zookeeper")
    c = takeover(cut(0.6, {"n1": {"zk/version-2/log.100000001": 512}}), rule)
    assert c.cause == UNSYNCED and c.expected
    assert "not fsynced under zookeeper's forceSync no" in c.evidence
    assert "512 bytes on n1" in c.evidence and "(up to 35 s)" in c.evidence


@pytest.mark.parametrize(
    ("persistence", "named", "within"),
    [
        (None, "synchronous_commit on", 0.0),
        ("sync", "synchronous_commit on", 0.0),
        ("no-sync-commit", "synchronous_commit off", 0.6),
        ("no-fsync", "fsync off", 35.0),
    ],
)
def test_postgres_records_what_a_power_cut_may_take_under_each_setting(
    persistence: str | None, named: str, within: float
) -> None:
    rule = recorded(persistence, "postgres")
    assert rule is not None and rule.named() == named and rule.within_s == pytest.approx(within)
    assert rule.source.startswith("https://www.postgresql.org/docs/17/")


def test_a_postgres_failover_records_no_power_cut_rule() -> None:
    """A failover's loss is replication's: no durability rule speaks for it."""
    assert recorded("async-failover", "postgres") is None


@pytest.mark.parametrize(
    ("target", "persistence"),
    [("redis", "aof-everysec"), ("zookeeper", None), ("postgres", None), ("etcd", None)],
)
def test_a_run_that_cuts_no_power_records_no_durability_rule(
    target: str, persistence: str | None
) -> None:
    """What a power cut may take is said only of runs that cut the power: a kill keeps
    the page cache, and every ZooKeeper or PostgreSQL run would say its default else."""
    opts = RunOptions.of(target=target, workload="lock", persistence=persistence, nemesis=["kill"])
    assert not [r for r in TARGETS[target].rules_for(opts) if r.lost_within_s is not None]


def test_etcd_records_fsync_as_a_promise_and_unsafe_no_fsync_as_a_bounded_loss() -> None:
    """etcd's default fsyncs its WAL before a member acknowledges ('Any completed
    operations are durable'); --unsafe-no-fsync 'will cause data loss', up to what the
    kernel had not written back."""
    for given in (None, "fsync"):
        promised = recorded(given, "etcd")
        assert promised is not None and promised.promises
        assert promised.named() == "--unsafe-no-fsync false" and "api_guarantees" in promised.source
    unsafe = recorded("no-fsync", "etcd")
    assert unsafe is not None and not unsafe.promises and unsafe.within_s == 35.0
    assert unsafe.named() == "--unsafe-no-fsync true" and "CHANGELOG-3.5" in unsafe.source


def test_a_token_etcd_grants_again_after_a_cut_under_no_fsync_is_lost_as_documented() -> None:
    """A revision (etcd's fencing token) granted again after a power cut of every member
    was a crash before etcd had a rule; --unsafe-no-fsync documents the loss."""
    ws = cut(0.6, {"n1": {"etcd/member/wal/0000000000000000-0000000000000000.wal": 4096}})
    unsafe = classify_number(
        "revision", int(0.2 * S), int(2.5 * S), ws, recorded("no-fsync", "etcd")
    )
    assert unsafe.cause == UNSYNCED and unsafe.expected
    assert "the grant of a revision at 0.200 s was acknowledged 0.401 s before" in unsafe.evidence
    assert "not fsynced under etcd's --unsafe-no-fsync true" in unsafe.evidence
    assert "handed out a revision that was not higher: lost, as documented" in unsafe.evidence
    promised = classify_number("revision", int(0.2 * S), int(2.5 * S), ws, recorded(None, "etcd"))
    assert promised.cause == UNEXPLAINED and not promised.expected
    assert classify_number("revision", int(0.2 * S), int(2.5 * S), ws).cause == CRASH


def test_the_cut_that_took_a_grant_is_the_first_after_it_not_one_still_open_at_it() -> None:
    """The etcd run of seed 1: a grant made while the nodes still restarted from one cut
    (its window open until the stop) and handed out again after the next was named a
    crash by the first window, which began before the grant and could not take it."""
    value = {"nodes": ["n1"], "discarded": {"n1": {"wal": 9632}}, "proof": {"n1": True}}
    ws = fault_windows(
        history(fault("power-loss", 0.0, 0.3, value) + fault("power-loss", 1.0, 2.0, value)),
        FACTS,
    )
    rule = recorded("no-fsync", "etcd")
    c = takeover(ws, rule)  # HOLDER's grant at 0.1 s, inside the first window
    assert c.cause == UNSYNCED and "acknowledged 0.901 s before the power cut" in c.evidence
    n = classify_number("revision", int(0.1 * S), int(2.5 * S), ws, rule)
    assert n.cause == UNSYNCED and "acknowledged 0.901 s before" in n.evidence


def test_a_suite_entry_can_ask_for_the_cause_of_a_fencing_number_granted_again() -> None:
    """``etcd-power-loss-no-fsync`` asks for its token granted again to be lost as
    documented: the suite reads the fencing checker's anomalies for it."""
    anomaly = {"kind": "reused", "classification": {"cause": UNSYNCED}}
    assert found_causes({"checkers": {"fencing": {"anomalies": [anomaly]}}}) == {UNSYNCED}
    assert found_causes({"checkers": {"fencing": {"anomalies": []}}}) == set()
