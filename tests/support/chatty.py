"""A client that logs as client libraries do (kazoo's warning when its connection drops),
for tests of where worker processes' log records go."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from core.client import Client, Completion, Invocation, WorkerContext

LINE = "Connection dropped: socket connection broken"


class _Chatty:
    def invoke(self, inv: Invocation) -> Completion:
        logging.getLogger("kazoo.client").warning(LINE)
        return Completion("ok", inv.value)

    def close(self) -> None:
        pass


@dataclass(frozen=True)
class ChattyFactory:
    """Builds the client in the worker (picklable: no state)."""

    def __call__(self, ctx: WorkerContext) -> Client:
        return _Chatty()
