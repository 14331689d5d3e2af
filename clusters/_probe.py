"""Small host-side probes of a node's service: HTTP JSON, a raw TCP exchange, polling.

Health checks and leader queries use these; they return None instead of raising so that a
caller polling a starting (or partitioned, or paused) node just sees "not yet".
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import requests


def http_json(method: str, url: str, body: Any = None, timeout: float = 1.0) -> Any | None:
    """The decoded JSON answer of a 2xx response, or None on any error or timeout."""
    try:
        resp = requests.request(method, url, json=body, timeout=timeout)
        if resp.status_code // 100 != 2:
            return None
        return resp.json()
    except (requests.RequestException, ValueError):
        return None


def tcp_exchange(
    host: str, port: int, payload: bytes, *, until: bytes | None = None, timeout: float = 1.0
) -> bytes | None:
    """Send ``payload``, read until EOF (or until ``until`` shows up); None on any error."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(payload)
            data = b""
            while until is None or until not in data:
                chunk = sock.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data
    except OSError:
        return None


def wait_until(check: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    """Poll ``check`` until it returns True (then True) or ``timeout`` seconds pass (False)."""
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)
