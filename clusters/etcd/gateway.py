"""A blocking client of one etcd member's v3 JSON gateway, and its leases.

Plain HTTP rather than a driver: ``etcd3`` (gRPC) breaks with current protobuf, and
``etcd3gw`` hides the error bodies we classify. The requests ride on kept-alive
``http.client`` connections (``workloads.common.http_pool``: ``requests`` cost four times
the exchange, issue 36). Keys and values travel base64-encoded; int64 fields come back as
strings. Every failure is classified by ``workloads.http_errors`` (transport) and
``clusters.etcd.errors`` (etcd's answers).

``EtcdConnection`` is one client of one member (a worker talks to the member its process
id picks), one kept-alive connection while one thread asks at a time; it is a
``workloads.common.lease.LeaseBackend``, and the lock, election and register drivers of
this package extend it. Keys live under ``prefix`` (one per run).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator, Sequence
from typing import Any

from clusters.etcd.errors import answer_error
from workloads.common.http_pool import HttpPool, Request
from workloads.common.lease import LeaseNotFound
from workloads.errors import OpUnknown

JSON = {"Content-Type": "application/json"}


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def unb64(text: str) -> str:
    return base64.b64decode(text).decode()


def prefix_end(prefix: str) -> str:
    """The ``range_end`` that makes a range cover every key starting with ``prefix``."""
    raw = prefix.encode()
    return base64.b64encode(raw[:-1] + bytes([raw[-1] + 1])).decode()


def encode(value: Any) -> str:
    """A value as stored: JSON, base64-encoded for the gateway."""
    return b64(json.dumps(value))


def decode(kv: dict[str, Any]) -> Any:
    """The JSON value of a key-value record from the gateway (None when it has none)."""
    raw = kv.get("value")
    return json.loads(base64.b64decode(raw)) if raw else None


class EtcdConnection:
    """One client of one member; a ``LeaseBackend``."""

    def __init__(
        self, addresses: Sequence[str], *, timeout: float = 5.0, prefix: str = "harness"
    ) -> None:
        """``addresses[0]`` is the member to talk to ("ip:port"); ``timeout`` bounds each
        request's wait for an answer (blocking calls pass their own)."""
        self.addresses = list(addresses)
        self.address = addresses[0]
        self.timeout = timeout
        self.prefix = prefix.rstrip("/")
        self.http = HttpPool()
        self._revoked: set[int] = set()

    def key(self, *parts: str) -> str:
        """A key of this run: ``prefix/part/part``."""
        return "/".join((self.prefix, *parts))

    def call(
        self, path: str, body: dict[str, Any], what: str, timeout: float | None = None
    ) -> dict[str, Any]:
        """POST ``body`` to ``path``; the decoded answer, or ``OpFailed``/``OpUnknown``."""
        wait = self.timeout if timeout is None else timeout
        where = f"{what} on {self.address}"
        answer = self.http.request(self.address, _post(path, body), where, wait)
        try:
            data = answer.json()
        except ValueError:
            data = None
        if answer.status != 200 or not isinstance(data, dict):
            raise answer_error(answer.status, data, where)
        if isinstance(data.get("error"), dict):  # a stream endpoint's error
            raise answer_error(answer.status, data, where)
        return data

    def stream(
        self, path: str, body: dict[str, Any], what: str, timeout: float
    ) -> Iterator[dict[str, Any]]:
        """POST to a streaming endpoint and yield each message's ``result`` as it arrives,
        until ``timeout`` seconds pass without one (then it just stops)."""
        deadline = time.monotonic() + timeout
        where = f"{what} on {self.address}"
        with self.http.stream(self.address, _post(path, body), where, timeout) as answer:
            if answer.status != 200:
                raise answer_error(answer.status, None, where)
            for line in answer.lines(deadline):
                try:
                    message = json.loads(line) if line.strip() else {}
                except ValueError as e:
                    raise OpUnknown(f"{where}: stream broken ({e})") from None
                if "error" in message:
                    raise answer_error(200, message, where)
                yield message.get("result", {})

    def close(self) -> None:
        self.http.close()

    # --- LeaseBackend --------------------------------------------------------------------

    def grant_lease(self, ttl: float) -> int:
        """A new lease of ``ttl`` whole seconds (etcd's unit; the target refuses others)."""
        r = self.call("/v3/lease/grant", {"TTL": round(ttl)}, "lease grant")
        return int(r["ID"])

    def keepalive(self, lease: int) -> float:
        """Renew ``lease`` once; its new TTL. ``LeaseNotFound`` once it has expired."""
        r = self.call("/v3/lease/keepalive", {"ID": lease}, f"keepalive of lease {lease:x}")
        ttl = int(r.get("result", {}).get("TTL", 0))
        if ttl <= 0:
            raise LeaseNotFound(f"keepalive of lease {lease:x}: etcd no longer knows it")
        return float(ttl)

    def revoke(self, lease: int) -> None:
        """Revoke ``lease`` (deleting its keys); a no-op if a release already did."""
        if lease in self._revoked:
            return
        self.call("/v3/lease/revoke", {"ID": lease}, f"revoke of lease {lease:x}")
        self._revoked.add(lease)

    # --- helpers for the drivers -------------------------------------------------------

    def get(self, key: str, serializable: bool = False) -> dict[str, Any] | None:
        """The key-value record of ``key`` (or None), linearizable unless ``serializable``."""
        body: dict[str, Any] = {"key": b64(key)}
        if serializable:
            body["serializable"] = True
        kvs = self.call("/v3/kv/range", body, f"read of {key}").get("kvs", [])
        return kvs[0] if kvs else None

    def txn(
        self,
        compare: list[dict[str, Any]],
        success: list[dict[str, Any]],
        failure: list[dict[str, Any]],
        what: str,
    ) -> dict[str, Any]:
        """A transaction; the answer (``succeeded`` is absent when false)."""
        return self.call(
            "/v3/kv/txn", {"compare": compare, "success": success, "failure": failure}, what
        )


def _post(path: str, body: dict[str, Any]) -> Request:
    """A POST of ``body`` as JSON to the gateway's ``path``."""
    return Request("POST", path, json.dumps(body, separators=(",", ":")).encode(), JSON)


def revision(record: dict[str, Any], field: str = "create_revision") -> int:
    """An int64 field of a gateway record (absent means 0)."""
    return int(record.get(field, 0))
