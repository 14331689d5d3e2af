"""Classifying what ``requests`` raises: never sent (fail) versus sent, outcome unknown (info).

The HTTP clients of etcd's JSON gateway and of Consul's API both ride on ``requests``
(py-consul does too), so the transport half of their error classification is shared here;
each target adds the meaning of its servers' answers (``clusters/<target>/errors.py``).

======================================================  ===============  =========
what ``requests`` raised                                 classified as    completes
======================================================  ===============  =========
``ConnectTimeout``; ``ConnectionError`` caused by a      ``Unreachable``  fail
refused or unroutable connection (``NewConnectionError``,
``ConnectTimeoutError``): the request never left
``ReadTimeout``: sent, no answer in time                 ``OpUnknown``    info
any other ``ConnectionError`` (reset, remote closed)     ``OpUnknown``    info
anything else (chunked encoding, decode errors...)       ``OpUnknown``    info
======================================================  ===============  =========
"""

from __future__ import annotations

import requests
from urllib3.exceptions import ConnectTimeoutError, MaxRetryError, NewConnectionError

from workloads.errors import OpFailed, OpUnknown, Unreachable


def request_error(e: requests.RequestException, what: str) -> OpFailed | OpUnknown:
    """The outcome class of ``e``, raised while doing ``what`` (e.g. "put k on n1")."""
    if isinstance(e, requests.ConnectTimeout) or (
        isinstance(e, requests.ConnectionError) and _never_connected(e)
    ):
        return Unreachable(f"{what}: not sent, could not connect ({_short(e)})")
    if isinstance(e, requests.ReadTimeout):
        return OpUnknown(f"{what}: sent, no answer in time")
    if isinstance(e, requests.ConnectionError):
        return OpUnknown(f"{what}: connection lost after sending ({_short(e)})")
    return OpUnknown(f"{what}: {type(e).__name__} ({_short(e)})")


def _never_connected(e: requests.ConnectionError) -> bool:
    """Whether urllib3 failed while connecting, before any byte of the request left."""
    cause = e.args[0] if e.args else None
    if isinstance(cause, MaxRetryError):
        cause = cause.reason
    return isinstance(cause, (NewConnectionError, ConnectTimeoutError))


def _short(e: BaseException) -> str:
    """The innermost reason of a urllib3 error chain, on one line."""
    cause: object = e.args[0] if e.args else e
    if isinstance(cause, MaxRetryError) and cause.reason is not None:
        cause = cause.reason
    text = str(cause).replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."
