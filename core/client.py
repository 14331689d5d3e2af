"""The client protocol: what the runner asks of a target's client, inside a worker process.

Each logical client process runs in its own OS process (a *worker*), so a client pause can
freeze it with SIGSTOP, keepalive thread included, exactly like a GC pause; where no fault
needs that, in a thread of the harness instead (``harness.client_mode``). The runner never
holds a client: it sends a picklable ``ClientFactory`` to the worker, which builds the
client there and feeds it invocations.

Error classification is the client's job (see ``Completion``): ``fail`` only when the
operation certainly did not happen, ``info`` on any doubt.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from core.run_clock import RunClock


@dataclass(frozen=True, slots=True)
class Invocation:
    """What to do: the function, its argument, and the key for keyed workloads."""

    f: str
    value: Any = None
    key: Any = None


@dataclass(frozen=True, slots=True)
class Completion:
    """How it ended: ok (happened, ``value`` is the result), fail (certainly did not
    happen) or info (unknown). ``error`` says why, ``node`` which server answered."""

    type: Literal["ok", "fail", "info"]
    value: Any = None
    error: str | None = None
    node: str | None = None


@dataclass(frozen=True, slots=True)
class WorkerContext:
    """What a client may use besides its target: its process id, the run's clock and a
    file it may append client-side events to (lease grants, keepalive acknowledgements,
    lost sessions), one JSON object per line."""

    process: int
    clock: RunClock
    events_path: Path | None = None
    thread: int | None = None
    """The runner's thread the process works for: it keeps its node across the fresh
    processes that replace one whose op timed out (as in Jepsen), so the clients of a
    node cut off by a partition stay there. None outside a runner: the process counts."""

    @property
    def slot(self) -> int:
        """What picks the client's node: its thread, else its process id."""
        return self.process if self.thread is None else self.thread


@runtime_checkable
class Client(Protocol):
    """One logical client: executes invocations one at a time."""

    def invoke(self, inv: Invocation) -> Completion: ...

    def close(self) -> None: ...


class ClientFactory(Protocol):
    """Builds a client inside a worker process. Must be picklable (a module-level class
    instance holding plain data)."""

    def __call__(self, ctx: WorkerContext) -> Client: ...
