"""Checking while the run goes: the first anomaly as soon as the growing history shows it.

A workload checked for linearizability (its ``model``: the CAS registers) can be checked
key by key on the history so far: an operation still open may or may not have taken
effect, so a prefix that cannot be ordered stays so however the run goes on. ``LiveCheck``
sees every op the runner records (``tee``), and in a thread of its own, every ``every``
seconds, checks again each key that had a completion since (``checkers.linearizability``,
the checker the run ends with). The first anomaly found is kept (``first``: its kind,
sentence, key, when its last operation completed and when it was found), said once on
the console, and shown by the progress line (``note``); each of ``on_found`` is called
with it (``--stop-on-anomaly``: the runner stops invoking, and the run ends through its
teardown, healed, then checked whole; test.json's ``live_anomaly`` says so). After the
first anomaly it checks nothing more: the final check finds them all.

Each key's history is proven from its last cut (``checkers.linear.resume``: a point where
every operation of the key before it had completed, with the states a linearization of
what came before can end in), so a turn searches what the key did since, not its whole
history; the cuts (``cuts``) are handed to the run's final check, which starts there too.

A workload judged for mutual exclusion (``checkers.mutex``: the lock) is checked by
``LiveHoldings``: each turn, the run's records so far, read from its directory as the
final check reads them (the history, the resource's writes, the clients' and the
service's events), judged by the same checker, without its shrink. A violation counts
once every operation it involves completed ``SETTLE_S`` before (the records of that time,
the service's expiries among them, are written by then): a holding judged before its
facts arrived could tell another story than the final check.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final

from rich.markup import escape

from checkers import linearizability, mutex
from checkers.anomalies import KEY
from checkers.linear.models import get_model
from checkers.linear.resume import Cut, advance, proven_from
from checkers.linearizability import check
from checkers.result import CheckResult
from core.history import History
from core.ops import NEMESIS, Op
from core.run_clock import RunClock
from harness import analysis
from workloads.workload import Workload
from workloads.workload_registry import get_workload

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console

    from core.options import RunOptions

log = logging.getLogger("harness")

EVERY_S: Final = 0.2
"""Seconds between two checks of the keys that changed."""
PACE: Final = 4.0
"""A turn waits at least this many times as long as the last one took: however long the
history grows, checking it takes at most a fifth of the harness's time."""
CHECK_S: Final = 2.0
"""Seconds one key's check may take (undecided: tried again at the next turn)."""
STOP_GRACE_S: Final = 1.0
"""Seconds the operations open when ``--stop-on-anomaly`` stops a run get to complete
(then ``info``): a client frozen by a fault does not hold the run to its op timeout."""
SETTLE_S: Final = 1.0
"""Seconds after its last operation completed before a violation of mutual exclusion the
records show counts (what they say of that time is written by then)."""

Found = Callable[[dict[str, Any]], None]


def live_model(workload: Workload) -> str | None:
    """The model a workload's runs are checked against while they go: its own, when the
    linearizability checker judges it (a lock's "mutex" model is judged with its leases by
    ``checkers.mutex_lin`` instead); None: not checked for linearizability as it goes."""
    judged = linearizability.check_record in workload.checkers
    return workload.model if judged else None


def checked_live(workload: Workload) -> bool:
    """Whether a workload's runs are checked while they go: for linearizability, or for
    mutual exclusion (``checkers.mutex``); else at the end only."""
    return live_model(workload) is not None or mutex.check_record in workload.checkers


class _Turns:
    """A check of a run's records as they grow, turn by turn in a thread of its own (a
    context manager: the thread runs inside it), until the first anomaly: ``turn`` is the
    check's own."""

    def __init__(self, clock: RunClock, every: float = EVERY_S) -> None:
        self.clock, self.every = clock, every
        self.on_found: list[Found] = []
        """Called in turn with the first anomaly, once found."""
        self.first: dict[str, Any] | None = None
        self.cuts: dict[Any, Cut] = {}
        """Per key, the latest cut its history was proven up to (``checkers.linear.resume``)."""
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tee(self, record: Callable[[Op], None]) -> Callable[[Op], None]:
        """``record`` (the history's writer); a check that keeps the ops itself adds them."""
        return record

    def note(self) -> str | None:
        """The first anomaly for the progress line (None: none found yet)."""
        if self.first is None:
            return None
        return f"first anomaly at {self.first['found_s']:.1f} s: {self.first['sentence']}"

    def check_now(self) -> dict[str, Any] | None:
        """One turn; the first anomaly, once found (each of ``on_found`` called with it)."""
        if self.first is None:
            found = self.turn()
            if found is not None:
                self.first = found
                for said in self.on_found:
                    said(found)
        return self.first

    def turn(self) -> dict[str, Any] | None:
        """The first anomaly the records so far show, as test.json records it (None: none)."""
        raise NotImplementedError

    def _first(self, key: Any, named: Any, summary: str) -> dict[str, Any]:
        """The first anomaly as test.json records it."""
        a = named[0] if named else {}
        done = [x.get("complete_time") for x in a.get("involved") or ()]
        seen = max((t for t in done if isinstance(t, int)), default=None)
        return {
            "kind": a.get("kind", "non-linearizable"),
            "key": key,
            "sentence": a.get("sentence") or summary,
            "seen_s": None if seen is None else round(seen / 1e9, 3),
            "found_s": round(self.clock.seconds(), 3),
        }

    def _loop(self) -> None:
        """The turns, until the run ends or an anomaly is found; a check that fails (an
        operation the model refuses) ends the live check, logged: the run's own check
        at the end says what is wrong with the history."""
        wait = self.every
        while not self._stop.wait(wait):
            started = time.monotonic()
            try:
                if self.check_now() is not None:
                    return
            except Exception:
                log.exception("the check during the run stopped; the run goes on")
                return
            wait = max(self.every, PACE * (time.monotonic() - started))

    def __enter__(self) -> _Turns:
        self._thread = threading.Thread(target=self._loop, name="live-check", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(CHECK_S + 1)


class LiveCheck(_Turns):
    """The growing history of a run, per key, checked for linearizability as it grows."""

    def __init__(self, model: str, clock: RunClock, every: float = EVERY_S) -> None:
        super().__init__(clock, every)
        self.model = model
        self._model = get_model(model)
        self._ops: dict[Any, list[Op]] = {}
        self._changed: set[Any] = set()
        self._lock = threading.Lock()

    def tee(self, record: Callable[[Op], None]) -> Callable[[Op], None]:
        """``record`` (the history's writer), each op also kept for the checks."""

        def both(op: Op) -> None:
            record(op)
            self.add(op)

        return both

    def add(self, op: Op) -> None:
        """Keep a client op of the run (faults are not the model's)."""
        if op.process == NEMESIS or self.first is not None:
            return
        with self._lock:
            self._ops.setdefault(op.key, []).append(op)
            if op.type != "invoke":
                self._changed.add(op.key)

    def turn(self) -> dict[str, Any] | None:
        """Check each key changed since the last turn, from its cut."""
        with self._lock:
            changed, self._changed = self._changed, set()
            histories = {k: tuple(self._ops[k]) for k in changed}
        for key, ops in histories.items():
            cut = self.cuts.get(key)
            if cut is not None and proven_from(cut, ops, self._model, self._valid, CHECK_S):
                valid: Any = True
            else:
                result = check(History(ops), self.model, CHECK_S, parallel=False)
                valid = result.valid
                if valid is False:
                    return self._first(key, result.details.get(KEY) or (), result.summary)
            if valid is True:
                moved = advance(cut, ops, self._model, self._valid, CHECK_S)
                if moved is not None:
                    self.cuts[key] = moved
        return None

    def _valid(self, history: History, seconds: float | None) -> Any:
        """The verdict of ``history`` by the run's model within ``seconds``."""
        return check(history, self._model, seconds, explain=False, parallel=False).valid


class LiveHoldings(_Turns):
    """A run's records so far, read from its directory, judged for mutual exclusion."""

    def __init__(self, run_dir: Path, clock: RunClock, every: float = EVERY_S) -> None:
        super().__init__(clock, every)
        self.run_dir = run_dir
        self._seen: tuple[tuple[str, int], ...] = ()
        self._judged: CheckResult | None = None

    def _written(self) -> tuple[tuple[str, int], ...]:
        """The run directory's files and their sizes: the records only grow, so the same
        sizes are the same records."""
        return tuple(
            sorted((f.name, f.stat().st_size) for f in self.run_dir.iterdir() if f.is_file())
        )

    def turn(self) -> dict[str, Any] | None:
        """The first violation of mutual exclusion whose operations all completed
        ``SETTLE_S`` ago (the records judged again only when something was written since)."""
        written = self._written()
        if self._judged is None or written != self._seen:
            self._judged = mutex.judged(analysis.load_record(self.run_dir))
            self._seen = written
        result = self._judged
        if result.valid is not False:
            return None
        settled = self.clock.now() - int(SETTLE_S * 1e9)
        for a in result.details.get(KEY) or ():
            done = [x.get("complete_time") for x in a.get("involved") or ()]
            if done and all(isinstance(t, int) and t <= settled for t in done):
                return self._first(a.get("key"), [a], result.summary)
        return None


def for_run(opts: RunOptions, clock: RunClock, console: Console, run_dir: Path) -> _Turns | None:
    """The live check of a run (in ``run_dir``) whose workload can be checked as it goes
    (None: checked at the end only), which says its first anomaly on ``console``."""
    workload = get_workload(opts.workload)
    model = live_model(workload)
    live: _Turns
    if model is not None:
        live = LiveCheck(model, clock)
    elif checked_live(workload):
        live = LiveHoldings(run_dir, clock)
    else:
        return None

    def say(first: dict[str, Any]) -> None:
        stop = "; stopping the run (--stop-on-anomaly)" if opts.stop_on_anomaly else ""
        sentence = escape(str(first["sentence"]).rstrip("."))
        console.print(
            f"[red]first anomaly[/], found at {first['found_s']:.1f} s: {sentence}{stop}",
            highlight=False,
        )

    live.on_found.append(say)
    return live
