"""The protected resource: a small fencing-aware store that lock and election workloads
write to, run as its own OS process on every target.

A lock service alone cannot keep a frozen ex-holder from writing: when the holder wakes
after its lease expired, it still believes it holds the lock. Only the resource can refuse
it, by remembering the highest fencing token it has seen per resource name and rejecting
lower ones (``accept <=> token >= highest``; equal tokens are the same holder writing again).

- ``--fencing on``: writes with a lower token are rejected. Writes *without* a token (an
  implementation that has none, such as a Redis lock) are accepted and flagged
  ``"unfenced": true``: the resource cannot judge them, and refusing them would make such
  targets untestable. ``checkers.mutex`` judges unfenced writes from the client history.
- ``--fencing off``: everything is accepted (the lock service is trusted alone); the log
  still records ``highest_before`` so a checker sees what fencing would have refused.

Every write received is appended to ``--log`` (JSON Lines, flushed line by line)::

    {"time": ARRIVAL_NS, "writer": PROCESS, "resource": NAME, "token": N | null,
     "value": V, "accepted": BOOL, "highest_before": N | null, "unfenced": BOOL}

``time`` is the arrival time on the run clock (``--clock-origin``, see ``core.run_clock``).
A holder's ``value`` names its writer and fencing number too (``workloads.common.critical.signed``:
``{"name": "lock-0", "writer": 3, "token": 12}``, ``"epoch"`` for an election), so what the
resource holds says whose write it is; older runs' values are the name alone.

Run: ``python -m workloads.common.resource --port 0 --clock-origin NS --log PATH --fencing on``.
From Python: ``with ResourceServer(log, clock, fencing=True) as r: ResourceClient(r.address)``.
"""

from __future__ import annotations

import argparse
import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.run_clock import RunClock
from core.store import JsonlWriter, read_jsonl
from workloads.common.service import ServiceProcess
from workloads.common.wire import (
    RequestError,
    WireClient,
    add_server_arguments,
    serve_until_signalled,
)

if TYPE_CHECKING:
    from core.options import RunOptions


@dataclass(slots=True)
class _Cell:
    value: Any = None
    highest: int | None = None
    writer: Any = None


class FencedStore:
    """The resource's state and its one rule; no I/O but the log."""

    def __init__(self, fencing: bool, clock: RunClock, log: JsonlWriter | None = None) -> None:
        self.fencing = fencing
        self.clock = clock
        self.log = log
        self._cells: dict[str, _Cell] = {}

    def write(self, writer: Any, resource: str, token: int | None, value: Any) -> dict[str, Any]:
        """Apply (or refuse) one write and log it; return the log record."""
        arrival = self.clock.now()
        cell = self._cells.setdefault(resource, _Cell())
        highest = cell.highest
        stale = token is not None and highest is not None and token < highest
        accepted = not (self.fencing and stale)
        if accepted:
            cell.value, cell.writer = value, writer
            if token is not None and (highest is None or token > highest):
                cell.highest = token
        record = {
            "time": arrival,
            "writer": writer,
            "resource": resource,
            "token": token,
            "value": value,
            "accepted": accepted,
            "highest_before": highest,
            "unfenced": token is None,
        }
        if self.log is not None:
            self.log.append(record)
        return record

    def read(self, resource: str) -> dict[str, Any]:
        """The current value, its writer and the highest token of ``resource``."""
        cell = self._cells.get(resource, _Cell())
        return {"value": cell.value, "writer": cell.writer, "highest": cell.highest}

    async def handle(self, op: str, args: dict[str, Any]) -> Any:
        """The wire handler: ``write`` and ``read``."""
        resource = args.get("resource")
        if not isinstance(resource, str):
            raise RequestError("'resource' (a name) is required")
        if op == "read":
            return self.read(resource)
        if op == "write":
            token = args.get("token")
            if token is not None and (not isinstance(token, int) or isinstance(token, bool)):
                raise RequestError(f"'token' must be an integer or null, not {token!r}")
            return self.write(args.get("writer"), resource, token, args.get("value"))
        raise RequestError(f"unknown op {op!r}; the resource offers 'write' and 'read'")


# --- client ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What the resource did with a write."""

    accepted: bool
    highest_before: int | None
    unfenced: bool


class ResourceClient:
    """A blocking client of the resource. Errors are ``workloads.common.wire``'s: ``NotSent`` and
    ``Rejected`` (definite), ``NoAnswer`` (unknown)."""

    def __init__(self, address: str, timeout: float = 5.0) -> None:
        self._wire = WireClient(address, timeout=timeout)

    def write(self, writer: Any, resource: str, token: int | None, value: Any) -> WriteResult:
        r = self._wire.call("write", writer=writer, resource=resource, token=token, value=value)
        return WriteResult(bool(r["accepted"]), r["highest_before"], bool(r["unfenced"]))

    def read(self, resource: str) -> dict[str, Any]:
        """``{"value", "writer", "highest"}`` of ``resource``."""
        return dict(self._wire.call("read", resource=resource))

    def close(self) -> None:
        self._wire.close()


# --- process ---------------------------------------------------------------------------


class ResourceServer:
    """Starts and stops the resource process for a run or a test (a context manager)."""

    def __init__(
        self, log_path: Path, clock: RunClock, fencing: bool = True, server_log: Path | None = None
    ) -> None:
        self.log_path = log_path
        self.fencing = fencing
        self._proc = ServiceProcess(
            "workloads.common.resource",
            [
                "--clock-origin",
                str(clock.origin),
                "--log",
                str(log_path),
                "--fencing",
                "on" if fencing else "off",
            ],
            server_log or log_path.with_name(log_path.stem + ".server.log"),
        )

    @classmethod
    def for_run(cls, opts: RunOptions, log_path: Path, clock: RunClock) -> ResourceServer:
        """The resource of a run with ``opts``, fencing as its ``--fencing`` says."""
        from workloads.common.lock_options import LockOptions  # not in the resource's process

        return cls(log_path, clock, fencing=opts.record(LockOptions).fencing)

    @property
    def address(self) -> str:
        return self._proc.address

    def start(self) -> str:
        """Start the process and return its address once it answers."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        return self._proc.start()

    def stop(self) -> None:
        self._proc.stop()

    def records(self) -> list[dict[str, Any]]:
        """Every write logged so far."""
        return list(read_jsonl(self.log_path)) if self.log_path.exists() else []

    def __enter__(self) -> ResourceServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m workloads.common.resource", description=__doc__.split("\n\n")[0]
    )
    add_server_arguments(parser)
    parser.add_argument("--clock-origin", type=int, required=True, help="RunClock origin, ns")
    parser.add_argument("--log", type=Path, required=True, help="JSON Lines write log")
    parser.add_argument("--fencing", choices=("on", "off"), default="on")
    args = parser.parse_args(argv)
    with JsonlWriter(args.log) as log:
        store = FencedStore(args.fencing == "on", RunClock(args.clock_origin), log)
        asyncio.run(serve_until_signalled(store.handle, args))


if __name__ == "__main__":
    main()
