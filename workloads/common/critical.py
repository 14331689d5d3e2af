"""The critical section of the lock and election workloads: work, then a fenced write.

A holder computes for ``work`` seconds and then writes to the protected resource with its
fencing number (lock token or election epoch). What it writes names its writer and that
number (``signed``), so the resource's contents say whose write they are. It checks that
its lease is not known to be lost before and after the work, as a correct application
must; a process that was frozen during the work cannot know, and writes anyway. With the
check off (``--holder-check off``) it writes on its belief alone, as a naive application
that never asks its session does: a failover, a moved session or a lost connection then
shows its worst case.

The work is deliberately CPU-bound, not a sleep: it keeps the interpreter (the GIL), as
real computation does. A process frozen mid-work (SIGSTOP, like a GC pause) then resumes
exactly where it stopped: its main thread finishes the work, sees no loss and sends the
write before the keeper thread can even send its next keepalive. With a sleep, both threads
would wake together and race, and the demonstration would be a coin toss.
"""

from __future__ import annotations

import time
from typing import Any

from checkers.refusals import STALE_TOKEN
from core.client import Completion
from workloads.common.lease import Session
from workloads.common.resource import ResourceClient

LEASE_LOST = "lease lost"


def compute_for(seconds: float) -> None:
    """Busy for ``seconds`` on the monotonic clock, holding the interpreter (other threads
    of the process run only at the interpreter's switch interval, a few ms). A process
    stopped past the deadline goes on at once when continued."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


def signed(value: Any, writer: Any, number_key: str, number: int | None) -> dict[str, Any]:
    """``value`` as a holder writes it: its fields (a dict's; anything else as
    ``"value"``) with the ``writer`` (its process) and its fencing number under
    ``number_key`` (``token``, ``epoch``): ``{"name": "lock-0", "writer": 3, "token": 12}``."""
    fields = dict(value) if isinstance(value, dict) else {} if value is None else {"value": value}
    return {**fields, "writer": writer, number_key: number}


def fenced_write(
    resource: ResourceClient,
    session: Session,
    writer: Any,
    name: str,
    number: int | None,
    value: Any,
    work: float,
    number_key: str = "token",
    check: bool = True,
) -> Completion:
    """Compute for ``work`` s, then write ``value``, signed by ``writer`` and ``number``
    (``signed``, the number under ``number_key``), to resource ``name`` with token ``number``.

    ok (value: what was written and the token) if the resource accepted it; fail
    ``"rejected: stale token"`` if it refused (a refused write certainly did not take
    effect); fail ``"lease lost"`` without writing when the keeper has noticed the loss
    (only when ``check``: a holder that does not check writes anyway). Transport errors
    propagate (``workloads.errors``) for the caller to classify.
    """
    if check and session.lost:
        return Completion("fail", error=LEASE_LOST)
    compute_for(work)
    if check and session.lost:
        return Completion("fail", error=LEASE_LOST)
    written = signed(value, writer, number_key, number)
    result = resource.write(writer, name, number, written)
    if not result.accepted:
        return Completion("fail", error=STALE_TOKEN)
    return Completion("ok", value={"value": written, "token": number})
