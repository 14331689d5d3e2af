"""Synthetic run directories, for the report's tests, browser tests and benchmark.

They are built in memory in a fraction of a second, with the same files and shapes as a
real run (``test.json``, ``history.jsonl``, and for locks ``resource.jsonl`` and
``events.jsonl``); ``harness.analysis.check_run`` then checks them with the real
checkers. Two scenarios:

- ``cas_register_run``: processes doing read / write / cas on a few keys, linearizable by
  construction (each operation takes effect at a random point of its interval, in that
  order), with fault windows that slow operations down and make some fail or time out
  (``info``: the process is replaced). ``stale_read=True`` makes one read return a value
  overwritten before it began: not linearizable.
- ``lock_run``: three processes taking a leased lock in turn; the holder is frozen for
  longer than its lease, the lock passes on, and the frozen holder's write arrives late
  with its old token: rejected with fencing on (valid), accepted with it off (invalid).
"""

from __future__ import annotations

import heapq
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.store import EVENTS_FILE, HISTORY_FILE, RESOURCE_FILE, TEST_FILE, write_json

_MS = 1_000_000
_S = 1_000_000_000


@dataclass
class _Ops:
    """Events of a history, collected in any order and written sorted by time."""

    events: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, time: int, process: Any, type_: str, f: str, value: Any = None, **extra: Any
    ) -> None:
        self.events.append(
            {
                "time": time,
                "process": process,
                "type": type_,
                "f": f,
                "value": value,
                **{k: v for k, v in extra.items() if v is not None},
            }
        )

    def write(self, path: Path) -> int:
        # At equal times a completion goes first: a process may invoke again at once.
        self.events.sort(key=lambda e: (e["time"], e["type"] == "invoke"))
        with open(path, "w") as out:
            for i, e in enumerate(self.events):
                out.write(json.dumps({"index": i, **e}, separators=(",", ":")) + "\n")
        return len(self.events)


def _test_json(run_dir: Path, name: str, seed: int, **options: Any) -> None:
    opts = {"target": "sim", "lock": None, "nemesis": ["none"], "seed": seed, **options}
    write_json(
        run_dir / TEST_FILE,
        {
            "name": name,
            "options": opts,
            "seed": seed,
            "status": "finished",
            "versions": {"harness": "synthetic", "sim": "built-in"},
            "nodes": ["sim"],
            "workload_start_ns": 0,
        },
    )


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w") as out:
        for r in rows:
            out.write(json.dumps(r, separators=(",", ":")) + "\n")


# --- CAS register ------------------------------------------------------------------------


@dataclass
class _Planned:
    process: int
    start: int
    end: int
    at: int  # when it takes effect
    f: str
    key: int
    arg: Any
    outcome: str  # ok | fail | info (fail: certainly no effect; info: effect unknown)
    value: Any = None
    error: str | None = None


def cas_register_run(
    run_dir: Path,
    *,
    ops: int = 2000,
    processes: int = 5,
    keys: int = 3,
    duration_s: float = 20.0,
    faults: int = 2,
    stale_read: bool = False,
    seed: int = 1,
) -> Path:
    """Write a cas-register run of ``ops`` operations over about ``duration_s`` seconds;
    return ``run_dir``."""
    run_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    windows = _fault_windows(faults, duration_s)
    gap = max(1, int(duration_s * _S * processes / max(1, ops)))  # mean time between invokes
    planned: list[_Planned] = []
    # Threads take turns by time (a heap of when each is next free), as a runner would.
    free = [(rng.randrange(gap), thread, thread) for thread in range(processes)]
    heapq.heapify(free)
    counter = 0
    while len(planned) < ops:  # the duration is a target: exactly ``ops`` operations
        t, thread, process = heapq.heappop(free)
        counter += 1
        op = _plan_op(rng, process, t, keys, counter, windows)
        planned.append(op)
        if op.outcome == "info":  # a timeout: the thread goes on as a new process
            process += processes
        think = 1 + rng.randrange(max(1, 2 * gap - (op.end - op.start)))
        heapq.heappush(free, (op.end + think, thread, process))
    _apply(planned, rng)
    if stale_read:
        _make_stale_read(planned)
    history = _Ops()
    for op in planned:
        value = op.arg if op.f != "read" else None
        history.add(op.start, op.process, "invoke", op.f, value, key=op.key)
        history.add(
            op.end, op.process, op.outcome, op.f, op.value, key=op.key, error=op.error, node="sim"
        )
    for i, (s, e) in enumerate(windows):
        history.add(s, "nemesis", "invoke", "start-partition", {"grudge": "halves"})
        history.add(s + 2 * _MS, "nemesis", "ok", "start-partition", {"partition": i})
        history.add(e - 2 * _MS, "nemesis", "invoke", "stop-partition")
        history.add(e, "nemesis", "ok", "stop-partition", {"healed": True})
    history.write(run_dir / HISTORY_FILE)
    name = "sim-cas-register-" + ("partition" if faults else "no-fault")
    _test_json(
        run_dir,
        name,
        seed,
        workload="cas-register",
        concurrency=processes,
        keys=keys,
        nemesis=["partition"] if faults else ["none"],
        time_limit=duration_s,
    )
    return run_dir


def _fault_windows(n: int, duration_s: float) -> list[tuple[int, int]]:
    """``n`` windows spread over the run, each a tenth of it long."""
    span = duration_s * _S
    return [
        (int(span * (i + 1) / (n + 1)), int(span * (i + 1) / (n + 1) + span / 10)) for i in range(n)
    ]


def _plan_op(
    rng: random.Random,
    process: int,
    t: int,
    keys: int,
    counter: int,
    windows: list[tuple[int, int]],
) -> _Planned:
    faulty = any(s <= t <= e for s, e in windows)
    x = rng.random()
    f, arg = ("read", None) if x < 0.5 else ("write", counter) if x < 0.8 else ("cas", counter)
    latency = int(rng.lognormvariate(0, 0.6) * (20 if faulty else 2) * _MS)
    outcome, error = "ok", None
    if faulty and rng.random() < 0.3:
        outcome, error = "fail", "unavailable: no quorum"
    elif faulty and rng.random() < 0.05:
        outcome, error, latency = "info", "timeout", 500 * _MS
    end = t + max(latency, 50_000)
    return _Planned(
        process, t, end, rng.randrange(t, end), f, rng.randrange(keys), arg, outcome, error=error
    )


def _apply(planned: list[_Planned], rng: random.Random) -> None:
    """Take effect in the order of the chosen points; fill in results."""
    state: dict[int, Any] = {}
    for op in sorted(planned, key=lambda o: o.at):
        current = state.get(op.key)
        if op.f == "cas":  # from what was last seen: most of the time the current value
            op.arg = [current if rng.random() < 0.6 else -1, op.arg]
        if op.outcome == "fail" or (op.outcome == "info" and rng.random() < 0.5):
            op.value = op.arg if op.f != "read" else None
            continue
        if op.f == "read":
            op.value = current if op.outcome == "ok" else None
        elif op.f == "write":
            state[op.key] = op.value = op.arg
        elif op.arg[0] == current:
            state[op.key] = op.arg[1]
            op.value = op.arg
        else:
            op.value = op.arg
            if op.outcome == "ok":
                op.outcome, op.error = "fail", "compare failed"


def _make_stale_read(planned: list[_Planned]) -> None:
    """Make a read in the middle return a value overwritten before it began."""
    by_time = sorted(planned, key=lambda o: o.start)
    for read in by_time[len(by_time) // 2 :]:
        if read.f != "read" or read.outcome != "ok":
            continue
        writes = [
            w
            for w in by_time
            if w.key == read.key and w.f == "write" and w.outcome == "ok" and w.end < read.start
        ]
        if len(writes) >= 2 and writes[-2].end < writes[-1].start:
            read.value = writes[-2].arg
            return
    raise ValueError("no read to make stale: use more operations")


# --- lock --------------------------------------------------------------------------------

_LOCK = {"name": "lock-0"}


@dataclass
class _Lock:
    """The scripted lock scenario while it is written: the history, the client events
    and the resource's log, and the write of a frozen holder still to arrive."""

    fencing: bool
    ttl: int
    keepalive: int = _S // 2
    work: int = 300 * _MS
    history: _Ops = field(default_factory=_Ops)
    events: list[dict[str, Any]] = field(default_factory=list)
    writes: list[dict[str, Any]] = field(default_factory=list)
    token: int = 0
    highest: int | None = None
    next_lease: int = 1000
    late: tuple[int, int, int, int] | None = None  # (arrival, process, token, lease)

    def lease(self, process: int, granted: int, until: int) -> int:
        """Grant a lease and keep it alive from ``granted`` to ``until``; its id."""
        self.next_lease += 1
        lease = self.next_lease
        ev = {"process": process, "lease": lease, "ttl": self.ttl / _S, "lock": "lock"}
        self.events.append({"time": granted, "event": "lease-granted", "sent": granted - _MS, **ev})
        t = granted + self.keepalive
        while t <= until:
            self.events.append({"time": t, "event": "keepalive", "sent": t - _MS, **ev})
            t += self.keepalive
        return lease

    def acquired(self, p: int, at: int, until: int) -> int:
        """``p`` is granted the lock at ``at`` with a lease kept alive until ``until``;
        returns its token."""
        self.token += 1
        lease = self.lease(p, at - 2 * _MS, until)
        self.history.add(at, p, "ok", "acquire", {"token": self.token, "lease": lease})
        self.history.add(at + _MS, p, "invoke", "write", _LOCK)
        return self.token

    def arrive(self, process: int, token: int, arrival: int) -> bool:
        """A write reaches the resource; whether it was accepted."""
        stale = self.highest is not None and token < self.highest
        accepted = not (self.fencing and stale)
        self.writes.append(
            {
                "time": arrival,
                "writer": process,
                "resource": "lock-0",
                "token": token,
                "value": _LOCK,
                "accepted": accepted,
                "highest_before": self.highest,
                "unfenced": False,
            }
        )
        if accepted and (self.highest is None or token > self.highest):
            self.highest = token
        h = self.history
        if accepted:
            h.add(arrival + _MS, process, "ok", "write", {"value": _LOCK, "token": token})
        else:
            h.add(arrival + _MS, process, "fail", "write", _LOCK, error="rejected: stale token")
        return accepted

    def thaw(self, before: int) -> int | None:
        """Deliver the frozen holder's write if it arrives before ``before``: it then
        finds its lease gone, its release fails, and it asks for the lock again.
        Returns the process, back in the queue, or None."""
        if self.late is None or self.late[0] >= before:
            return None
        arrival, p, token, lease = self.late
        self.late = None
        self.arrive(p, token, arrival)
        self.events.append(
            {
                "time": arrival + 2 * _MS,
                "process": p,
                "event": "lease-lost",
                "lease": lease,
                "ttl": self.ttl / _S,
                "lock": "lock",
            }
        )
        h = self.history
        h.add(arrival + 3 * _MS, p, "invoke", "release", _LOCK)
        h.add(arrival + 4 * _MS, p, "fail", "release", _LOCK, error="lease not found")
        h.add(arrival + 5 * _MS, p, "invoke", "acquire", _LOCK)
        return p


def lock_run(
    run_dir: Path,
    *,
    fencing: bool = True,
    pause_at_s: float = 3.0,
    pause_for_s: float = 6.0,
    lease_ttl_s: float = 2.0,
    duration_s: float = 14.0,
    seed: int = 1,
    target: str = "sim",
    handed_on_ttls: float = 1.0,
) -> Path:
    """Write a lock run in which the holder at ``pause_at_s`` is frozen for ``pause_for_s``
    (longer than its lease): return ``run_dir``. The service hands the lock on
    ``handed_on_ttls`` TTLs after the frozen holder's last renewal (Consul: up to 2)."""
    run_dir.mkdir(parents=True, exist_ok=True)
    lk = _Lock(fencing=fencing, ttl=int(lease_ttl_s * _S))
    h = lk.history
    pause_at, pause_end = int(pause_at_s * _S), int((pause_at_s + pause_for_s) * _S)
    queue, frozen, t = [0, 1, 2], False, 100 * _MS
    for p in queue:
        h.add(t, p, "invoke", "acquire", _LOCK)
    while t < duration_s * _S:
        p, granted = queue.pop(0), t + 5 * _MS
        end = granted + lk.work
        if not frozen and granted < pause_at < end:
            frozen = True
            token = lk.acquired(p, granted, pause_at)
            lease = lk.next_lease
            expiry = max(e["time"] for e in lk.events if e["lease"] == lease) + lk.ttl
            lk.late = (pause_end + 5 * _MS, p, token, lease)
            h.add(
                pause_at - 2 * _MS, "nemesis", "invoke", "start-client-pause", {"target": "holder"}
            )
            h.add(pause_at, "nemesis", "ok", "start-client-pause", {"processes": [p]})
            h.add(pause_end, "nemesis", "invoke", "stop-client-pause")
            h.add(pause_end + 10 * _MS, "nemesis", "ok", "stop-client-pause", {"processes": [p]})
            t = expiry + int((handed_on_ttls - 1) * lk.ttl) + 5 * _MS  # once the lease ended
            continue
        token = lk.acquired(p, granted, end)
        back = lk.thaw(before=end - _MS)
        lk.arrive(p, token, end - _MS)
        h.add(end + _MS, p, "invoke", "release", _LOCK)
        h.add(end + 3 * _MS, p, "ok", "release", _LOCK)
        h.add(end + 4 * _MS, p, "invoke", "acquire", _LOCK)
        queue += [q for q in (back, p) if q is not None]
        t = end + 4 * _MS
    back = lk.thaw(before=2**62)  # a holder frozen past the end still thaws
    queue += [back] if back is not None else []
    last = max(t, pause_end + 20 * _MS) + 10 * _MS
    for q in queue:  # the run ends: the waiters give up
        h.add(last, q, "fail", "acquire", _LOCK, error="not granted")
    h.write(run_dir / HISTORY_FILE)
    _jsonl(run_dir / RESOURCE_FILE, sorted(lk.writes, key=lambda w: w["time"]))
    _jsonl(run_dir / EVENTS_FILE, sorted(lk.events, key=lambda e: e["time"]))
    _test_json(
        run_dir,
        f"{target}-lock-client-pause",
        seed,
        target=target,
        workload="lock",
        concurrency=3,
        nemesis=["client-pause"],
        fencing=fencing,
        lease_ttl=lease_ttl_s,
        keepalive=0.5,
        pause_at=pause_at_s,
        pause_for=pause_for_s,
        time_limit=duration_s,
    )
    return run_dir


# --- the standard set ------------------------------------------------------------------

DEMO_RUNS = ("lock-fenced", "lock-unfenced", "cas-valid", "cas-stale-read")


def demo_runs(root: Path, *, check: bool = True) -> dict[str, Path]:
    """The four standard runs under ``root`` (``root/<name>/20260101T00000N``), checked
    with the real checkers: a valid lock run (fencing rejected the stale write), an
    invalid one (fencing off: accepted), a valid cas-register run with faults, and an
    invalid one (a stale read)."""
    from harness.analysis import check_run

    builders = {
        "lock-fenced": lambda d: lock_run(d, fencing=True),
        "lock-unfenced": lambda d: lock_run(d, fencing=False),
        "cas-valid": lambda d: cas_register_run(d, faults=2),
        "cas-stale-read": lambda d: cas_register_run(d, faults=0, stale_read=True),
    }
    out = {}
    for i, (name, build) in enumerate(builders.items()):
        run_dir = build(root / name / f"20260101T00000{i}")
        if check:
            check_run(run_dir)
        out[name] = run_dir
    return out
