"""A blocking client of one Consul agent's HTTP API, and its sessions as leases.

Plain HTTP rather than ``py-consul``: py-consul refuses session TTLs under 10 s on the
client side (an assertion) and folds error answers into message strings; Consul's API is a
handful of calls, made over kept-alive ``http.client`` connections
(``workloads.common.http_pool``, as etcd's gateway client). Every failure is classified by
``workloads.http_errors`` (transport) and ``clusters.consul.errors`` (Consul's answers).

``ConsulConnection`` is one client of one server agent (writes are forwarded to
the leader); it is a ``workloads.common.lease.LeaseBackend`` whose leases are Consul sessions:
a TTL, no lock delay (Consul's lock delay would hide exactly the takeover the lock
workload looks for), behaviour ``release``, and the default ``serfHealth`` check of the
agent's node. The keeper renews with ``/v1/session/renew``; a 404 means it is gone.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote, urlencode

from clusters.consul.errors import answer_error
from workloads.common.http_pool import Answer, HttpPool, Request
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown

URL_SAFE = "/%:@!$&'()*+,;="
"""What stays as written in a request's path (what ``requests`` left unquoted too)."""
RETRY_PAUSE = 0.1
"""Seconds to pause after a failed blocking query before re-reading."""


def encode(value: Any) -> str:
    """A value as stored: JSON."""
    return json.dumps(value)


def decode(entry: dict[str, Any]) -> Any:
    """The JSON value of a KV entry (None when it has none)."""
    raw = entry.get("Value")
    return json.loads(base64.b64decode(raw)) if raw else None


class ConsulConnection:
    """One client of one agent; a ``LeaseBackend`` over Consul sessions."""

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        self.addresses = list(addresses)
        self.address = addresses[0]
        self.timeout = timeout
        self.prefix = prefix.strip("/")
        self.http = HttpPool()

    def key(self, *parts: str) -> str:
        return "/".join((self.prefix, *parts))

    def call(
        self,
        method: str,
        path: str,
        what: str,
        params: dict[str, Any] | None = None,
        data: str | None = None,
        timeout: float | None = None,
        allow: tuple[int, ...] = (),
    ) -> Answer:
        """One request; the answer (2xx, or a status in ``allow``), else
        ``OpFailed``/``OpUnknown``."""
        wait = self.timeout if timeout is None else timeout
        where = f"{what} on {self.address}"
        target = quote("/v1" + path, safe=URL_SAFE) + (f"?{urlencode(params)}" if params else "")
        body = None if data is None else data.encode()
        answer = self.http.request(self.address, Request(method, target, body), where, wait)
        if answer.status // 100 != 2 and answer.status not in allow:
            raise answer_error(answer.status, answer.text, where)
        return answer

    def close(self) -> None:
        self.http.close()

    # --- LeaseBackend --------------------------------------------------------------------

    def grant_lease(self, ttl: float) -> str:
        body = {"TTL": f"{ttl:g}s", "LockDelay": "0s", "Behavior": "release"}
        r = self.call("PUT", "/session/create", "session create", data=json.dumps(body))
        return str(r.json()["ID"])

    def keepalive(self, lease: str) -> float:
        """Renew session ``lease``; 0.0 (Consul answers the TTL as a Go duration string,
        which nothing here needs)."""
        r = self.call("PUT", f"/session/renew/{lease}", f"renewal of session {lease}", allow=(404,))
        if r.status == 404:
            raise LeaseNotFound(f"renewal of session {lease}: Consul no longer knows it")
        return 0.0

    def revoke(self, lease: str) -> None:
        self.call("PUT", f"/session/destroy/{lease}", f"destroy session {lease}")

    # --- helpers for the drivers -------------------------------------------------------

    def entry(self, key: str, mode: str = "consistent") -> tuple[dict[str, Any] | None, int]:
        """The KV entry of ``key`` (None if absent) and the index to block on, read in
        ``mode``: ``default``, ``consistent`` or ``stale``."""
        params = {} if mode == "default" else {mode: ""}
        r = self.call("GET", f"/kv/{key}", f"read of {key}", params=params, allow=(404,))
        index = int(r.headers.get("X-Consul-Index", 0))
        return (None if r.status == 404 else r.json()[0]), index

    def wait_change(self, key: str, index: int, seconds: float) -> int | None:
        """Block until ``key`` changes after ``index`` or ``seconds`` pass (a blocking
        query: a notification only, the caller re-reads); the index it answered with. A
        query that fails is no answer either way: pause briefly, None, and let the caller
        re-read."""
        params = {"index": index, "wait": f"{max(1, int(seconds * 1000))}ms"}
        try:
            r = self.call(
                "GET",
                f"/kv/{key}",
                f"wait on {key}",
                params=params,
                allow=(404,),
                timeout=seconds + self.timeout,
            )
        except (OpFailed, OpUnknown):
            time.sleep(min(seconds, RETRY_PAUSE))
            return None
        return int(r.headers.get("X-Consul-Index", 0))
