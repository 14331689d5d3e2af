"""``harness run --replay RUN_DIR``: a recorded run's schedule issued again.

The recorded run's options (its seed included) are the new run's, against the same target
or another (``--target``); its client invocations and its fault starts and stops are
issued at their recorded times after the workload's start, each client op on the thread
(worker slot) of the process that invoked it (``core.gen.replay``). A fault is aimed at
what it hit, not resolved again (``nemesis.targets.recorded_aim``): a client fault at the
thread of the process it froze or killed, on any target; a server fault at the nodes it
hit, on its own target (another target's nodes are others: there it is aimed as asked).
A start that waited for its moment (``holder``: a holder beginning its work) is issued
when it took effect. Each client thread ends where the recording ended: once its ops
are done and that time has come, its worker is stopped and its client closed, as the
recorded run's end closed it (what it held is let go then, as recorded). The new run's
test.json names the run it replays (``replay_of``) and how late it issued each op
(``replay``: ``lateness``). A run directory without the options, the workload's start or
a history is bad input: one line.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from checkers.words import plural
from core import gen
from core.errors import HarnessError
from core.gen.context import Thread
from core.gen.replay import BEHIND, Recorded, replay
from core.ops import NEMESIS, Op
from core.options import DERIVED, RunOptions
from core.store import HISTORY_FILE, TEST_FILE, read_history_jsonl, read_json
from harness.recorded import checked_test
from nemesis.targets import recorded_aim
from workloads.workload_registry import get_workload


class ReplayError(HarnessError):
    """A run directory that cannot be replayed; the message says which file and why."""


@dataclass(frozen=True)
class Recording:
    """What a run recorded that a replay issues again."""

    run_dir: Path
    options: RunOptions
    clients: tuple[Recorded, ...]
    faults: tuple[Recorded, ...]
    aimed: tuple[Recorded, ...] = ()
    """``faults`` with each start aimed at what it hit (``n2``, not ``one``; the thread
    of process 3, not ``holder``)."""
    end: int | None = None
    """When the recorded run's last op happened (ns after the workload's start): where
    each client thread's recording ends."""
    clients_mode: str | None = None
    """How the recorded run's clients ran (test.json's ``clients``), which a replay on its
    target keeps; None: not recorded, or another target (``harness.client_mode`` decides)."""

    def on(self, target: str) -> Recording:
        """The recording as replayed on ``target``: on its own target each fault hits what
        it hit (a random ``one``, the leader or the holder of the time, again); on another
        the nodes differ, so a server fault is aimed as it was asked for, while a client
        fault still hits the thread it hit; the clients run as they did on its own target
        only (``clients_mode``)."""
        if target == self.options.target:
            if len(self.aimed) != len(self.faults):
                return self
            return replace(self, faults=self.aimed)
        if len(self.aimed) != len(self.faults):
            return replace(self, clients_mode=None)
        kept = tuple(
            a if a.victim is not None else f for f, a in zip(self.faults, self.aimed, strict=True)
        )
        return replace(self, faults=kept, aimed=kept, clients_mode=None)

    def generator(self) -> gen.Generator:
        """The whole schedule: the client invocations on their threads, the fault starts
        and stops (the final heal included, where it happened) on the nemesis thread, each
        as long after the first as it was in the recording (the new run's workers may take
        another time to start: its first invocation is issued as soon as they are up),
        each client thread ending where the recording ended."""
        everything = self.clients + self.faults  # one generator: one anchor for all threads
        ends: dict[Thread, int] | None = None
        if self.end is not None:
            ends = {t: self.end for t in range(self.options.concurrency)}
        return replay(everything, first=min(r.at for r in everything), ends=ends)


ON_TIME_NS = 50_000_000
"""An invocation within 50 ms of its recorded time counts as on time."""
FAITHFUL = 0.95
"""The share of invocations a faithful replay issues on time; below it the line says so."""


def lateness(recording: Recording, ops: list[Op], concurrency: int) -> dict[str, Any]:
    """How faithfully a replay issued its recording: each thread's k-th invocation in the
    new history against the k-th recorded for that thread, late by its time minus the
    recorded one (both after the first invocation, which the replay issues at once).
    What was recorded but never issued (the run ended first) is counted too, and each op
    late by more than 50 ms is told apart: ``held`` ones waited for their thread's
    previous op, which the service answered later than it had (an op never starts on a
    busy thread), or a fault for the op of its victim's thread it hit (which began late),
    the others the harness issued late. ``on_cue``: the ops the harness
    issued within 50 ms of when they could start (their recorded time, or their thread's
    previous answer when that came later, and for a fault as long after it as recorded:
    a fault started late still lasts its time), its own part of the faithfulness.
    The split of the issued ops: ``on_time``, ``held`` and ``late`` (the harness's own);
    ``first_held`` names where the holding began: the first held op, and how much later
    than recorded its thread's previous op was answered (or its victim began).
    ``caught_up``: how many holders' works were shortened to catch up (``BEHIND``), by
    at most ``caught_up_max_ms``.
    ``{"recorded", "issued", "on_time", "held", "late", "on_cue", "first_held",
    "caught_up", "caught_up_max_ms", "p50_ms", "p99_ms", "max_ms", "latest"}``."""
    wanted: dict[Any, list[Recorded]] = {}
    for r in sorted(recording.clients + recording.faults, key=lambda r: r.at):
        wanted.setdefault(r.thread, []).append(r)
    invoked = [op for op in ops if op.type == "invoke"]
    if not invoked or not wanted:
        return {"recorded": sum(map(len, wanted.values())), "issued": 0}
    anchor = invoked[0].time - min(rs[0].at for rs in wanted.values())
    starts: dict[Any, list[int]] = {}  # each thread's invocation times so far
    free_at: dict[Any, int] = {}  # each thread's last completion so far
    thread_of: dict[Any, Any] = {}  # each process's thread
    late: list[tuple[int, Any, bool]] = []
    on_cue = 0
    first_held: dict[str, Any] | None = None
    for op in ops:
        thread = NEMESIS if op.process == NEMESIS else int(op.process) % concurrency
        if op.type != "invoke":
            free_at[thread_of.get(op.process, thread)] = op.time
            continue
        thread_of[op.process] = thread
        k = len(starts.setdefault(thread, []))
        starts[thread].append(op.time)
        if k < len(wanted.get(thread, ())):
            r = wanted[thread][k]
            due = anchor + r.at
            cue = max(due, free_at.get(thread, 0) + (r.after or 0), _victim_cue(r, starts))
            held = cue > due + ON_TIME_NS
            if held and first_held is None and op.time - due > ON_TIME_NS:
                first_held = _first_held(thread, wanted[thread], k, cue - due)
            late.append((max(0, op.time - due), thread, held))
            on_cue += op.time - cue <= ON_TIME_NS
    if not late:
        return {"recorded": sum(map(len, wanted.values())), "issued": 0}
    delays = sorted(d for d, _, _ in late)
    worst = max(late, key=lambda x: x[0])

    def q(p: float) -> float:
        return round(delays[min(len(delays) - 1, int(p * len(delays)))] / 1e6, 1)

    behind = [
        float(op.value[BEHIND])
        for op in invoked
        if isinstance(op.value, dict) and isinstance(op.value.get(BEHIND), (int, float))
    ]
    on_time = sum(d <= ON_TIME_NS for d in delays)
    waited = sum(d > ON_TIME_NS and h for d, _, h in late)
    return {
        "recorded": sum(map(len, wanted.values())),
        "issued": len(late),
        "on_time": on_time,
        "held": waited,
        "late": len(late) - on_time - waited,
        "on_cue": on_cue,
        "first_held": first_held,
        "caught_up": len(behind),
        "caught_up_max_ms": round(max(behind, default=0.0) * 1000, 1),
        "p50_ms": q(0.5),
        "p99_ms": q(0.99),
        "max_ms": round(worst[0] / 1e6, 1),
        "latest": {"thread": worst[1], "late_ms": round(worst[0] / 1e6, 1)},
    }


def _first_held(thread: Any, ops: list[Recorded], k: int, by: int) -> dict[str, Any]:
    """Where holding began: thread ``thread``'s op ``k`` of ``ops`` could start only
    ``by`` ns after its recorded time (its previous op answered so much later)."""
    r = ops[k]
    return {
        "thread": thread,
        "f": r.f,
        "at_s": round(r.at / 1e9, 3),
        "after": ops[k - 1].f if k else None,
        "by_ms": round(by / 1e6, 1),
    }


def _victim_cue(r: Recorded, starts: dict[Any, list[int]]) -> int:
    """When a fault aimed at a thread's op could be issued: as far into that op as
    recorded, once the thread began it (0: not such a fault, or the op never began)."""
    if r.victim is None or r.during is None:
        return 0
    began = starts.get(r.victim, [])
    return began[r.during] + r.into if r.during < len(began) else 0


def lateness_line(facts: dict[str, Any]) -> str:
    """``replay: 279 of 279 recorded invocations issued: 268 (96%) on time (within 50 ms
    of their recorded time), 9 held by their thread's previous op (answered later than
    recorded; the first: thread 2's write at 0.358 s, its acquire answered 682 ms late),
    2 late by the harness; late by p50 3 ms, p99 40 ms, at most 2100 ms (thread 2)``,
    with ``below 95%: not a faithful replay`` when fewer were on time, and how many the
    harness issued within 50 ms of when their thread was free."""
    issued, recorded = facts.get("issued", 0), facts.get("recorded", 0)
    head = f"replay: {issued} of {recorded} recorded invocations issued"
    if not issued:
        return head
    on_time, held = facts["on_time"], facts.get("held", 0)
    late = facts.get("late", issued - on_time - held)
    line = (
        f"{head}: {on_time} ({100 * on_time // issued}%) on time (within 50 ms of their "
        f"recorded time), {held} held by their thread's previous op"
    )
    if held:
        line += f" (answered later than recorded{_first_held_words(facts.get('first_held'))})"
    line += (
        f", {late} late by the harness; late by p50 {facts['p50_ms']:g} ms, p99 "
        f"{facts['p99_ms']:g} ms, at most {facts['max_ms']:g} ms (thread "
        f"{facts['latest']['thread']})"
    )
    if on_time < FAITHFUL * issued:
        line += f" (below {FAITHFUL:.0%}: not a faithful replay)"
    if facts.get("caught_up"):
        line += (
            f"; {plural(facts['caught_up'], 'holder work', 'holder works')} issued late "
            f"shortened to catch up (by at most {facts['caught_up_max_ms']:g} ms)"
        )
    if "on_cue" in facts:
        line += (
            f"; the harness issued {facts['on_cue']} ({100 * facts['on_cue'] // issued}%) "
            "within 50 ms of when their thread was free"
        )
    return line


def _first_held_words(first: Any) -> str:
    """``; the first: thread 2's write at 0.358 s, its acquire answered 682 ms late``."""
    if not isinstance(first, dict):
        return ""
    before = f"its {first['after']}" if first.get("after") else "its victim's op"
    return (
        f"; the first: thread {first['thread']}'s {first['f']} at {first['at_s']:.3f} s, "
        f"{before} answered {first['by_ms']:g} ms late"
    )


def recorded(
    ops: list[Op],
    start_ns: int,
    concurrency: int,
    takes: frozenset[str] = frozenset(),
    work: frozenset[str] = frozenset(),
) -> tuple[list[Recorded], list[Recorded], list[Recorded]]:
    """A history's invocations as recordings: the clients', the faults' and the faults'
    aimed at what their completions say they hit. Times are after ``start_ns``; a client
    process is on its thread (process mod concurrency, as the runner numbers them). A
    take (``takes``: a lock's acquire) follows the takes of other threads invoked within
    50 ms of it that were granted before it (``raced``); a holder's work (``work``)
    catches up when issued late (``Recorded.catch_up``)."""
    clients: list[Recorded] = []
    faults: list[Recorded] = []
    aimed: list[Recorded] = []
    count: dict[int, int] = {}  # invocations per client thread so far
    open_: dict[Any, tuple[int, int]] = {}  # a client process's open op: (its k, invoked at)
    freed: int | None = None  # when the nemesis's latest op completed
    granted: dict[tuple[Any, int], int] = {}  # a take's (thread, k) -> when granted
    for op in ops:
        at = max(0, op.time - start_ns)
        if op.process == NEMESIS and op.type == "invoke":
            after = None if freed is None else at - freed
            faults.append(Recorded(NEMESIS, at, op.f, op.value, op.key, after=after))
            aimed.append(faults[-1])
        elif op.process == NEMESIS and aimed and aimed[-1].f == op.f:  # its completion
            aimed[-1] = _aimed(aimed[-1], op, at, concurrency, open_)
            freed = at
        elif isinstance(op.process, int) and op.type == "invoke":
            thread = op.process % concurrency
            clients.append(Recorded(thread, at, op.f, op.value, op.key, catch_up=op.f in work))
            open_[op.process] = (count.get(thread, 0), at)
            count[thread] = count.get(thread, 0) + 1
        elif isinstance(op.process, int):
            k_at = open_.pop(op.process, None)
            if k_at is not None and op.type == "ok" and op.f in takes:
                granted[(op.process % concurrency, k_at[0])] = at
    return raced(clients, granted), faults, aimed


def raced(clients: list[Recorded], granted: dict[tuple[Any, int], int]) -> list[Recorded]:
    """``clients`` with each granted take following the takes of other threads invoked
    within 50 ms of it and granted before it (``granted``: (thread, its k-th op) -> when
    it was granted): the service granted them in the order they reached it, which the
    replay reproduces by issuing them in that order (``Recorded.follows``)."""
    if not granted:
        return clients
    k_of: dict[int, tuple[Any, int]] = {}
    count: dict[Any, int] = {}
    for i, r in enumerate(clients):
        k_of[i] = (r.thread, count.get(r.thread, 0))
        count[r.thread] = count.get(r.thread, 0) + 1
    takes = [(i, k_of[i], granted[k_of[i]]) for i in range(len(clients)) if k_of[i] in granted]
    out = list(clients)
    for i, me, mine in takes:
        at = clients[i].at
        before = tuple(
            them
            for j, them, theirs in takes
            if them[0] != me[0] and theirs < mine and abs(clients[j].at - at) <= ON_TIME_NS
        )
        if before:
            out[i] = replace(clients[i], follows=before)
    return out


WAITS_FOR_ITS_MOMENT = frozenset({None, "holder"})
"""The aims whose start waits for a holder to begin its work before it hits (a client
fault's default is ``holder``): replayed at the named target, they are issued when the
recorded one took effect."""


def _aimed(
    invoked: Recorded,
    completed: Op,
    at: int,
    concurrency: int,
    open_: dict[Any, tuple[int, int]],
) -> Recorded:
    """A fault start aimed at what its ok completion (at ``at``) says it hit: named nodes
    for a server fault; for a client fault the thread of the one client process, and the
    op that process was in then (``open_``: each process's open op) and how far into it."""
    if completed.type != "ok" or not isinstance(invoked.value, dict):
        return invoked
    nodes, process = recorded_aim(invoked.value, completed.value)
    if nodes is None and process is None:
        return invoked
    waited = invoked.value.get("target") in WAITS_FOR_ITS_MOMENT
    when = at if waited else invoked.at
    if process is not None:
        value = {**invoked.value, "target": process}
        during, since = open_.get(process, (None, at))
        return replace(
            invoked,
            at=when,
            value=value,
            victim=process % concurrency,
            during=during,
            into=max(0, at - since) if during is not None else 0,
        )
    return replace(invoked, at=when, value={**invoked.value, "target": nodes})


def options_of(test: dict[str, Any], path: Path) -> RunOptions:
    """The recorded run's options, as they were given (the decided op timeout left to be
    decided again unless it was given)."""
    given = test.get("options")
    if not isinstance(given, dict):
        raise ReplayError(f"{path}: no options recorded; not a run directory of harness run")
    values = {k: v for k, v in given.items() if k not in DERIVED}
    if not given.get("op_timeout_given"):
        values.pop("op_timeout", None)  # follows the work again
    values["seed"] = test.get("seed", values.get("seed"))
    try:
        return RunOptions.from_mapping(values)
    except (HarnessError, TypeError) as e:
        raise ReplayError(f"{path}: its options cannot be run again: {e}") from None


def load_recording(run_dir: Path) -> Recording:
    """The recording of a run directory (one-line ``ReplayError`` when there is none)."""
    if not (run_dir / TEST_FILE).is_file():
        raise ReplayError(f"--replay {run_dir}: no {TEST_FILE} there; name a run directory")
    try:
        test = checked_test(read_json(run_dir / TEST_FILE), run_dir / TEST_FILE)
        history = list(read_history_jsonl(run_dir / HISTORY_FILE))
    except (OSError, ValueError) as e:
        raise ReplayError(f"--replay {run_dir}: cannot read it: {e}") from None
    start = test.get("workload_start_ns")
    if not isinstance(start, int) or isinstance(start, bool):
        raise ReplayError(f"--replay {run_dir}: the run never started its workload")
    opts = options_of(test, run_dir / TEST_FILE)
    holder = get_workload(opts.workload).holder
    takes = holder.takes if holder is not None and holder.gives else frozenset()
    work = holder.work if holder is not None else frozenset()
    clients, faults, aimed = recorded(history, start, opts.concurrency, takes, work)
    if not clients:
        raise ReplayError(f"--replay {run_dir}: its history holds no client operation")
    end = max(0, max(op.time for op in history) - start)
    mode = test.get("clients", {}).get("mode")
    return Recording(
        run_dir,
        opts,
        tuple(clients),
        tuple(faults),
        tuple(aimed),
        end,
        mode if isinstance(mode, str) else None,
    )


def replay_options(recording: Recording, target: str | None, out_dir: str) -> RunOptions:
    """The new run's options: the recorded ones, on ``target`` when given (its own nodes
    and image then), written under ``out_dir``."""
    opts = recording.options.with_(out_dir=out_dir)
    if target and target != opts.target:
        return opts.with_(
            target=target, nodes=None, image=None, lock=None, read_mode=None, persistence=None
        )
    return opts
