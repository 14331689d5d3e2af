"""One whole run: store, cluster, resource, nemesis, runner, teardown, check.

Setup and teardown are paired by scope (one ``ExitStack``): whatever was set up is torn
down on every exit path, in reverse order: faults healed, workers stopped (thawed first),
node logs collected, the cluster and the protected resource stopped. The history is on
disk as it happens; the checks run from the run directory, exactly as ``harness check
RUN_DIR`` would, so an interrupted run is still checked.
"""

from __future__ import annotations

import contextlib
import logging
import platform
import random
import signal
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, Final, NoReturn

from clusters import run_target
from core.errors import CrashReported, HarnessError
from core.options import RunOptions
from core.run_clock import RunClock
from core.store import (
    EVENTS_FILE,
    HISTORY_FILE,
    LOG_FILE,
    RESOURCE_FILE,
    TEST_FILE,
    HistoryWriter,
    Reserve,
    new_run_dir,
    write_json,
)
from harness import analysis, live_check
from harness.client_mode import AUTO, THREAD, ClientMode, client_mode
from harness.held_signals import raising
from harness.load import Load
from harness.logs import log_to
from harness.plan import build_plan, warnings_at_start
from harness.progress import Progress
from harness.rerun import rerun_command
from harness.runner import Runner
from harness.validate import Checked
from nemesis.build import asked_durations, build_nemesis
from nemesis.fault_registry import facts_of
from workloads.common.resource import ResourceServer
from workloads.workload_registry import get_workload

if TYPE_CHECKING:
    from rich.console import Console

    from clusters.spec import TargetSpec
    from harness.replay import Recording
    from harness.terminal import Terminal

log = logging.getLogger("harness")

PACKAGE: Final = "coordination-harness"
"""The distribution whose version test.json records (``harness_version``)."""


def harness_version() -> str:
    """The harness's version as its installed package's metadata says (pyproject.toml's,
    one place), recorded in test.json; ``unknown`` for code not installed as a package."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class RunOutcome:
    run_dir: Path
    valid: Any
    exit_code: int


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that end a run early, through the teardown: Ctrl-C, kill, a closed terminal."""


class RunInterrupted(KeyboardInterrupt):
    """A stop signal arrived mid-run: which one, and when (seconds on the run clock)."""

    def __init__(self, signame: str, at_s: float) -> None:
        super().__init__(f"{signame} at {at_s:.1f} s")
        self.signame = signame
        self.at_s = at_s


@contextmanager
def _signals_as_interrupt(clock: RunClock) -> Iterator[None]:
    """SIGINT, SIGTERM and SIGHUP end a run alike: through the teardown, remembered. The
    first one counts; later ones are ignored until the teardown is done (an impatient
    second Ctrl-C must not leave a fault in place). Raised in a finalizer, where Python
    drops it, the runner's loop raises it (``harness.held_signals.raising``)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        raise RunInterrupted(signal.Signals(signum).name, clock.seconds())

    stop = raising(handler)
    old = {s: signal.signal(s, stop) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


@contextmanager
def _no_interrupts() -> Iterator[None]:
    """Teardown must finish: hold every stop signal until it has."""
    old = {s: signal.signal(s, signal.SIG_IGN) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _quiet_resource_tracker() -> None:
    """Start multiprocessing's resource tracker ignoring SIGHUP, as it ignores SIGINT and
    SIGTERM: a closed terminal hangs up the whole process group, and a tracker killed by
    it is relaunched empty and prints a KeyError traceback for every semaphore the
    workers release afterwards. An ignored signal stays ignored across exec."""
    from multiprocessing import resource_tracker

    old = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, old)


def _log_to(run_dir: Path) -> logging.Handler:
    return log_to(run_dir / LOG_FILE)


def run_test(
    checked: Checked,
    term: Terminal,
    recording: Recording | None = None,
    repeat: dict[str, Any] | None = None,
) -> RunOutcome:
    """Run a test end to end and print its verdict; never leaves a fault behind. It runs
    only options checked and decided (``harness.validate.check_run``), as they are but for
    the seed, chosen here when none was given. With a ``recording`` (``harness run
    --replay``), its invocations and faults are the schedule; ``repeat``: which run of a
    repeat this is (``harness.repeat``), for test.json."""
    opts, target = checked
    _prepare_clients(opts, target)
    clients = _clients(opts, target, recording)
    seed = opts.seed if opts.seed is not None else random.randrange(2**31)
    opts = replace(opts, seed=seed)
    run_dir = new_run_dir(Path(opts.out_dir), opts.test_name())
    handler = _log_to(run_dir)
    try:
        reserve = Reserve(run_dir)
        try:
            return _run_in(run_dir, opts, target, term, clients, recording, repeat)
        finally:
            reserve.release()
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()


def _prepare_clients(opts: RunOptions, target: TargetSpec) -> None:
    """What the run's clients need made before anything starts (a lock library's
    environment: ``workloads.libraries.resolve.OwnLocks.prepare``); its one-line error
    stops the run before it has a directory."""
    prepare = getattr(target.client_builder(opts), "prepare", None)
    if callable(prepare):
        prepare(opts)


def _run_in(
    run_dir: Path,
    opts: RunOptions,
    target: TargetSpec,
    term: Terminal,
    clients: ClientMode,
    recording: Recording | None,
    repeat: dict[str, Any] | None = None,
) -> RunOutcome:
    """The run in ``run_dir`` (its log open, its reserve of disk space set aside), then
    its check: the body of ``run_test``."""
    _quiet_resource_tracker()
    clock = RunClock()
    asked = asked_durations(opts)  # how long each fault is to last, for its windows
    holder = get_workload(opts.workload).holder
    test: dict[str, Any] = {
        "name": opts.test_name(),
        "options": opts.to_dict(),
        "faults": {
            name: {**fact, "asked_s": asked[name]}
            for name, fact in facts_of(opts.fault_names()).items()
        },
        "seed": opts.seed,
        "clients": clients.to_dict(),
        "linearizable_locks": target.linearizable_locks,
        "holder": holder.to_dict() if holder is not None else None,
        "service_rules": [r.to_dict() for r in target.rules_for(opts)],
        "service_log": target.service_log,
        "versions": {"harness": harness_version(), "python": platform.python_version()},
        "clock_origin_ns": clock.origin,
        "started": _utc_now(),
        "argv": sys.argv,
        "status": "running",
    }
    warnings = warnings_at_start(opts, target)
    if warnings:
        test["warnings"] = warnings
    replay_of = str(recording.run_dir.resolve()) if recording is not None else None
    test["command"] = rerun_command(opts, replay_of)
    if replay_of is not None:
        test["replay_of"] = replay_of
    if repeat is not None:
        test["repeat"] = repeat
    write_json(run_dir / TEST_FILE, test)
    HistoryWriter(run_dir / HISTORY_FILE).close()  # a run stopped before its first op has one
    term.err.print(f"[bold]{opts.test_name()}[/] seed {opts.seed}, {clients.line()} -> {run_dir}")
    for warning in warnings:
        term.err.print(f"warning: {warning}", markup=False, highlight=False)
        log.warning("%s", warning)
    for rule in target.rules_for(opts):
        log.info("service rule: %s", rule.line(target.name))
    log.info("run %s, seed %s: %s", opts.test_name(), opts.seed, test["command"])
    log.info("%s", clients.line())
    ended: dict[str, Any] = {"status": "finished"}
    proven: dict[Any, Any] = {}  # what the check during the run proved, per key
    try:
        with _signals_as_interrupt(clock):
            proven = _drive(run_dir, opts, target, term, recording, clock, test, clients)
    except KeyboardInterrupt as e:
        stop = e if isinstance(e, RunInterrupted) else RunInterrupted("SIGINT", clock.seconds())
        ended = {
            "status": "interrupted",
            "interrupted": {"signal": stop.signame, "at_s": round(stop.at_s, 3)},
        }
        log.warning("interrupted by %s; faults healed", stop)
        term.err.print(
            f"[yellow]interrupted by {stop}: faults healed, checking what was recorded[/]"
        )
    except HarnessError as e:  # it could not run as asked (a refusal, a cluster never up)
        log.error("the run could not go on: %s", e)
        test.update(
            status="failed",
            failed={"error": str(e), "at_s": round(clock.seconds(), 3)},
            ended_at=_utc_now(),
        )
        with contextlib.suppress(OSError):
            write_json(run_dir / TEST_FILE, test)
        raise  # its one line, exit 254: what to fix is the user's
    except Exception as e:  # the harness failed: say so in test.json, then stop
        ended = {
            "status": "crashed",
            "crashed": {"error": f"{type(e).__name__}: {e}", "at_s": round(clock.seconds(), 3)},
        }
        _say_crashed(run_dir, test, ended, e)
    if recording is not None:
        test["replay"] = _replayed(recording, run_dir, opts, term)
    test.update(ended, ended_at=_utc_now())
    write_json(run_dir / TEST_FILE, test)
    log.info("run %s at %.1f s", test["status"], clock.seconds())
    results = analysis.check_run(run_dir, at_run=True, proven=proven)
    log.info("verdict: %s (exit %d)", results["verdict"], analysis.exit_code_of(results))
    analysis.print_results(results, term.out)
    for rule in target.rules_for(opts):  # what the verdict depends on, beside it
        term.out.print(rule.line(target.name), highlight=False, markup=False)
    _quietly("write the report", _write_report, run_dir, term.out)
    term.out.print(f"results in {run_dir}", soft_wrap=True)
    return RunOutcome(run_dir, results["valid"], analysis.exit_code_of(results))


def _clients(opts: RunOptions, target: TargetSpec, recording: Recording | None) -> ClientMode:
    """How the run's clients run, and why (``harness.client_mode``; a one-line
    OptionError for a mode they cannot run in); a replay's as the recorded run's did
    (``Recording.clients_mode``), unless it was asked for one."""
    recorded = recording.clients_mode if recording is not None else None
    if recorded is None or opts.clients.mode != AUTO:
        return client_mode(opts, target)
    mode = client_mode(opts.with_(clients=recorded), target).mode
    return ClientMode(mode, "as the recorded run's")


def _replayed(
    recording: Recording, run_dir: Path, opts: RunOptions, term: Terminal
) -> dict[str, Any]:
    """How late the replay issued its recording (``harness.replay.lateness``), said on
    the console and in harness.log, for test.json."""
    from core.store import read_history_jsonl
    from harness.replay import lateness, lateness_line

    facts = lateness(recording, list(read_history_jsonl(run_dir / HISTORY_FILE)), opts.concurrency)
    term.out.print(lateness_line(facts), highlight=False)
    log.info("%s", lateness_line(facts))
    return facts


def _say_crashed(
    run_dir: Path, test: dict[str, Any], ended: dict[str, Any], e: Exception
) -> NoReturn:
    """A run the harness could not carry on: the teardown has healed every fault and
    stopped the workers and the cluster; test.json says where and why it stopped (written
    into the space the run set aside, should the disk be full), harness.log has the
    traceback, and the one line raised says what to do with what was recorded. No check
    follows: the results could not be written where the run could not write."""
    Reserve.release_in(run_dir)
    log.error("the run crashed at %.1f s", ended["crashed"]["at_s"], exc_info=e)
    test.update(ended, ended_at=_utc_now())
    try:
        write_json(run_dir / TEST_FILE, test)
        said = "test.json says so"
    except OSError as w:
        said = f"test.json could not say so either ({w.strerror})"
    raise CrashReported(
        f"the run stopped at {ended['crashed']['at_s']:.1f} s: {ended['crashed']['error']}; "
        f"faults healed, workers and cluster stopped, {said}; what was recorded is "
        f"checkable: harness check {run_dir} (traceback in {run_dir / LOG_FILE})"
    ) from e


def _drive(
    run_dir: Path,
    opts: RunOptions,
    target: TargetSpec,
    term: Terminal,
    recording: Recording | None,
    clock: RunClock,
    test: dict[str, Any],
    clients: ClientMode,
) -> dict[Any, Any]:
    """Set up the cluster, resource, workers and nemesis, run the schedule, tear down
    (one ``ExitStack``: whatever was set up is torn down, however this ends); what the
    check during the run proved, for the final check to start from (``LiveCheck.cuts``)."""
    with ExitStack() as stack:
        stack.callback(_finish_teardown)
        cluster = run_target.make_cluster(target, opts, clock)
        stack.callback(_quietly, "stop the cluster", cluster.stop)
        stack.callback(_quietly, "collect node logs", cluster.collect_logs, run_dir / "nodes")
        term.err.print(f"starting {opts.target} ...")
        log.info("starting %s", opts.target)
        cluster.start(run_dir)
        test["versions"].update(target.versions(cluster))
        test["nodes"] = cluster.nodes()
        write_json(run_dir / TEST_FILE, test)
        log.info("%s up: nodes %s, versions %s", opts.target, test["nodes"], test["versions"])

        resource = _start_resource(opts, run_dir, clock, stack)
        plan = build_plan(opts, target, cluster, seed_of(opts), resource)
        _record_library(plan.client, test, run_dir)
        writer = HistoryWriter(run_dir / HISTORY_FILE, batched=True)
        stack.callback(writer.close)
        live = live_check.for_run(opts, clock, term.err, run_dir)  # None: at the end only
        runner = Runner(
            generator=plan.client_gen,  # the schedule comes with begin(), below
            client_factory=plan.client,
            concurrency=opts.concurrency,
            clock=clock,
            record=writer.write if live is None else live.tee(writer.write),
            flush=writer.flush,
            op_timeout=opts.op_timeout,
            events_path=run_dir / EVENTS_FILE,
            holder=get_workload(opts.workload).holder,
            threads=clients.mode == THREAD,
        )
        stack.callback(_quietly, "stop the workers", runner.close)
        runner.start_workers()  # the workload starts once they are ready
        workload_start = clock.seconds()
        nemesis, nemesis_gen, final_gen = build_nemesis(
            opts, cluster, seed_of(opts), workload_start
        )
        test["workload_start_ns"] = clock.now()
        log.info(
            "%d workers ready; the workload starts at %.3f s", opts.concurrency, workload_start
        )
        if nemesis is not None:
            stack.callback(_quietly, "heal every fault", nemesis.teardown)
        schedule = (  # a replay: the recorded schedule instead of the seeded one
            recording.generator()
            if recording is not None
            else plan.generator(nemesis_gen, final_gen, workload_start)
        )
        runner.begin(schedule, nemesis)
        total = opts.time_limit + opts.recovery_time
        if live is not None and opts.stop_on_anomaly:
            live.on_found.append(lambda first: runner.stop(live_check.STOP_GRACE_S))
        note = live.note if live is not None else None
        try:
            with (
                live or contextlib.nullcontext(),
                Progress(term.err, runner.stats, clock.seconds, total, opts.test_name(), note),
            ):
                runner.run()
        finally:  # an interrupted run's load too: what it drove before it stopped
            _record_load(runner.load(opts.rate), test, term)
        if live is not None and live.first is not None:
            test["live_anomaly"] = {**live.first, "stopped_run": opts.stop_on_anomaly}
            log.info("first anomaly found during the run: %s", live.first)
        log.info("the schedule ended at %.1f s; tearing down", clock.seconds())
        return {} if live is None else live.cuts


def _record_library(client: Any, test: dict[str, Any], run_dir: Path) -> None:
    """test.json's ``lock_library``: what the clients' lock is when it is a library or a
    lock of one's own (its name, origin, package, installed version, interpreter); the
    library's version beside the others, as ``<library> library`` (its package may share
    the service's name: redis-py's is ``redis``)."""
    library = dict(getattr(client, "library", ()))
    if not library:
        return
    test["lock_library"] = library
    if "package" in library:
        test["versions"][f"{library['library']} library"] = library["version"]
    write_json(run_dir / TEST_FILE, test)
    log.info("lock library: %s", library)


def _record_load(load: Load | None, test: dict[str, Any], term: Terminal) -> None:
    """The load the run achieved and the harness's CPU for it, in test.json (``load``,
    written with the run's end) and on the console; a rate far below the asked one is a
    warning there and in test.json's ``warnings``."""
    if load is None:
        return
    test["load"] = load.to_dict()
    log.info("%s", load.line())
    term.err.print(load.line(), markup=False, highlight=False)
    warning = load.warning()
    if warning is not None:
        test.setdefault("warnings", []).append(warning)
        term.err.print(f"warning: {warning}", markup=False, highlight=False)
        log.warning("%s", warning)


def _utc_now() -> str:
    """The present moment in UTC, ISO 8601 with its zone (test.json's wall times)."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def seed_of(opts: RunOptions) -> int:
    """The run's seed (chosen before the run when the user gave none)."""
    assert opts.seed is not None
    return opts.seed


def _start_resource(
    opts: RunOptions, run_dir: Path, clock: RunClock, stack: ExitStack
) -> str | None:
    """Start the protected resource when the run's workload needs it (stopped by
    ``stack``); its address, else None."""
    if not get_workload(opts.workload).needs_resource:
        return None
    server = ResourceServer.for_run(opts, run_dir / RESOURCE_FILE, clock)
    stack.enter_context(server)
    return server.address


def _quietly(what: str, fn: Any, *args: Any) -> None:
    """Teardown steps run with Ctrl-C held, and one failing step does not stop the rest.
    A step's failure is a warning on the console, unless the run is ending in a crash
    (one line then says it all and names harness.log, where every failure is)."""
    crashing = isinstance(sys.exc_info()[1], Exception)
    with _no_interrupts():
        try:
            fn(*args)
        except Exception as e:
            log.exception("teardown: could not %s", what)
            if not crashing:
                print(f"harness: warning: could not {what}: {e}", file=sys.stderr)


def _write_report(run_dir: Path, console: Console) -> None:
    from harness.report import write_report

    console.print(f"report: {write_report(run_dir)}")


def _finish_teardown() -> None:
    log.info("teardown complete: faults healed, workers stopped, cluster stopped")


__all__ = ["RESOURCE_FILE", "RunInterrupted", "RunOutcome", "run_test"]
