"""``harness run``: its options, and the run they ask for."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from harness.commands.args import (
    Parser,
    UsageError,
    add_ssh_login_options,
    checked,
    describe,
    faults,
    number,
    number_option,
    on_off,
    path,
    run_default,
    writable_dir,
)
from harness.option_help import brief_help, topic_group, topics

if TYPE_CHECKING:
    from core.options import RunOptions
    from harness.orchestrate import RunOutcome
    from harness.terminal import Terminal
    from harness.validate import Checked


def add_run_options(p: argparse.ArgumentParser) -> None:
    """The options of a run, each argparse default None (not given: ``RunOptions`` has the
    default, which adapts to what was given) and its help showing the default; grouped by
    topic (``harness docs options TOPIC``), the common ones in ``--help``."""
    from clusters.releases import DEFAULT_SUITE, SUITES
    from clusters.target_registry import DEFAULT_TARGET, TARGETS
    from core.option_checks import check_name
    from core.option_records import CLIENT_MODES
    from core.options import DEFAULT_OP_TIMEOUT
    from harness import validate
    from nemesis.fault_registry import help_lines, nemesis_names
    from nemesis.targets import aims, targets_help
    from workloads.workload_registry import DEFAULT_WORKLOAD, WORKLOADS, workloads_help

    g = topic_group(p, "run", "what to run")
    describe(
        g.add_argument(
            "--target",
            default=None,  # the default target (None: --replay keeps the recorded run's)
            choices=tuple(TARGETS),
            metavar="NAME",
            help=f"the coordination service to test (default: {DEFAULT_TARGET}, built in, "
            "no Docker)",
        ),
        details=validate.targets_described,
        common=True,
    )
    describe(
        g.add_argument(
            "--workload",
            default=None,
            choices=tuple(WORKLOADS),
            metavar="NAME",
            help="what the clients do (default: %(default)s)",
        ),
        shown=DEFAULT_WORKLOAD,
        details=workloads_help,
        common=True,
    )
    number_option(g, "--concurrency", "clients, 1-1000 (default: %(default)s)", True)
    _chosen(
        g,
        "--clients",
        CLIENT_MODES,
        "process: each client in a process of its own, which a client fault can freeze, "
        "kill or give its own clock; thread: in threads of the harness, far cheaper per "
        "operation, with no client fault; auto: threads on the sim when no fault is aimed "
        "at a client, processes on the other targets until threads are measured there "
        "under faults (default: %(default)s)",
    )
    number_option(g, "--rate", "operations per second, all clients (default: as fast as they go)")
    number_option(
        g,
        "--min-rate",
        "the load floor: a run whose clients completed fewer operations per second is "
        "unknown, not valid (default: none)",
    )
    number_option(
        g,
        "--time-limit",
        "seconds of operations before the final heal (default: %(default)s, or longer "
        "for the pause or interval given)",
        True,
    )
    number_option(
        g,
        "--recovery-time",
        "seconds of operations on the healed cluster at the end (default: %(default)s)",
    )
    number_option(
        g,
        "--op-timeout",
        "seconds before an open operation is recorded as info (default: "
        f"{DEFAULT_OP_TIMEOUT:g}, or longer when the client pause plus the "
        "work time or the acquire wait need it; test.json says why). A value "
        "shorter than they need is refused",
    )
    number_option(
        g,
        "--seed",
        "seed of the schedule, 0 or more (default: a random one, recorded in test.json)",
        True,
    )
    describe(
        g.add_argument(
            "--out-dir",
            "-o",
            type=path("--out-dir"),
            default=None,
            metavar="DIR",
            help="results folder (writable) (default: %(default)s)",
        ),
        shown=run_default("out_dir"),
        common=True,
    )
    g.add_argument(
        "--name",
        type=checked(check_name),
        default=None,
        help="test name, one folder name (default: from the options)",
    )
    describe(
        g.add_argument(
            "--replay",
            metavar="RUN_DIR",
            type=path("--replay"),
            default=None,
            help="issue the invocations and faults of this recorded run at their recorded "
            "times, with its options and seed, on its target or on --target (default: none, "
            "a new schedule from --seed)",
        ),
        common=True,
    )
    g.add_argument(
        "--accept-unavailable",
        action="store_true",
        default=None,
        help="a fault window without any successful op is accepted (valid, said "
        "out loud) instead of making the run unknown",
    )
    g.add_argument(
        "--stop-on-anomaly",
        action="store_true",
        default=None,
        help="end the run at the first anomaly the check during the run finds (the "
        "workloads checked for linearizability): healed, checked, exit 1",
    )
    f = topic_group(p, "faults", "faults")
    describe(
        f.add_argument(
            "--nemesis",
            type=faults,
            metavar="FAULTS",
            default=None,
            help="comma-separated faults, or none (default: the workload's own)",
        ),
        details=lambda: (
            help_lines()
            + "\nthe workloads' own: "
            + ", ".join(f"{w.default_fault} for {w.name}" for w in WORKLOADS.values())
        ),
        offers=nemesis_names,
        comma=True,
        common=True,
    )
    number_option(
        f,
        "--nemesis-interval",
        "seconds between fault starts and stops; the first fault starts after "
        "one interval or a fifth of the time limit, whichever is sooner, and "
        "each fault must start and stop inside the time limit (default: %(default)s, "
        "or its share of a shorter time limit)",
    )
    describe(
        f.add_argument(
            "--nemesis-target",
            default=None,
            metavar="AIM",
            help="what each fault aims at: one value for all, or one per fault: "
            "client-pause=holder;partition=leader (holder: the lock holder's or leader's "
            "server; for client-pause, that client) (default: each fault's own)",
        ),
        details=targets_help,
        offers=aims,
        common=True,
    )
    number_option(
        f,
        "--pause-at",
        "client-pause: seconds into the run (default: %(default)s, or what fits the "
        "time limit; 0: taking turns with the other faults)",
        True,
    )
    number_option(
        f,
        "--pause-for",
        "client-pause: seconds the holder stays frozen (default: %(default)s, or 1.4 "
        "times a longer --lease-ttl)",
        True,
    )
    number_option(
        f,
        "--clock-delta",
        "clock: seconds (signed) each clock fault moves a clock by "
        "(default: a random jump each time)",
    )
    number_option(
        f,
        "--client-clock-delta",
        "client-clock: seconds the clients' wall clock steps (negative: back)",
    )
    _workload_options(p)
    t = topic_group(p, "targets", "targets")
    describe(
        t.add_argument(
            "--nodes",
            default=None,
            metavar="N|HOSTS",
            help="cluster size, 1-99 (default: the target's); with --ssh, the hosts: "
            "host1,user@host2:2222,...",
        ),
        common=True,
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
        metavar="MODE",
        choices=tuple(dict.fromkeys(p for t in TARGETS.values() for p in t.persistence)),
        help="how the target keeps its data (default: its first); "
        + "; ".join(
            f"{name}: {', '.join(t.persistence)}" for name, t in TARGETS.items() if t.persistence
        ),
    )
    describe(
        t.add_argument(
            "--server-version",
            default=None,
            metavar="RELEASE",
            help="the Debian release the server comes from, its image built on first use "
            f"(default: {DEFAULT_SUITE}); " + _releases_offered(),
        ),
        offers=lambda: SUITES,
        common=True,
    )
    describe(
        t.add_argument(
            "--sim-bug",
            action="append",
            metavar="BUG",
            default=None,
            dest="sim_bugs",
            help="sim: inject a known bug into the service; repeatable (default: none)",
        ),
        details=validate.bugs_help,
        offers=validate.sim_bugs,
        common=True,
    )
    sh = topic_group(p, "ssh", "real hosts over SSH (`harness docs ssh`)")
    describe(
        sh.add_argument(
            "--ssh",
            action="store_true",
            default=None,
            help="install and run the target on the hosts named by --nodes/--nodes-file",
        ),
        common=True,
    )
    add_ssh_login_options(sh, given_only=True)
    _chosen(
        sh,
        "--ssh-install",
        ("auto", "apt", "upload", "present"),
        "how the target's packages get onto the hosts (default: %(default)s)",
    )
    sh.add_argument(
        "--ssh-keep-packages",
        action="store_true",
        default=None,
        help="leave the installed packages on the hosts at the end",
    )
    sh.add_argument(
        "--ssh-debs",
        type=path("--ssh-debs"),
        default=None,
        help="upload the .debs of this directory instead of downloading them (default: "
        "download them)",
    )


def _workload_options(p: argparse.ArgumentParser) -> None:
    """Each workload's own options, built from the fields of its records
    (``Workload.records``, ``core.option_records.option``: help, choices, range, whether
    common) under a topic named for it, or for the record (its ``TOPIC``: the locks and
    leases several workloads share); a record two workloads share is shown with the
    first."""
    from workloads.workload_registry import WORKLOADS

    shown: set[type] = set()
    for w in WORKLOADS.values():
        for record in (r for r in w.records if r not in shown):
            shown.add(record)
            topic = getattr(record, "TOPIC", (w.name, f"the {w.name} workload"))
            _record_options(topic_group(p, *topic), record)


def _record_options(group: argparse._ArgumentGroup, record: type) -> None:
    """The flags of an options record's fields, each from its metadata: a number in its
    range, one of its choices, on or off for a boolean, one of a target's variants."""
    from dataclasses import fields

    for f in fields(record):
        name, meta = f.metadata.get("flat", f.name), f.metadata
        flag, common = "--" + name.replace("_", "-"), meta["common"]
        if "bound" in meta:
            number_option(group, flag, meta["help"], common)
        elif meta["choices"]:
            _chosen(group, flag, meta["choices"], meta["help"], field=name)
        elif meta["variant"]:
            _per_target(group, flag, meta["help"], common)
        elif isinstance(f.default, bool):
            action = group.add_argument(
                flag, type=on_off, metavar="on|off", default=None, help=meta["help"]
            )
            describe(action, shown=run_default(name), offers=lambda: ("on", "off"), common=common)
        else:
            action = group.add_argument(
                flag, default=None, metavar=meta.get("metavar"), help=meta["help"]
            )
            describe(action, common=common)


def _per_target(group: argparse._ArgumentGroup, flag: str, help: str, common: bool = False) -> None:
    """An option picking one of a target's variants of a workload (its flag ``flag``, its
    flat name the flag's: ``--lock``...): its help ``help``, the reference each target's
    (``harness.validate.per_target``), completion every target's; listed in the short
    ``--help`` when ``common``."""
    from harness import validate

    option = flag.removeprefix("--").replace("-", "_")
    action = group.add_argument(
        flag, default=None, metavar="NAME", help=f"{help} (default: the target's first)"
    )
    describe(
        action,
        details=lambda: validate.per_target(option),
        offers=lambda: validate.every(option),
        common=common,
    )


def _chosen(
    group: argparse._ArgumentGroup,
    flag: str,
    choices: Sequence[str],
    help: str,
    field: str | None = None,
) -> None:
    """An option taking one of ``choices``, the run option ``field`` (from the flag by
    default): None when not given, its help showing the option's own default."""
    field = field or flag.removeprefix("--").replace("-", "_")
    action = group.add_argument(flag, default=None, choices=tuple(choices), help=help)
    describe(action, shown=run_default(field))


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


def given_options(args: argparse.Namespace) -> dict[str, object]:
    """The run options the command line gave, by name (argparse's None: not given)."""
    from core.options import FIELDS

    return {k: v for k, v in vars(args).items() if k in FIELDS and v is not None}


def options_from(args: argparse.Namespace) -> RunOptions:
    """The options of the run the command line asks for (``checked_from``)."""
    return checked_from(args).options


def checked_from(args: argparse.Namespace) -> Checked:
    """The run the command line asks for: its arguments taken as a suite's table (argparse
    dests are the options' names; only those given, so the defaults adapt to them),
    through the same checks as a suite's runs, checked and decided once; a warning on
    stderr for what changes less than it may seem. The command line's own spelling of
    ``--nodes`` (a size, or hosts with --ssh) is translated first."""
    from core.options import RunOptions
    from harness.validate import check_run, warnings_of

    nodes, hosts = _nodes_and_hosts(args)
    given = given_options(args)
    given.pop("nodes", None)
    if nodes is not None:
        given["nodes"] = nodes
    if hosts:
        given["ssh_hosts"] = hosts
    checked = check_run(RunOptions.from_mapping(given))
    for warning in warnings_of(checked.target, checked.options):
        print(f"harness: warning: {warning}", file=sys.stderr)
    return checked


def cmd_run(args: argparse.Namespace, term: Terminal) -> int:
    from harness.orchestrate import run_test
    from harness.repeat import repeat_command

    _repeat_flags_need_repeat(args)
    if args.replay is not None:
        return _replay(args, term)
    checked = checked_from(args)
    writable_dir(checked.options.out_dir)
    if args.repeat is not None:
        return repeat_command(checked, term, args.repeat, args.pass_rule, args.repeat_seed)
    return answered(run_test(checked, term), term)


def _repeat_flags_need_repeat(args: argparse.Namespace) -> None:
    """``--pass-rule`` and ``--repeat-seed`` shape a repeat: without one they do nothing."""
    for flag, value in (("--pass-rule", args.pass_rule), ("--repeat-seed", args.repeat_seed)):
        if value is not None and args.repeat is None:
            raise UsageError(
                f"{flag} shapes the runs of --repeat N: give --repeat, or leave it out"
            )


def add_repeat_options(g: argparse._ArgumentGroup) -> None:
    """``--repeat N`` and what shapes it (``harness.repeat``): not run options, but how
    many runs of them, with which seeds, and the rule that decides the exit code."""
    from harness.repeat import PASS_RULES, REPEATS, SEED_MODES

    describe(
        g.add_argument(
            "--repeat",
            type=number(REPEATS),
            default=None,
            metavar="N",
            help="run the scenario N times, seeds --seed, --seed+1, ... (each run in its own "
            "directory beside repeat.json), and report k/N invalid, the seeds and the first "
            "failing run; with --replay, how often the recording's anomaly comes back "
            "(default: once)",
        ),
        common=True,
    )
    describe(
        g.add_argument(
            "--pass-rule",
            default=None,
            choices=tuple(PASS_RULES),
            help="with --repeat, the exit code: the scenario passes when all, most (more than "
            "half) or any of the runs were valid (default: all)",
        ),
        offers=lambda: tuple(PASS_RULES),
    )
    g.add_argument(
        "--repeat-seed",
        default=None,
        choices=SEED_MODES,
        help="with --repeat, next: seed, seed+1, ...; same: the one seed every time "
        "(default: next, and same with --replay)",
    )


def answered(outcome: RunOutcome, term: Terminal) -> int:
    """The run's exit code, its summary printed first as JSON when ``--json`` asked."""
    from core.store import RESULTS_FILE, read_json
    from harness.analysis import summary

    if term.as_json:
        term.answer(summary(read_json(outcome.run_dir / RESULTS_FILE), outcome.run_dir))
    return outcome.exit_code


REPLAY_TAKES: Final = ("target", "out_dir")
"""The run options ``--replay`` takes; the others are the recorded run's."""


def _replay(args: argparse.Namespace, term: Terminal) -> int:
    """``--replay RUN_DIR [--target T]``: the recorded run's options and schedule; any
    other option would do nothing, so it is refused."""
    from pathlib import Path

    from harness.orchestrate import run_test
    from harness.replay import load_recording, replay_options
    from harness.validate import check_run

    ignored = [k for k in given_options(args) if k not in REPLAY_TAKES]
    if ignored:
        from core.options import flag_of

        raise UsageError(
            f"{flag_of(ignored[0])} does nothing with --replay, which issues the recorded "
            "run with its own options: leave it out, or run without --replay"
        )
    recorded = load_recording(Path(args.replay))
    out_dir = args.out_dir or run_default("out_dir")
    checked = check_run(replay_options(recorded, args.target, out_dir))
    opts = checked.options
    recording = recorded.on(opts.target)
    writable_dir(opts.out_dir)
    if args.repeat is not None:  # refused before anything is said when nothing is to reproduce
        from harness.repeat import recorded_kinds

        recorded_kinds(recording.run_dir)
    term.err.print(
        f"replaying {recording.run_dir}: {len(recording.clients)} client invocations, "
        f"{len(recording.faults)} fault ops, on {opts.target}"
    )
    if args.repeat is not None:
        from harness.repeat import repeat_command

        return repeat_command(
            checked, term, args.repeat, args.pass_rule, args.repeat_seed, recording
        )
    return answered(run_test(checked, term, recording), term)


EXAMPLES: Final = """examples:
  harness run
      the classic scenario on the built-in sim: the lock holder paused longer
      than its lease; fencing keeps it valid
  harness run --fencing off
      the same without fencing: invalid, the paused holder's late write lands
  harness run --target etcd --workload cas-register --nemesis partition
      etcd's registers under network partitions (Docker), checked for
      linearizability
real hosts instead of Docker: `harness docs ssh`"""


def add(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the command's parser to ``sub`` (``harness.cli.build_parser``)."""
    r = sub.add_parser(
        "run",
        help="run a test and check it",
        usage="%(prog)s [options]",
        description="Run a workload against a target under faults, record the "
        "history, check it. Defaults: the sim's lock, a client pause longer than "
        "the lease, fencing on; those you do not give fit those you do (test.json).",
        epilog=EXAMPLES,
    )
    if isinstance(r, Parser):
        r.help_writer = brief_help
    add_run_options(r)
    add_repeat_options(topics(r)["run"])
    describe(
        topics(r)["run"].add_argument(
            "--json",
            action="store_true",
            help="print the results' summary as one JSON object on stdout (the words on stderr)",
        ),
        common=True,
    )
    r.set_defaults(fn=cmd_run)


def _releases_offered() -> str:
    """Each target's releases with the server's upstream version (the Debian revision is in
    test.json), targets offering the same ones named together: ``redis, redlock: ...``."""
    from clusters.target_registry import server_versions

    by: dict[tuple[str, ...], list[str]] = {}
    for name, versions in server_versions().items():
        short = tuple(v.split("-")[0].split(":")[-1] for v in versions)
        by.setdefault(short, []).append(name)
    return "; ".join(f"{', '.join(names)}: {', '.join(v)}" for v, names in by.items())
