"""``harness run``: its options, and the run they ask for."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from harness.commands.args import (
    Deferred,
    UsageError,
    add_ssh_login_options,
    checked,
    faults,
    number_option,
    on_off,
    writable_dir,
)

if TYPE_CHECKING:
    from core.options import RunOptions
    from harness.orchestrate import RunOutcome
    from harness.terminal import Terminal


def add_run_options(p: argparse.ArgumentParser) -> None:
    from clusters.registry import DEFAULT_TARGET, TARGETS
    from core.option_checks import check_name
    from core.options import DEFAULT_OP_TIMEOUT, RunOptions
    from harness.validate import targets_described
    from nemesis.registry import help_lines
    from nemesis.targets import targets_help
    from workloads.herd import RECIPES
    from workloads.registry import DEFAULT_WORKLOAD, WORKLOADS, workloads_help
    from workloads.snowflake import SNOWFLAKE_DEFENCES, SNOWFLAKE_WORKERS

    d = RunOptions()
    g = p.add_argument_group("what to run")
    g.add_argument(
        "--target",
        default=None,  # the default target (None: --replay keeps the recorded run's)
        choices=tuple(TARGETS),
        help=Deferred(lambda: f"{targets_described()} (default: {DEFAULT_TARGET})"),
    )
    g.add_argument(
        "--workload",
        default=DEFAULT_WORKLOAD,
        choices=tuple(WORKLOADS),
        help=f"{workloads_help()} (default: %(default)s)",
    )
    g.add_argument(
        "--lock",
        default=None,
        help=Deferred(lambda: _lazy_help("lock implementation of the target")),
    )
    number_option(g, "--concurrency", "client processes, 1-1000 (default: %(default)s)")
    number_option(
        g,
        "--rate",
        "operations per second, all clients (default: as fast as they go)",
        default=None,
    )
    number_option(
        g, "--time-limit", "seconds of operations before the final heal (default: %(default)s)"
    )
    number_option(g, "--recovery-time", "seconds of operations on the healed cluster at the end")
    number_option(
        g,
        "--op-timeout",
        "seconds before an open operation is recorded as info (default: "
        f"{DEFAULT_OP_TIMEOUT:g}, or longer when the client pause plus the "
        "work time or the acquire wait need it; test.json says why). A value "
        "shorter than they need is refused",
        default=None,
    )
    number_option(
        g,
        "--seed",
        "seed of the schedule, 0 or more (default: a random one, recorded in "
        "test.json and the report's command line)",
        default=None,
    )
    g.add_argument("--out-dir", "-o", default=d.out_dir, help="results folder (writable)")
    g.add_argument(
        "--name",
        type=checked(check_name),
        default=None,
        help="test name, one folder name (default: from the options)",
    )
    g.add_argument(
        "--replay",
        metavar="RUN_DIR",
        default=None,
        help="issue the invocations and faults of this recorded run at their recorded times, "
        "with its options and seed, on its target or on --target; other options are the "
        "recorded run's (default: none, a new schedule from --seed)",
    )
    g.add_argument(
        "--accept-unavailable",
        action="store_true",
        help="a fault window without any successful op is accepted (valid, said "
        "out loud) instead of making the run unknown",
    )
    f = p.add_argument_group("faults")
    f.add_argument(
        "--nemesis",
        type=faults,
        default=None,
        help=f"comma-separated faults, or none: {help_lines()} (default: the workload's, "
        + ", ".join(f"{w.default_fault} for {w.name}" for w in WORKLOADS.values())
        + ")",
    )
    number_option(
        f,
        "--nemesis-interval",
        "seconds between fault starts and stops; the first fault starts after "
        "one interval or a fifth of the time limit, whichever is sooner, and "
        "each fault must start and stop inside the time limit",
    )
    f.add_argument(
        "--nemesis-target",
        default=None,
        help=f"what each fault aims at: {targets_help()}. holder: the server the "
        "current lock holder (or leader) talks to (for client-pause: that "
        "client). One value for every fault, or one per fault: "
        "client-pause=holder;partition=leader",
    )
    number_option(
        f,
        "--pause-at",
        "client-pause: seconds into the run (default: %(default)s; "
        "set --pause-at 0 for the periodic schedule)",
    )
    number_option(
        f, "--pause-for", "client-pause: seconds the holder stays frozen (default: %(default)s)"
    )
    number_option(
        f,
        "--clock-delta",
        "clock: seconds (signed) each clock fault moves a clock by "
        "(default: a random jump each time)",
    )
    lk = p.add_argument_group("locks and leases")
    number_option(lk, "--lease-ttl", "seconds")
    number_option(lk, "--keepalive", "seconds between keepalives")
    number_option(lk, "--work-time", "seconds of work in each critical section")
    number_option(lk, "--acquire-wait", "seconds an acquire waits before it fails")
    number_option(
        p.add_argument_group("service registration"),
        "--instances",
        "registry: the client processes that register themselves (the others list "
        "them; default: %(default)s)",
    )
    lk.add_argument(
        "--fencing",
        type=on_off,
        default=d.lock.fencing,
        help="on: the protected resource rejects lower tokens; off: accepts all",
    )
    number_option(lk, "--locks", "number of locks, 1-1000")
    cas = p.add_argument_group("CAS register")
    number_option(cas, "--keys", "independent keys")
    cas.add_argument(
        "--read-mode", default=None, help=Deferred(lambda: _lazy_help("how the register reads"))
    )
    ids = p.add_argument_group("unique ids")
    ids.add_argument(
        "--id-generator",
        default=None,
        help=Deferred(
            lambda: (
                "how the unique-ids workload makes ids (default: the target's first); "
                + "; ".join(
                    f"{n}: {', '.join(t.id_generators)}"
                    for n, t in TARGETS.items()
                    if t.id_generators
                )
            )
        ),
    )
    ids.add_argument(
        "--snowflake-defence",
        default=d.ids.snowflake_defence,
        choices=SNOWFLAKE_DEFENCES,
        help="snowflake: when the clock is behind the last id's time, none (issue anyway), "
        "refuse (fail the op) or wait (until it caught up) (default: %(default)s)",
    )
    ids.add_argument(
        "--snowflake-workers",
        default=d.ids.snowflake_workers,
        choices=SNOWFLAKE_WORKERS,
        help="snowflake: worker ids fixed (the client's thread) or taken from the "
        "service's own counter (default: %(default)s)",
    )
    number_option(
        ids,
        "--client-clock-delta",
        "client-clock: seconds the clients' wall clock steps (negative: back)",
    )
    number_option(ids, "--segment-size", "segment: ids a client takes at a time")
    number_option(
        ids, "--segment-prefetch", "segment: fraction of a range used when the next is taken"
    )
    hd = p.add_argument_group("lock waiters")
    hd.add_argument(
        "--recipe",
        default=d.herd.recipe,
        choices=RECIPES,
        help="herd: naive (every waiter watches the lock) or queue (each waits on its "
        "predecessor only) (default: %(default)s)",
    )
    w = p.add_argument_group("watches")
    number_option(w, "--watchers", "client processes that watch the keys (the others write)")
    w.add_argument(
        "--watch-mode",
        choices=("reread", "payload"),
        default=d.watches.mode,
        help="one-shot watches (ZooKeeper): reread the node after each event, or take the "
        "value the event came with (default: %(default)s)",
    )
    number_option(
        w, "--compact-every", "seconds between compactions of the service's history (0: none)"
    )
    t = p.add_argument_group("targets")
    t.add_argument(
        "--nodes",
        default=None,
        help="cluster size, 1-99 (default: the target's); with --ssh, the hosts: "
        "host1,user@host2:2222,...",
    )
    t.add_argument(
        "--image",
        default=None,
        help="use this Docker image for the nodes (default: the target's, built "
        "by `harness images build`)",
    )
    t.add_argument(
        "--persistence",
        default=None,
        choices=tuple(dict.fromkeys(p for t in TARGETS.values() for p in t.persistence)),
        help=" and ".join(name for name, t in TARGETS.items() if t.persistence)
        + " only (default: none, no persistence)",
    )
    t.add_argument(
        "--sim-bug",
        action="append",
        default=[],
        dest="sim_bugs",
        help=Deferred(
            lambda: "sim: inject a known bug, one of " + ", ".join(_sim_bugs()) + "; repeatable"
        ),
    )
    sh = p.add_argument_group("real hosts over SSH (`harness docs ssh`)")
    sh.add_argument(
        "--ssh",
        action="store_true",
        help="install and run the target on the hosts named by --nodes/--nodes-file",
    )
    add_ssh_login_options(sh)
    sh.add_argument(
        "--ssh-install",
        default="auto",
        choices=("auto", "apt", "upload", "present"),
        help="how the target's packages get onto the hosts (default: %(default)s)",
    )
    sh.add_argument(
        "--ssh-keep-packages",
        action="store_true",
        help="leave the installed packages on the hosts at the end",
    )
    sh.add_argument(
        "--ssh-debs",
        default=None,
        help="upload the .debs of this directory instead of downloading them (default: "
        "download them)",
    )


def _lazy_help(what: str) -> str:
    from harness.validate import targets_help

    return f"{what}; per target: {targets_help()}"


def _sim_bugs() -> tuple[str, ...]:
    from harness.validate import sim_bugs

    return sim_bugs()


def _nodes_and_hosts(args: argparse.Namespace) -> tuple[int | None, list[str]]:
    """``--nodes``: a size, or (with --ssh, and/or --nodes-file) the hosts."""
    from clusters.remote.hosts import hosts_from
    from core.cluster import ClusterError

    if not args.ssh and args.nodes_file is None:
        if args.nodes is None:
            return None, []
        if args.nodes.strip().lstrip("+-").isdigit():
            from core.option_checks import OptionError, check_number

            try:
                check_number("nodes", int(args.nodes))
            except OptionError as e:
                raise UsageError(str(e)) from None
            return int(args.nodes), []
    try:  # host names (validate() refuses them without --ssh)
        return None, [str(h) for h in hosts_from(args.nodes, args.nodes_file)]
    except ClusterError as e:
        raise UsageError(str(e)) from None


def options_from(args: argparse.Namespace) -> RunOptions:
    """The run the command line asks for: its arguments taken as a suite's table (argparse
    dests are the options' names), through the same checks as a suite's runs. The command
    line's own spelling of ``--nodes`` (a size, or hosts with --ssh) is translated first."""
    from core.options import FIELDS, RunOptions
    from harness.validate import check_run

    nodes, hosts = _nodes_and_hosts(args)
    given = {k: v for k, v in vars(args).items() if k in FIELDS and v is not None}
    given.update(nodes=nodes, ssh_hosts=hosts)
    return check_run(RunOptions.from_mapping(given))[0]


def cmd_run(args: argparse.Namespace, term: Terminal) -> int:
    from harness.orchestrate import run_test

    if args.replay is not None:
        return _replay(args, term)
    opts = options_from(args)
    writable_dir(opts.out_dir)
    return answered(run_test(opts, term), term)


def answered(outcome: RunOutcome, term: Terminal) -> int:
    """The run's exit code, its summary printed first as JSON when ``--json`` asked."""
    from core.store import RESULTS_FILE, read_json
    from harness.analysis import summary

    if term.as_json:
        term.answer(summary(read_json(outcome.run_dir / RESULTS_FILE), outcome.run_dir))
    return outcome.exit_code


def _replay(args: argparse.Namespace, term: Terminal) -> int:
    """``--replay RUN_DIR [--target T]``: the recorded run's options and schedule."""
    from pathlib import Path

    from harness.orchestrate import run_test
    from harness.replay import load_recording, replay_options
    from harness.validate import check_run

    recorded = load_recording(Path(args.replay))
    opts = check_run(replay_options(recorded, args.target, args.out_dir))[0]
    recording = recorded.on(opts.target)
    writable_dir(opts.out_dir)
    term.err.print(
        f"replaying {recording.run_dir}: {len(recording.clients)} client invocations, "
        f"{len(recording.faults)} fault ops, on {opts.target}"
    )
    return answered(run_test(opts, term, recording), term)


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    r = sub.add_parser(
        "run",
        help="run a test and check it",
        description="Run a workload against a target under faults, record the "
        "history, check it. Defaults: the sim target's lock under a "
        "client pause longer than the lease, fencing on.",
    )
    add_run_options(r)
    r.add_argument(
        "--json",
        action="store_true",
        help="print the results' summary as one JSON object on stdout (the words on stderr)",
    )
    r.set_defaults(fn=cmd_run)
