"""Consul's error classification: every failure of an HTTP API call becomes fail or info.

Transport errors are classified by ``workloads.http_errors`` (never sent: fail; sent, no
answer: info). Consul answers errors as plain text with an HTTP status:

=========================================================  =================  =========
answer                                                      raised             completes
=========================================================  =================  =========
404 of a session renewal ("Session id '...' not found"),    ``LeaseNotFound``  fail
"invalid session" (acquire or release with a dead session)
400, 401, 403, 405, 413, 429: refused before doing          ``OpFailed``       fail
anything (bad request, ACL, rate limit)
500 "No cluster leader", "Permission denied",               ``OpFailed``       fail
"rate limit": the request was refused before it reached
Raft
any other 5xx ("leadership lost while committing log",      ``OpUnknown``      info
"rpc error ... EOF", timeouts inside the cluster): it may
have been committed
=========================================================  =================  =========
"""

from __future__ import annotations

from workloads.common.lease import LeaseNotFound
from workloads.errors import OpFailed, OpUnknown

DEFINITE_STATUS = frozenset({400, 401, 403, 405, 413, 429})
SESSION_GONE = ("invalid session", "not found")
"""Answer fragments meaning the session no longer exists (``not found`` only on 404)."""
DEFINITE_TEXT = ("No cluster leader", "Permission denied", "rate limit")


def answer_error(status: int, text: str, what: str) -> OpFailed | OpUnknown:
    """The outcome class of an error answer (HTTP ``status``, body ``text``)."""
    message = f"{what}: HTTP {status}: {text.strip()[:200] or 'no message'}"
    if "invalid session" in text.lower() or (status == 404 and "session" in text.lower()):
        return LeaseNotFound(message)
    if status in DEFINITE_STATUS or status == 404:
        return OpFailed(message)
    if any(t.lower() in text.lower() for t in DEFINITE_TEXT):
        return OpFailed(message)
    return OpUnknown(message)
