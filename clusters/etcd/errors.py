"""etcd's error classification: every failure of a gateway call becomes fail or info.

The JSON gateway turns a gRPC error into an HTTP error whose body carries the gRPC code
and message (``{"code": 5, "message": "etcdserver: requested lease not found"}``; stream
endpoints wrap it as ``{"error": {"grpc_code": ..., "message": ...}}``). The rules follow
jepsen-io/etcd's ``remap-errors``: a refusal the server made before proposing anything is
definite, anything that may have reached Raft is not.

=====================================================  =================  =========
answer                                                  raised             completes
=====================================================  =================  =========
transport errors                                        see ``workloads.http_errors``
"requested lease not found" (NOT_FOUND or UNKNOWN)      ``LeaseNotFound``  fail
"election: not leader" (resign of a lost leadership)    ``LeaseNotFound``  fail
INVALID_ARGUMENT, NOT_FOUND, ALREADY_EXISTS,            ``OpFailed``       fail
PERMISSION_DENIED, RESOURCE_EXHAUSTED ("too many
requests"), FAILED_PRECONDITION, OUT_OF_RANGE
(compacted), UNAUTHENTICATED
UNKNOWN "raft: stopped", "too many requests",          ``OpFailed``       fail
"election: no leader" (an answer: nobody leads)
UNAVAILABLE ("request timed out", "leader changed",     ``OpUnknown``      info
"no leader"), DEADLINE_EXCEEDED, CANCELLED, INTERNAL,
other UNKNOWN (e.g. "mutex: session is expired")
an answer that is not etcd's JSON (a proxy's 502...)    ``OpUnknown``      info
=====================================================  =================  =========

Reads change nothing, so the workload clients record their unknown outcomes as fail
(``workloads.register``, ``workloads.election``).
"""

from __future__ import annotations

from typing import Any

from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown

# gRPC status codes
CANCELLED, UNKNOWN, INVALID_ARGUMENT, DEADLINE_EXCEEDED, NOT_FOUND = 1, 2, 3, 4, 5
ALREADY_EXISTS, PERMISSION_DENIED, RESOURCE_EXHAUSTED, FAILED_PRECONDITION = 6, 7, 8, 9
OUT_OF_RANGE, INTERNAL, UNAVAILABLE, UNAUTHENTICATED = 11, 13, 14, 16

DEFINITE_CODES = frozenset(
    {
        INVALID_ARGUMENT,
        NOT_FOUND,
        ALREADY_EXISTS,
        PERMISSION_DENIED,
        RESOURCE_EXHAUSTED,
        FAILED_PRECONDITION,
        OUT_OF_RANGE,
        UNAUTHENTICATED,
    }
)
"""Codes the server returns only for a request it refused outright."""
DEFINITE_UNKNOWN = ("raft: stopped", "too many requests", "election: no leader")
"""Messages under code UNKNOWN that are refusals too."""
GONE = ("requested lease not found", "election: not leader")
"""Messages that say the lease (or the leadership on it) no longer exists."""


def grpc_error(body: Any) -> tuple[int | None, str]:
    """The gRPC code and message of a gateway error body (either shape), else (None, "")."""
    if not isinstance(body, dict):
        return None, ""
    inner = body.get("error")
    if isinstance(inner, dict):
        body = {"code": inner.get("grpc_code"), "message": inner.get("message")}
    code = body.get("code")
    message = body.get("message") or body.get("error") or ""
    return (
        int(code) if isinstance(code, int | str) and str(code).isdigit() else None,
        str(message),
    )


def answer_error(status: int, body: Any, what: str) -> OpFailed | OpUnknown:
    """The outcome class of an error answer (HTTP ``status``, decoded ``body`` or None)."""
    code, message = grpc_error(body)
    if code is None:
        return OpUnknown(f"{what}: HTTP {status} without an etcd error body")
    text = f"{what}: {message or 'no message'} (gRPC code {code})"
    if any(m in message for m in GONE):
        return LeaseNotFound(text)
    if code in DEFINITE_CODES:
        return OpFailed(text)
    if code == UNKNOWN and any(m in message for m in DEFINITE_UNKNOWN):
        return OpFailed(text)
    return OpUnknown(text)
