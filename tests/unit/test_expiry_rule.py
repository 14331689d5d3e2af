"""Issue 30, item 3: a handover is measured by the service's documented expiry rule.

Consul invalidates a session no sooner than its TTL after the last renewal and up to twice
the TTL after it. A run on Consul reported "handover delay 10.0 s" (and the matrix 2.0 s)
for a grant that came at last renewal + 2 x TTL: measured from last renewal + TTL, as if
Consul were slow. The rule is data the target declares (``ServiceRule.expiry_ttls``) and
the run records (test.json's ``service_rules``); the checkers read it there, never the
target's name. The runs here are Consul-shaped: a holder frozen past its 2 s TTL, the lock
handed on by the service some TTLs after its last renewal.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_cli import run

from checkers.expiry import AT_DEADLINE, ExpiryRule, expiry_rule
from checkers.leases import lease_facts
from clusters.consul.spec import RULES
from core.options import RunOptions
from tests.support.synthetic import lock_run

CONSUL_SOURCE = "https://github.com/hashicorp/consul/pull/524"


def consul_run(
    path: Path, handed_on_ttls: float = 2.0, rules: list[dict[str, Any]] | None = None
) -> Path:
    """A Consul-shaped lock run: the lock handed on ``handed_on_ttls`` TTLs after the
    frozen holder's last renewal, test.json with ``rules`` (Consul's by default)."""
    run_dir = lock_run(path, target="consul", handed_on_ttls=handed_on_ttls)
    test = json.loads((run_dir / "test.json").read_text())
    test["service_rules"] = [r.to_dict() for r in RULES] if rules is None else rules
    (run_dir / "test.json").write_text(json.dumps(test))
    return run_dir


def handover(run_dir: Path) -> dict[str, Any]:
    """The one handover of the run's mutex result, with the result's summary."""
    mutex = json.loads((run_dir / "results.json").read_text())["checkers"]["mutex"]
    (h,) = mutex["handovers"]
    return {**h, "summary": mutex["summary"]}


def test_consul_records_its_expiry_rule_in_test_json() -> None:
    """The rule is the target's data: Consul's session TTL rule says 2 TTLs, and it is
    recorded with every Consul run (``rules_for``) for the checkers to read."""
    from clusters.target_registry import TARGETS

    opts = RunOptions.from_mapping({"target": "consul", "workload": "lock"})
    recorded = [r.to_dict() for r in TARGETS["consul"].rules_for(opts)]
    rule = expiry_rule({"options": {"target": "consul"}, "service_rules": recorded})
    assert (rule.ttls, rule.target, rule.source) == (2.0, "consul", CONSUL_SOURCE)
    assert expiry_rule({"options": {"target": "etcd"}, "service_rules": []}) is AT_DEADLINE


def test_a_consul_grant_at_twice_the_ttl_is_no_delay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """From the command line: the grant 2 TTLs (+ 10 ms) after the last renewal is 0.010
    s past the rule's latest end, not 2.010 s late; the sentence cites the rule."""
    run_dir = consul_run(tmp_path / "consul" / "20260101T000000")
    code, out, _ = run(capsys, "check", str(run_dir))
    assert code == 0, out
    h = handover(run_dir)
    out = h["summary"]
    assert h["after_expiry_s"] == pytest.approx(2.010, abs=1e-3)
    assert h["handover_delay_s"] == pytest.approx(0.010, abs=1e-3)
    assert h["lease_expiry_latest"] - h["lease_expiry"] == 2_000_000_000
    assert h["expiry_rule"]["ttls"] == 2.0
    assert (
        "Handover delay 0.010 s by consul's documented rule (session TTL a lower bound): a "
        f"lease ends up to 2 x TTL after its last renewal [{CONSUL_SOURCE}]: the lock was "
        "granted again at " in out
    )
    assert "0.010 s after the rule's latest end at " in out
    assert out.count(CONSUL_SOURCE) == 1
    assert "lease could expire from about 4.884 s and ended by 6.884 s at the latest (by " in out


def test_a_grant_within_the_rule_is_said_to_be_within_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run_dir = consul_run(tmp_path / "consul" / "20260101T000000", handed_on_ttls=1.5)
    code, out, _ = run(capsys, "check", str(run_dir))
    assert code == 0, out
    h = handover(run_dir)
    out = h["summary"]
    assert h["handover_delay_s"] == 0.0
    assert h["after_expiry_s"] == pytest.approx(1.010, abs=1e-3)
    assert "within the rule, no delay" in out


def test_the_report_shows_the_window_the_rule_allows(tmp_path: Path) -> None:
    """The run's report: the handover's lease expiry is the window from the deadline to
    the rule's latest end."""
    from harness.analysis import check_run
    from harness.report import write_report

    run_dir = consul_run(tmp_path / "consul" / "20260101T000000")
    check_run(run_dir)
    h = handover(run_dir)
    page = write_report(run_dir).read_text()
    latest = f"{h['lease_expiry_latest'] / 1e9:.3f}"
    assert f"{h['lease_expiry'] / 1e9:.3f} s to {latest} s (consul&#x27;s rule)" in page


def test_without_the_rule_recorded_the_lease_ends_at_its_deadline(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The same records without the rule: measured from last renewal + TTL, as before (a
    run from before the rules were recorded, or a target without such a rule)."""
    run_dir = consul_run(tmp_path / "consul" / "20260101T000000", rules=[])
    code, out, _ = run(capsys, "check", str(run_dir))
    assert code == 0, out
    h = handover(run_dir)
    out = h["summary"]
    assert h["handover_delay_s"] == pytest.approx(2.010, abs=1e-3)
    assert h["expiry_rule"] is None
    assert "Handover delay 2.010 s (the lock was granted again 2.010 s after the lease" in out


def test_the_matrix_shows_the_rule_beside_the_handover_delay(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``harness compare``: Consul's handover delay is the part past its rule, with the
    rule said; a run without the rule shows the plain number."""
    consul = consul_run(tmp_path / "consul" / "20260101T000000")
    plain = lock_run(tmp_path / "sim" / "20260101T000000", handed_on_ttls=1.0)
    for d in (consul, plain):
        assert run(capsys, "check", str(d))[0] == 0
    code, out, _ = run(capsys, "compare", "--json", str(tmp_path))
    assert code == 0, out
    cells = {c["row"]: c for c in json.loads(out)["cells"]}
    assert cells["consul · lock"]["handover_delay_s"] == pytest.approx(0.010, abs=1e-3)
    assert cells["consul · lock"]["handover_rules"] == [
        "by consul's rule, up to 2 x TTL after the last renewal"
    ]
    assert cells["sim · lock"]["handover_rules"] == []
    code, out, _ = run(capsys, "compare", str(tmp_path))
    assert code == 0
    text = " ".join(out.split())
    assert "handover delay: 0.010 s (by consul's rule, up to 2 x TTL after the last renewal)" in (
        text.replace("│ ", "").replace(" │", "")
    )


def test_a_lease_ends_by_the_latest_the_rule_allows() -> None:
    """The lock's linearizability places a lost lease's end up to the rule's latest end:
    a grant there is the lease's release, not an overlap."""
    events = [
        {"time": 1_000, "sent": 900, "event": "lease-granted", "lease": 7, "ttl": 2.0},
        {"time": 5_000, "sent": 4_900, "event": "keepalive", "lease": 7, "ttl": 2.0},
    ]
    plain = lease_facts(events)[7]
    consul = lease_facts(events, rule=ExpiryRule(2.0, "consul"))[7]
    assert plain.end_bounds() == (4_900 + 2 * 10**9, 5_000 + 2 * 10**9)
    assert consul.end_bounds() == (4_900 + 2 * 10**9, 5_000 + 4 * 10**9)
    assert consul.expiry_window() == (5_000 + 2 * 10**9, 5_000 + 4 * 10**9, "client")


@pytest.mark.parametrize(
    "entry",
    [{"expiry_ttls": "2"}, {"expiry_ttls": True}, {"expiry_ttls": 0.5}, "session TTL", None],
)
def test_a_malformed_rule_is_the_plain_rule(entry: Any) -> None:
    assert expiry_rule({"service_rules": [entry]}) is AT_DEADLINE
