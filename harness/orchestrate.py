"""One whole run: store, cluster, resource, nemesis, runner, teardown, check.

Setup and teardown are paired by scope (one ``ExitStack``): whatever was set up is torn
down on every exit path, in reverse order: faults healed, workers stopped (thawed first),
node logs collected, the cluster and the protected resource stopped. The history is on
disk as it happens; the checks run from the run directory, exactly as ``harness check
RUN_DIR`` would, so an interrupted run is still checked.
"""

from __future__ import annotations

import logging
import platform
import random
import signal
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from rich.console import Console

from clusters import run_target
from clusters.registry import resolve
from core.clock import RunClock
from core.options import RunOptions
from core.store import (
    EVENTS_FILE,
    HISTORY_FILE,
    LOG_FILE,
    RESOURCE_FILE,
    TEST_FILE,
    HistoryWriter,
    new_run_dir,
    write_json,
)
from harness import analysis
from harness.logs import log_to
from harness.plan import build_plan
from harness.progress import Progress
from harness.rerun import rerun_command
from harness.runner import Runner
from harness.validate import check_target, decide
from nemesis.build import build_nemesis
from nemesis.registry import facts_of
from workloads.registry import get_workload
from workloads.resource import ResourceServer

if TYPE_CHECKING:
    from harness.replay import Recording

log = logging.getLogger("harness")

HARNESS_VERSION = "0.1.0"


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
    second Ctrl-C must not leave a fault in place)."""

    def handler(signum: int, frame: FrameType | None) -> None:
        for s in STOP_SIGNALS:
            signal.signal(s, signal.SIG_IGN)
        raise RunInterrupted(signal.Signals(signum).name, clock.seconds())

    old = {s: signal.signal(s, handler) for s in STOP_SIGNALS}
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


def run_test(opts: RunOptions, console: Console, recording: Recording | None = None) -> RunOutcome:
    """Run a test end to end and print its verdict; never leaves a fault behind. With a
    ``recording`` (``harness run --replay``), its invocations and faults are the schedule."""
    opts = decide(opts)  # done already by check_run, unless the caller built ``opts`` itself
    seed = opts.seed if opts.seed is not None else random.randrange(2**31)
    target = resolve(opts.target)  # fails fast on an unknown target
    opts = replace(opts, seed=seed, target=target.name)
    check_target(target, opts)  # --ssh: the cluster on the hosts (docs/ssh.md)
    run_dir = new_run_dir(Path(opts.out_dir), opts.test_name())
    handler = _log_to(run_dir)
    _quiet_resource_tracker()
    clock = RunClock()
    test: dict[str, Any] = {
        "name": opts.test_name(),
        "options": opts.to_dict(),
        "faults": facts_of(opts.fault_names()),
        "seed": seed,
        "linearizable_locks": target.linearizable_locks,
        "service_log": target.service_log,
        "versions": {"harness": HARNESS_VERSION, "python": platform.python_version()},
        "clock_origin_ns": clock.origin,
        "argv": sys.argv,
        "status": "running",
    }
    replay_of = str(recording.run_dir.resolve()) if recording is not None else None
    test["command"] = rerun_command(opts, replay_of)
    if replay_of is not None:
        test["replay_of"] = replay_of
    write_json(run_dir / TEST_FILE, test)
    console.print(f"[bold]{opts.test_name()}[/] seed {seed} -> {run_dir}")
    interrupted: dict[str, Any] | None = None
    try:
        with _signals_as_interrupt(clock), ExitStack() as stack:
            stack.callback(_finish_teardown, console)
            cluster = run_target.make_cluster(target, opts, clock)
            stack.callback(_quietly, "stop the cluster", cluster.stop)
            stack.callback(_quietly, "collect node logs", cluster.collect_logs, run_dir / "nodes")
            console.print(f"starting {opts.target} ...")
            cluster.start(run_dir)
            test["versions"].update(target.versions(cluster))
            test["nodes"] = cluster.nodes()
            write_json(run_dir / TEST_FILE, test)

            resource = _start_resource(opts, run_dir, clock, stack)
            plan = build_plan(opts, target, cluster, seed, resource)
            writer = HistoryWriter(run_dir / HISTORY_FILE)
            stack.callback(writer.close)
            runner = Runner(
                generator=plan.client_gen,  # the schedule comes with begin(), below
                client_factory=plan.client,
                concurrency=opts.concurrency,
                clock=clock,
                record=writer.write,
                op_timeout=opts.op_timeout,
                events_path=run_dir / EVENTS_FILE,
            )
            stack.callback(_quietly, "stop the workers", runner.close)
            runner.start_workers()  # the workload starts once they are ready
            workload_start = clock.seconds()
            nemesis, nemesis_gen, final_gen = build_nemesis(opts, cluster, seed, workload_start)
            test["workload_start_ns"] = clock.now()
            if nemesis is not None:
                stack.callback(_quietly, "heal every fault", nemesis.teardown)
            schedule = (  # a replay: the recorded schedule instead of the seeded one
                recording.generator()
                if recording is not None
                else plan.generator(nemesis_gen, final_gen, workload_start)
            )
            runner.begin(schedule, nemesis)
            total = opts.time_limit + opts.recovery_time
            with Progress(console, runner.stats, clock.seconds, total, opts.test_name()):
                runner.run()
    except KeyboardInterrupt as e:
        stop = e if isinstance(e, RunInterrupted) else RunInterrupted("SIGINT", clock.seconds())
        interrupted = {"signal": stop.signame, "at_s": round(stop.at_s, 3)}
        console.print(
            f"[yellow]interrupted by {stop}: faults healed, checking what was recorded[/]"
        )
    finally:
        test["status"] = "interrupted" if interrupted else "finished"
        if interrupted:
            test["interrupted"] = interrupted
        write_json(run_dir / TEST_FILE, test)
    results = analysis.check_run(run_dir)
    analysis.print_results(results, console)
    _quietly("write the report", _write_report, run_dir, console)
    console.print(f"results in {run_dir}")
    logging.getLogger().removeHandler(handler)
    handler.close()
    return RunOutcome(run_dir, results["valid"], analysis.exit_code_of(results))


def _start_resource(
    opts: RunOptions, run_dir: Path, clock: RunClock, stack: ExitStack
) -> str | None:
    """Start the protected resource when the run's workload needs it (stopped by
    ``stack``); its address, else None."""
    if not get_workload(opts.workload).needs_resource:
        return None
    server = ResourceServer(run_dir / RESOURCE_FILE, clock, fencing=opts.lock.fencing)
    stack.enter_context(server)
    return server.address


def _quietly(what: str, fn: Any, *args: Any) -> None:
    """Teardown steps run with Ctrl-C held, and one failing step does not stop the rest."""
    with _no_interrupts():
        try:
            fn(*args)
        except Exception as e:
            log.exception("teardown: could not %s", what)
            print(f"harness: warning: could not {what}: {e}", file=sys.stderr)


def _write_report(run_dir: Path, console: Console) -> None:
    from harness.report import write_report

    console.print(f"report: {write_report(run_dir)}")


def _finish_teardown(console: Console) -> None:
    log.info("teardown complete")


__all__ = ["RESOURCE_FILE", "RunInterrupted", "RunOutcome", "run_test"]
