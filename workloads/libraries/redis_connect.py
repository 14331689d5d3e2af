"""A Redis connection for the Redis lock libraries: the library environment's ``redis``,
with answer and connect timeouts, so a dead server is an error, not a hang."""

from __future__ import annotations

from typing import Any

import redis


def connect(address: str, timeout: float) -> Any:
    """``redis.Redis`` to the server at ``address`` ("ip:port"), answering within
    ``timeout`` s (a library's blocking command needs its wait on top: the caller's)."""
    host, _, port = address.rpartition(":")
    return redis.Redis(
        host=host, port=int(port), socket_timeout=timeout, socket_connect_timeout=min(timeout, 2.0)
    )
