"""Remove the iptables rules the harness added on a host, and only those.

The partition nemesis tags every rule it adds with a comment ``harness-<hex>`` and deletes
exactly those when it heals. This is the backstop a cluster runs when it stops (after a
crash of the nemesis, say): every rule whose comment starts with ``harness-`` is deleted,
every other rule is left alone.
"""

from __future__ import annotations

import shlex

from clusters.remote.base import Remote

TAG_PREFIX = "harness-"


def harness_rules(listing: str) -> list[list[str]]:
    """The rule specs (``-A`` lines of ``iptables -S``, without ``-A``) tagged by us."""
    rules = []
    for line in listing.splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if len(words) < 2 or words[0] != "-A" or "--comment" not in words:
            continue
        comment = words[words.index("--comment") + 1] if words[-1] != "--comment" else ""
        if comment.startswith(TAG_PREFIX):
            rules.append(words[1:])
    return rules


def remove_harness_rules(remote: Remote) -> int:
    """Delete every harness-tagged rule of the filter table on ``remote``; how many."""
    listing = remote.run(["iptables", "-S"], sudo=True, timeout=30)
    if not listing.ok:
        return 0  # no iptables there: nothing of ours either
    removed = 0
    for spec in harness_rules(listing.stdout):
        removed += remote.run(["iptables", "-D", *spec], sudo=True, timeout=30).ok
    return removed
