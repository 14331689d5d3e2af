"""The CAS-register workload's client, for any target with a linearizable register per key.

Operations (``Invocation.f``, ``Invocation.key`` names the register): ``read`` -> ok with
the value; ``write`` (value) -> ok; ``cas`` (value ``[old, new]``) -> ok, or fail when the
current value is not ``old`` (the service refused: nothing changed).

With ``definite_reads``, a read that failed in any way, even with an unknown outcome, is a
``fail``: a read changes nothing (Jepsen's rule for idempotent operations), and an
``info`` would retire the process for nothing. The Docker targets' clients use it; the sim
target's keep ``info``.

A completion names the node the client was given (``node``), unless its backend knows
which server answered (``Answered``: a ZooKeeper session that failed over to another
server names that one).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from core.client import Completion, Invocation, WorkerContext
from core.option_checks import Bound
from core.option_records import option
from workloads.common.backoff import Backoff
from workloads.errors import OpUnknown


@dataclass(frozen=True, slots=True)
class RegisterOptions:
    """The CAS registers of the cas-register workload (the watch workload's keys too),
    read as ``opts.record(RegisterOptions)``."""

    keys: int = option(
        3, "independent keys", bound=Bound("--keys", 1, 1_000_000, integer=True, unit="keys")
    )
    read_mode: str | None = option(
        None, "how the cas-register's reads are served", named="read", variant=True
    )


class RegisterBackend(Protocol):
    """A driver offering read / write / compare-and-set per key. ``cas`` raises
    ``OpFailed`` when the current value differs."""

    def read(self, key: str) -> Any: ...

    def write(self, key: str, value: Any) -> None: ...

    def cas(self, key: str, old: Any, new: Any) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Answered(Protocol):
    """A backend that knows which server answered its last operation."""

    def answered_by(self) -> str | None:
        """The node that answered the last operation; None when it does not know."""
        ...


class RegisterClient:
    """One worker's register client (``core.client.Client``)."""

    def __init__(
        self,
        ctx: WorkerContext,
        connect: Callable[[], RegisterBackend],
        node: str | None = None,
        definite_reads: bool = False,
    ) -> None:
        self.ctx = ctx
        self.backend = connect()
        self.node = node
        self.definite_reads = definite_reads
        self.backoff = Backoff(seed=ctx.process)
        self._answered = self.backend if isinstance(self.backend, Answered) else None
        """The backend, when it knows who answered: asked once (a runtime protocol check
        costs tens of microseconds, which every operation would pay)."""

    def invoke(self, inv: Invocation) -> Completion:
        """One operation; while the service is unreachable, its failure is paced by the
        client's backoff (``workloads.common.backoff``)."""
        return self.backoff.run(lambda: self._do(inv), self.node)

    def _do(self, inv: Invocation) -> Completion:
        key = str(inv.key)
        if inv.f == "read":
            return self._read(key)
        if inv.f == "write":
            self.backend.write(key, inv.value)
            return Completion("ok", inv.value, node=self._node())
        if inv.f == "cas":
            old, new = inv.value
            self.backend.cas(key, old, new)
            return Completion("ok", [old, new], node=self._node())
        return Completion(
            "fail", error=f"unknown function {inv.f!r}; register offers read, write, cas"
        )

    def _read(self, key: str) -> Completion:
        try:
            return Completion("ok", self.backend.read(key), node=self._node())
        except OpUnknown as e:
            if not self.definite_reads:
                raise
            return Completion("fail", error=str(e), node=self.node)

    def _node(self) -> str | None:
        """The server that answered, when the backend knows it, else the client's node."""
        if self._answered is not None:
            return self._answered.answered_by() or self.node
        return self.node

    def close(self) -> None:
        self.backend.close()
