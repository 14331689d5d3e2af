"""etcd's own request counters: ``grpc_server_started_total`` on each member's ``/metrics``.

etcd serves Prometheus metrics on its client port (``GET /metrics``). Every request the
v3 gateway takes is handed to the member's own gRPC server, which counts it when it starts
in ``grpc_server_started_total{grpc_method=...}`` (a unary call once, a watch stream once
per stream): a ``POST /v3/kv/txn`` is one ``Txn``, a ``POST /v3/watch`` one ``Watch``.
Checked on etcd 3.5.16, the version our image installs. The counters are the member's since
it started: a restarted member counts from zero again (``checkers.herd_counters`` takes that
into account).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final

import requests

TXN: Final = "Txn"
RANGE: Final = "Range"
WATCH: Final = "Watch"
READ_S: Final = 1.0
"""Seconds one member's metrics may take (they are read while the worker opens and closes)."""
STARTED = re.compile(r"^grpc_server_started_total\{([^}]*)\} (\d+(?:\.\d+)?(?:e\+\d+)?)$", re.M)
METHOD = re.compile(r'grpc_method="([^"]+)"')
SOURCE: Final = "grpc_server_started_total of each member's /metrics"


def started(text: str, methods: Iterable[str]) -> dict[str, int]:
    """The gRPC calls started of each of ``methods`` in a ``/metrics`` page (0 for one it
    does not list: never called since the member started)."""
    wanted = set(methods)
    out = dict.fromkeys(sorted(wanted), 0)
    for labels, value in STARTED.findall(text):
        found = METHOD.search(labels)
        if found and found.group(1) in wanted:
            out[found.group(1)] += int(float(value))
    return out


def request_counters(addresses: Sequence[str], methods: Sequence[str]) -> dict[str, Any]:
    """The fields of a ``server-counters`` event (``checkers.herd_counters``): each
    member's count of ``methods``, and why a member's could not be read."""
    nodes: dict[str, dict[str, int]] = {}
    errors: dict[str, str] = {}
    for address in addresses:
        try:
            resp = requests.get(f"http://{address}/metrics", timeout=READ_S)
            resp.raise_for_status()
            nodes[address] = started(resp.text, methods)
        except requests.RequestException as e:
            errors[address] = f"{type(e).__name__}: {e}"[:200]
    fields: dict[str, Any] = {
        "service": "etcd",
        "source": SOURCE,
        "nodes": nodes,
        "covers": {m: [m] for m in methods},
        "errors": errors,
    }
    if not nodes:
        fields["error"] = "no member's /metrics could be read"
    return fields
