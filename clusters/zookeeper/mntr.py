"""ZooKeeper's own counters of the watches it fired: the ``mntr`` four-letter word.

Every server answers ``mntr`` on its client port (our servers allow every four-letter word:
``clusters.zookeeper.server``) with one ``name<TAB>value`` line per metric. ZooKeeper 3.9
(the version our image installs) keeps no count of requests per operation there (only
``zk_packets_received``, pings and session packets included), but it counts the watchers
each change triggered, per kind of change: ``zk_sum_node_deleted_watch_count`` (and
``_changed_``, ``_created_``, ``_children_``), summed since the server started. Summed
over the servers, that is every watch notification the ensemble sent: the herd's
notifications, counted by the service (``checkers.herd_counters``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from clusters._probe import tcp_exchange

FIRED: Final = "watches fired"
"""The counter: watchers triggered by any change, summed over its kinds."""
KINDS: Final = ("deleted", "changed", "created", "children")
SOURCE: Final = "zk_sum_node_*_watch_count of each server's mntr"
READ_S: Final = 1.0


def watches_fired(reply: str) -> int | None:
    """The watchers a server triggered, from its ``mntr`` reply; None when the reply has
    none of the counters (not a ``mntr`` answer)."""
    values: dict[str, str] = dict(
        line.split("\t", 1) for line in reply.splitlines() if line.count("\t") == 1
    )
    found = [values.get(f"zk_sum_node_{kind}_watch_count") for kind in KINDS]
    if all(v is None for v in found):
        return None
    return sum(int(float(v)) for v in found if v is not None)


def watch_counters(addresses: Sequence[str], covers: Sequence[str]) -> dict[str, Any]:
    """The fields of a ``server-counters`` event (``checkers.herd_counters``): each
    server's watches fired, covering our ``covers``; why a server's could not be read."""
    nodes: dict[str, dict[str, int]] = {}
    errors: dict[str, str] = {}
    for address in addresses:
        host, _, port = address.rpartition(":")
        reply = tcp_exchange(host, int(port), b"mntr", timeout=READ_S)
        fired = watches_fired(reply.decode(errors="replace")) if reply else None
        if fired is None:
            errors[address] = "no mntr answer" if not reply else "mntr without watch counters"
        else:
            nodes[address] = {FIRED: fired}
    fields: dict[str, Any] = {
        "service": "ZooKeeper",
        "source": SOURCE,
        "nodes": nodes,
        "covers": {FIRED: list(covers)},
        "errors": errors,
    }
    if not nodes:
        fields["error"] = "no server answered mntr"
    return fields
