"""``python -m clusters.sim.server``: the sim service on newline-delimited JSON over TCP.

    python -m clusters.sim.server --port 0 --clock-origin NS [--events PATH] [--wal PATH]
        [--bug NAME]... [--lock-grace S] [--seed N] [--port-file PATH]

Prints its port on stdout's first line (and writes it to ``--port-file``). With ``--wal``
every state change is fsynced to that write-ahead log before the answer goes out (one
fsync for the requests of one turn of its event loop: ``clusters.sim.wal.GroupCommit``),
and replayed when the server starts again (``clusters.sim.wal``). Operations
(request ``{"op": NAME, ...}``, see ``clusters.sim.service`` for the semantics):

==================  ===========================  =======================================
op                  arguments                    result / refusals
==================  ===========================  =======================================
lease_grant         ttl (s)                      {lease, ttl}
lease_keepalive     lease                        {ttl}; "lease not found"
lease_ttl           lease                        {ttl}; "lease not found"
lease_revoke        lease                        {}; "lease not found"
lock_acquire        name, lease, wait (s)        {token, queued}; "not granted", "lease not found"
lock_try            name, lease                  {token or null, held_by}; "lease not found"
lock_watch          name, held_by, wait (s)      {notified}
lock_release        name, lease                  {}; "not the holder", "lease not found"
lock_holder         name                         {lease, token}
elect_campaign      name, lease, value, wait     {epoch}; "not elected", "lease not found"
elect_observe       name                         {leader, epoch}
elect_resign        name, lease                  {}; "not the leader", "lease not found"
reg_read            key                          {value}
reg_write           key, value                   {}
reg_cas             key, old, new                {}; "cas mismatch: ..."
member_register     member, lease                {}; "lease not found"
member_list                                      {members}
served                                           {counts}: requests served per op
==================  ===========================  =======================================

and the watch primitive's ``kv_put``, ``kv_get``, ``kv_watch``, ``kv_compact``
(``clusters.sim.kv``).
"""

from __future__ import annotations

import argparse
import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from clusters.sim.kv import KvStore
from clusters.sim.service import BUGS, SimService, UnknownBug, check_bugs
from clusters.sim.wal import GroupCommit, WriteAheadLog
from core.run_clock import RunClock
from core.store import JsonlWriter
from workloads.common.wire import RequestError, add_server_arguments, serve_until_signalled


def _arg(args: dict[str, Any], name: str, kind: type | tuple[type, ...]) -> Any:
    v = args.get(name)
    if not isinstance(v, kind) or isinstance(v, bool):
        raise RequestError(f"argument {name!r} is missing or not a {kind}")
    return v


_NUM = (int, float)


def make_handler(
    svc: SimService, kv: KvStore | None = None
) -> Callable[[str, dict[str, Any]], Awaitable[Any]]:
    """The wire handler of ``svc`` (and of its watch primitive ``kv``): validates
    arguments, then calls the operation; it counts the requests it serves per op, the
    service's own counters (``served``, itself not counted)."""
    store = kv if kv is not None else KvStore()
    served: Counter[str] = Counter()
    commit = GroupCommit(svc.detach_sync)

    async def handle(op: str, a: dict[str, Any]) -> Any:
        if op == "served":
            return {"counts": dict(served)}
        served[op] += 1
        try:
            return await _dispatch(op, a)
        finally:
            await commit.durable(svc.unsynced())  # on disk before the answer goes out

    async def _dispatch(op: str, a: dict[str, Any]) -> Any:
        if op == "lease_grant":
            return svc.lease_grant(float(_arg(a, "ttl", _NUM)))
        if op == "lease_keepalive":
            return svc.lease_keepalive(_arg(a, "lease", int))
        if op == "lease_ttl":
            return svc.lease_ttl(_arg(a, "lease", int))
        if op == "lease_revoke":
            return svc.lease_revoke(_arg(a, "lease", int))
        if op == "lock_acquire":
            return await svc.lock_acquire(
                _arg(a, "name", str), _arg(a, "lease", int), float(_arg(a, "wait", _NUM))
            )
        if op == "lock_try":
            return svc.lock_try(_arg(a, "name", str), _arg(a, "lease", int))
        if op == "lock_watch":
            held_by = a.get("held_by")
            if held_by is not None and (not isinstance(held_by, int) or isinstance(held_by, bool)):
                raise RequestError("argument 'held_by' is not an int or null")
            return await svc.lock_watch(_arg(a, "name", str), held_by, float(_arg(a, "wait", _NUM)))
        if op == "lock_release":
            return svc.lock_release(_arg(a, "name", str), _arg(a, "lease", int))
        if op == "lock_holder":
            return svc.lock_holder(_arg(a, "name", str))
        if op == "elect_campaign":
            return await svc.elect_campaign(
                _arg(a, "name", str),
                _arg(a, "lease", int),
                a.get("value"),
                float(_arg(a, "wait", _NUM)),
            )
        if op == "elect_observe":
            return svc.elect_observe(_arg(a, "name", str))
        if op == "elect_resign":
            return svc.elect_resign(_arg(a, "name", str), _arg(a, "lease", int))
        if op == "member_register":
            return svc.member_register(_arg(a, "member", str), _arg(a, "lease", int))
        if op == "member_list":
            return svc.member_list()
        if op == "reg_read":
            return svc.reg_read(_arg(a, "key", str))
        if op == "reg_write":
            return svc.reg_write(_arg(a, "key", str), a.get("value"))
        if op == "reg_cas":
            return svc.reg_cas(_arg(a, "key", str), a.get("old"), a.get("new"))
        if op.startswith("kv_"):
            return await _kv(op, a)
        raise RequestError(f"unknown op {op!r}; see clusters/sim/server.py for the list")

    async def _kv(op: str, a: dict[str, Any]) -> Any:
        if op == "kv_put":
            return store.put(_arg(a, "key", str), a.get("value"))
        if op == "kv_get":
            return store.get([str(k) for k in _arg(a, "keys", list)])
        if op == "kv_watch":
            keys = [str(k) for k in _arg(a, "keys", list)]
            return await store.watch(keys, _arg(a, "start", int), float(_arg(a, "wait", _NUM)))
        if op == "kv_compact":
            return store.compact()
        raise RequestError(f"unknown op {op!r}; see clusters/sim/kv.py for the list")

    return handle


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m clusters.sim.server", description="The sim coordination service."
    )
    add_server_arguments(parser)
    parser.add_argument("--clock-origin", type=int, required=True, help="RunClock origin, ns")
    parser.add_argument("--events", type=Path, help="JSON Lines log of lease/lock/leader events")
    parser.add_argument("--wal", type=Path, help="write-ahead log: state kept across restarts")
    parser.add_argument(
        "--bug",
        action="append",
        default=[],
        metavar="NAME",
        help="inject a known bug (repeatable): " + "; ".join(f"{k}: {v}" for k, v in BUGS.items()),
    )
    parser.add_argument("--lock-grace", type=float, default=1.0, help="lock-ignores-lease grace, s")
    parser.add_argument("--seed", type=int, help="seed of the stale-read bug's choices")
    args = parser.parse_args(argv)
    try:
        bugs = check_bugs(args.bug)
    except UnknownBug as e:
        parser.error(str(e))
    events = JsonlWriter(args.events) if args.events else None
    wal = WriteAheadLog(args.wal) if args.wal else None
    try:
        svc = SimService(
            RunClock(args.clock_origin).now,
            bugs,
            events,
            args.lock_grace,
            seed=args.seed,
            wal=wal,
        )
        handler = make_handler(svc, KvStore(wal))
        asyncio.run(serve_until_signalled(handler, args, background=[svc.sweep]))
    finally:
        if wal is not None:
            wal.close()
        if events is not None:
            events.close()


if __name__ == "__main__":
    main()
