"""Outcome classes for workload clients: definite failure versus unknown outcome.

Every driver error a workload client meets is turned into one of two exceptions, and each
maps to one completion type (Jepsen's rule, see ``core.ops``):

- ``OpFailed``: the operation certainly did not take effect (the request was never sent,
  or the server answered with a refusal). Completes as ``fail``.
- ``OpUnknown``: it may or may not have taken effect (a timeout or a lost connection after
  the request was sent). Completes as ``info``.

Target adapters raise subclasses of these; ``completion_for`` does the mapping in one place.
"""

from __future__ import annotations

from core.client import Completion


class OpFailed(Exception):
    """The operation certainly did not happen; the message says why."""


class Unreachable(OpFailed):
    """The service could not be reached (connection refused, no route, connect timeout):
    nothing was sent. Clients back off before the next try (``workloads.common.backoff``)."""


class OpUnknown(Exception):
    """The operation's outcome is unknown; the message says what went wrong."""


def completion_for(exc: OpFailed | OpUnknown, node: str | None = None) -> Completion:
    """The completion an operation ending in ``exc`` must be recorded with."""
    if isinstance(exc, OpFailed):
        return Completion("fail", error=str(exc), node=node)
    return Completion("info", error=str(exc), node=node)
