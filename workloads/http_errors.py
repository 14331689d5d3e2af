"""Classifying a failed HTTP exchange: never sent (fail) versus sent, outcome unknown (info).

The HTTP clients of etcd's JSON gateway and of Consul's API both ride on the keep-alive
connections of ``workloads.common.http_pool`` (``http.client``), so the transport half of
their error classification is shared here; each target adds the meaning of its servers'
answers (``clusters/<target>/errors.py``). What decides the class is the stage the
exchange failed in, which the pool knows: before a new connection was established no
byte of the request has left; after, any byte may have.

======================================================  ===============  =========
what failed                                              classified as    completes
======================================================  ===============  =========
connecting a new connection (refused, unroutable,        ``Unreachable``  fail
connect timeout): the request never left
the answer did not come in time (a socket timeout        ``OpUnknown``    info
after the connection was up): sent, no answer
anything else after connecting (reset, remote closed,    ``OpUnknown``    info
a malformed or cut answer)
======================================================  ===============  =========

A kept-alive connection the server has already closed is seen before it is reused (it
reads as ready while idle) and replaced by a new one, so a member that restarted since the
last request is refused as never sent, not taken for a lost answer.
"""

from __future__ import annotations

import socket

from workloads.errors import OpFailed, OpUnknown, Unreachable


def transport_error(e: Exception, what: str, *, sent: bool) -> OpFailed | OpUnknown:
    """The outcome class of ``e``, raised while doing ``what`` (e.g. "put k on n1"):
    ``sent`` False while connecting, True once the connection was up."""
    if not sent:
        return Unreachable(f"{what}: not sent, could not connect ({_short(e)})")
    if isinstance(e, socket.timeout):
        return OpUnknown(f"{what}: sent, no answer in time")
    if isinstance(e, OSError):
        return OpUnknown(f"{what}: connection lost after sending ({_short(e)})")
    return OpUnknown(f"{what}: {type(e).__name__} ({_short(e)})")


def _short(e: BaseException) -> str:
    """The error's message on one line, at most 160 characters."""
    text = (str(e) or type(e).__name__).replace("\n", " ")
    return text if len(text) <= 160 else text[:157] + "..."
