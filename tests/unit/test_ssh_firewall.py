"""The backstop that removes the harness's iptables rules on a host, and nothing else."""

from __future__ import annotations

from clusters.ssh.firewall import harness_rules, remove_harness_rules
from tests.support.fake import FakeRemote

LISTING = """-P INPUT ACCEPT
-P FORWARD ACCEPT
-A INPUT -s 10.77.3.12/32 -m comment --comment harness-ab12cd34 -j DROP
-A INPUT -p tcp --dport 22 -m comment --comment "admin ssh" -j ACCEPT
-A INPUT -s 10.77.3.13/32 -m statistic --mode random --probability 0.3 \
-m comment --comment harness-ab12cd34 -j DROP
-A OUTPUT -d 1.2.3.4/32 -j DROP
"""


def test_only_rules_tagged_by_the_harness_are_picked() -> None:
    rules = harness_rules(LISTING)
    assert rules == [
        [
            "INPUT",
            "-s",
            "10.77.3.12/32",
            "-m",
            "comment",
            "--comment",
            "harness-ab12cd34",
            "-j",
            "DROP",
        ],
        [
            "INPUT",
            "-s",
            "10.77.3.13/32",
            "-m",
            "statistic",
            "--mode",
            "random",
            "--probability",
            "0.3",
            "-m",
            "comment",
            "--comment",
            "harness-ab12cd34",
            "-j",
            "DROP",
        ],
    ]


def test_they_are_deleted_as_root() -> None:
    r = FakeRemote().on(r"^iptables -S$", stdout=LISTING)
    assert remove_harness_rules(r) == 2
    deletes = [c for c in r.calls if c.text.startswith("iptables -D")]
    assert len(deletes) == 2 and all(c.sudo for c in deletes)
    assert "admin" not in " ".join(c.text for c in deletes)


def test_a_host_without_iptables_has_nothing_of_ours() -> None:
    assert remove_harness_rules(FakeRemote().on("iptables", exit=127)) == 0
