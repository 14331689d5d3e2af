"""The ``harness`` command line.

Exit codes follow Jepsen's: 0 valid, 1 invalid, 2 unknown (and interrupted: a run cut
short whose checks found no violation), 254 bad arguments or input, 255 a crash of the
harness itself. Bad input is one line saying what is wrong and what to
do, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from rich.console import Console

from core.errors import EXIT_BAD_INPUT, EXIT_CRASH
from core.formats.budget import parse_seconds, parse_size

if TYPE_CHECKING:
    from core.options import Bound, RunOptions

EXIT_BAD_ARGS = EXIT_BAD_INPUT
EXIT_UNKNOWN = 2  # Jepsen's unknown: also an interrupted run, and one stopped before a verdict
_OUT_OF_MEMORY = b"harness: out of memory; try --memory-limit or fewer files\n"


class UsageError(Exception):
    """Bad arguments or input: printed as one line, exit 254."""


class _Parser(argparse.ArgumentParser):
    commands: Mapping[str, argparse.ArgumentParser] | None = None
    """On the top parser: command -> its parser, to name it in errors."""

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # name the command whose options these are not (argparse names none)
            command = (self.commands or {}).get(getattr(ns, "command", None) or "", self)
            command.error(f"unrecognized arguments: {' '.join(extras)}")
        return ns

    def error(self, message: str) -> NoReturn:
        """One line: what is wrong and where the options are listed (not the usage)."""
        sys.stderr.write(f"harness: error: {message} (see `{self.prog} --help`)\n")
        raise SystemExit(EXIT_BAD_ARGS)


class _Deferred(str):
    """Help text computed only when help is printed (it imports the target registry)."""

    fn: Callable[[], str]

    def __new__(cls, fn: Callable[[], str]) -> _Deferred:
        text = super().__new__(cls, "(computed when shown)")
        text.fn = fn
        return text

    def __mod__(self, params: object) -> str:
        return self.fn().replace("%", "%%") % params


def _on_off(s: str) -> bool:
    v = s.strip().lower()
    if v in ("on", "true", "yes", "1"):
        return True
    if v in ("off", "false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected on or off, not {s!r}")


def _number(field: str | Bound) -> Callable[[str], float | int]:
    """The argparse type of a number option: parsed, then checked against its range in
    ``core.options.NUMBERS`` (one-line error naming the option and the range)."""
    from core.options import NUMBERS, OptionError

    bound = NUMBERS[field] if isinstance(field, str) else field

    def parse(text: str) -> float | int:
        try:
            value: float | int = int(text) if bound.integer else float(text)
        except ValueError:
            kind = "an integer" if bound.integer else "a number"
            raise argparse.ArgumentTypeError(f"expected {kind}, not {text!r}") from None
        try:
            bound.check(value)
        except OptionError as e:  # argparse names the option already
            raise argparse.ArgumentTypeError(str(e).removeprefix(f"{bound.flag} ")) from None
        return value

    parse.__name__ = bound.flag  # argparse names the type in some errors
    return parse


def _checked(check: Callable[[str], object]) -> Callable[[str], str]:
    """An argparse type from a check raising OptionError."""
    from core.options import OptionError

    def parse(text: str) -> str:
        try:
            check(text)
        except OptionError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text

    return parse


def _faults(text: str) -> list[str]:
    from core.options import OptionError
    from nemesis.registry import parse_nemesis

    try:
        return parse_nemesis(text)  # as a suite's value: no silently dropped empty name
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_run_options(p: argparse.ArgumentParser) -> None:
    from clusters.registry import DEFAULT_TARGET, TARGETS
    from core.options import DEFAULT_OP_TIMEOUT, WORKLOADS, RunOptions, check_name
    from harness.validate import targets_described
    from nemesis.registry import help_lines
    from nemesis.targets import targets_help

    d = RunOptions()
    g = p.add_argument_group("what to run")
    g.add_argument(
        "--target",
        default=DEFAULT_TARGET,
        choices=tuple(TARGETS),
        help=_Deferred(lambda: f"{targets_described()} (default: {DEFAULT_TARGET})"),
    )
    g.add_argument("--workload", default=d.workload, choices=WORKLOADS, help="default: %(default)s")
    g.add_argument(
        "--lock",
        default=None,
        help=_Deferred(lambda: _lazy_help("lock implementation of the target")),
    )
    g.add_argument(
        "--concurrency",
        type=_number("concurrency"),
        default=d.concurrency,
        help="client processes, 1-1000 (default: %(default)s)",
    )
    g.add_argument(
        "--rate", type=_number("rate"), default=None, help="operations per second, all clients"
    )
    g.add_argument(
        "--time-limit",
        type=_number("time_limit"),
        default=d.time_limit,
        help="seconds of operations before the final heal (default: %(default)s)",
    )
    g.add_argument(
        "--recovery-time",
        type=_number("recovery_time"),
        default=d.recovery_time,
        help="seconds of operations on the healed cluster at the end",
    )
    g.add_argument(
        "--op-timeout",
        type=_number("op_timeout"),
        default=None,
        help="seconds before an open operation is recorded as info (default: "
        f"{DEFAULT_OP_TIMEOUT:g}, or longer when the client pause plus the "
        "work time or the acquire wait need it; test.json says why). A value "
        "shorter than they need is refused",
    )
    g.add_argument(
        "--seed",
        type=_number("seed"),
        default=None,
        help="seed of the schedule, 0 or more (replayable)",
    )
    g.add_argument("--out-dir", "-o", default=d.out_dir, help="results folder (writable)")
    g.add_argument(
        "--name",
        type=_checked(check_name),
        default=None,
        help="test name, one folder name (default: from the options)",
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
        type=_faults,
        default=None,
        help=f"comma-separated faults, or none: {help_lines()} "
        "(default: client-pause for locks and elections, none otherwise)",
    )
    f.add_argument(
        "--nemesis-interval",
        type=_number("nemesis_interval"),
        default=d.nemesis_interval,
        help="seconds between fault starts and stops; the first fault starts after "
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
    f.add_argument(
        "--pause-at",
        type=_number("pause_at"),
        default=d.pause_at,
        help="client-pause: seconds into the run (default: %(default)s; "
        "set --pause-at 0 for the periodic schedule)",
    )
    f.add_argument(
        "--pause-for",
        type=_number("pause_for"),
        default=d.pause_for,
        help="client-pause: seconds the holder stays frozen (default: %(default)s)",
    )
    lk = p.add_argument_group("locks and leases")
    lk.add_argument("--lease-ttl", type=_number("lease_ttl"), default=d.lease_ttl, help="seconds")
    lk.add_argument(
        "--keepalive",
        type=_number("keepalive"),
        default=d.keepalive,
        help="seconds between keepalives",
    )
    lk.add_argument(
        "--work-time",
        type=_number("work_time"),
        default=d.work_time,
        help="seconds of work in each critical section",
    )
    lk.add_argument(
        "--acquire-wait",
        type=_number("acquire_wait"),
        default=d.acquire_wait,
        help="seconds an acquire waits before it fails",
    )
    lk.add_argument(
        "--fencing",
        type=_on_off,
        default=d.fencing,
        help="on: the protected resource rejects lower tokens; off: accepts all",
    )
    lk.add_argument(
        "--locks", type=_number("locks"), default=d.locks, help="number of locks, 1-1000"
    )
    cas = p.add_argument_group("CAS register")
    cas.add_argument("--keys", type=_number("keys"), default=d.keys, help="independent keys")
    cas.add_argument(
        "--read-mode", default=None, help=_Deferred(lambda: _lazy_help("how the register reads"))
    )
    t = p.add_argument_group("targets")
    t.add_argument(
        "--nodes",
        default=None,
        help="cluster size, 1-99; with --ssh, the hosts: host1,user@host2:2222,...",
    )
    t.add_argument("--image", default=None, help="use this Docker image for the nodes")
    t.add_argument(
        "--persistence",
        default=None,
        choices=tuple(dict.fromkeys(p for t in TARGETS.values() for p in t.persistence)),
        help=" and ".join(name for name, t in TARGETS.items() if t.persistence) + " only",
    )
    t.add_argument(
        "--sim-bug",
        action="append",
        default=[],
        dest="sim_bugs",
        help=_Deferred(
            lambda: "sim: inject a known bug, one of " + ", ".join(_sim_bugs()) + "; repeatable"
        ),
    )
    sh = p.add_argument_group("real hosts over SSH (docs/ssh.md)")
    sh.add_argument(
        "--ssh",
        action="store_true",
        help="install and run the target on the hosts named by --nodes/--nodes-file",
    )
    _add_ssh_login_options(sh)
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
        help="upload the .debs of this directory instead of downloading them",
    )


def _lazy_help(what: str) -> str:
    from harness.validate import targets_help

    return f"{what}; per target: {targets_help()}"


def _sim_bugs() -> tuple[str, ...]:
    from harness.validate import sim_bugs

    return sim_bugs()


def _add_ssh_login_options(g: argparse._ArgumentGroup) -> None:
    """Which hosts, and how to log in to them: shared by ``run`` and ``clusters``."""
    g.add_argument("--nodes-file", default=None, help="hosts, one [user@]host[:port] a line")
    g.add_argument("--ssh-user", default=None, help="login name (default: yours)")
    g.add_argument("--ssh-key", default=None, help="private key (default: agent, ~/.ssh/id_*)")
    g.add_argument(
        "--ssh-port", type=_number("ssh_port"), default=22, help="1-65535 (default: %(default)s)"
    )
    g.add_argument(
        "--ssh-no-strict", action="store_true", help="accept unknown host keys (lab machines only)"
    )
    g.add_argument(
        "--ssh-known-hosts",
        default=None,
        help="check host keys against this file (default: ~/.ssh/known_hosts)",
    )


def _nodes_and_hosts(args: argparse.Namespace) -> tuple[int | None, list[str]]:
    """``--nodes``: a size, or (with --ssh, and/or --nodes-file) the hosts."""
    from clusters.remote.hosts import hosts_from
    from core.cluster import ClusterError

    if not args.ssh and args.nodes_file is None:
        if args.nodes is None:
            return None, []
        if args.nodes.strip().lstrip("+-").isdigit():
            from core.options import OptionError, check_number

            try:
                check_number("nodes", int(args.nodes))
            except OptionError as e:
                raise UsageError(str(e)) from None
            return int(args.nodes), []
    try:  # host names (validate() refuses them without --ssh)
        return None, [str(h) for h in hosts_from(args.nodes, args.nodes_file)]
    except ClusterError as e:
        raise UsageError(str(e)) from None


def _options_from(args: argparse.Namespace) -> RunOptions:
    """The run the command line asks for, through the same validation as a suite's runs."""
    from core.options import FOLLOW, RunOptions
    from harness.validate import check_run

    nodes, hosts = _nodes_and_hosts(args)
    opts = RunOptions(
        target=args.target,
        workload=args.workload,
        lock=args.lock,
        nemesis=args.nemesis or [],
        nemesis_interval=args.nemesis_interval,
        nemesis_target=args.nemesis_target,
        concurrency=args.concurrency,
        rate=args.rate,
        time_limit=args.time_limit,
        recovery_time=args.recovery_time,
        op_timeout=args.op_timeout if args.op_timeout is not None else FOLLOW,
        seed=args.seed,
        out_dir=args.out_dir,
        name=args.name,
        lease_ttl=args.lease_ttl,
        keepalive=args.keepalive,
        work_time=args.work_time,
        acquire_wait=args.acquire_wait,
        fencing=args.fencing,
        locks=args.locks,
        pause_at=args.pause_at if args.pause_at else None,
        pause_for=args.pause_for,
        keys=args.keys,
        read_mode=args.read_mode,
        nodes=nodes,
        image=args.image,
        persistence=args.persistence,
        sim_bugs=args.sim_bugs,
        ssh=args.ssh,
        ssh_hosts=hosts,
        ssh_user=args.ssh_user,
        ssh_key=args.ssh_key,
        ssh_port=args.ssh_port,
        ssh_strict=not args.ssh_no_strict,
        ssh_known_hosts=args.ssh_known_hosts,
        ssh_install=args.ssh_install,
        ssh_keep_packages=args.ssh_keep_packages,
        ssh_debs=args.ssh_debs,
        extra={"accept_unavailable": True} if args.accept_unavailable else {},
    )
    check_run(opts)
    return opts


def writable_dir(path: str, flag: str = "--out-dir") -> Path:
    """``path`` as a folder this process can write into (created if missing), else a
    one-line UsageError: not a file, not /proc, not read-only."""
    import tempfile

    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as e:
        raise UsageError(
            f"{flag} {path}: cannot write there ({e.strerror or e}); name a folder you can write"
        ) from None
    return folder


def writable_file(path: str, flag: str) -> Path:
    """``path`` as a file this process can write (created empty if missing), else a
    one-line UsageError: not a folder, not in a missing or read-only folder."""
    file = Path(path)
    try:
        with file.open("a"):
            pass
    except OSError as e:
        raise UsageError(
            f"{flag} {path}: cannot write there ({e.strerror or e}); name a "
            "file in a folder you can write"
        ) from None
    return file


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    from harness.orchestrate import run_test

    opts = _options_from(args)
    writable_dir(opts.out_dir)
    return run_test(opts, console).exit_code


def cmd_check(args: argparse.Namespace, console: Console) -> int:
    from checkers.linear.models import MODELS
    from core.formats.budget import default_memory_limit
    from harness.checkcmd import check_paths

    if args.model is not None and args.model not in MODELS:
        raise UsageError(f"unknown model {args.model!r}: --model takes one of {', '.join(MODELS)}")
    memory = args.memory_limit if args.memory_limit is not None else default_memory_limit()
    return check_paths(
        args.paths,
        model=args.model,
        time_limit=args.time_limit,
        as_json=args.json,
        console=console,
        memory_limit=memory,
        out=args.out,
    )


def _parsed(parse: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a parser that raises ValueError with its reason."""

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = parse.__name__
    return convert


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    from harness.analysis import report_run
    from harness.report import write_report

    code = report_run(args.run_dir, console)
    console.print(f"report: {write_report(Path(args.run_dir))}")
    return code


def cmd_serve(args: argparse.Namespace, console: Console) -> int:
    from harness.report import serve, write_index

    root = Path(args.results)
    if not root.is_dir():
        raise UsageError(f"{root} is not a directory: pass the results folder (default results/)")
    console.print(f"index: {write_index(root)}")
    console.print(f"serving {root} on http://{args.host}:{args.port}/ (Ctrl-C stops)")
    serve(root, host=args.host, port=args.port)
    return 0


def cmd_compare(args: argparse.Namespace, console: Console) -> int:
    from harness.report import compare, render_matrix_table, write_matrix_html

    for flag, out in (("--html", args.html), ("--junit", args.junit)):
        if out is not None:
            writable_file(out, flag)
    matrix = compare([Path(p) for p in args.paths])
    console.print(render_matrix_table(matrix))
    if args.html:
        console.print(f"matrix: {write_matrix_html(matrix, Path(args.html))}")
    if args.junit:
        from harness.report import write_junit

        console.print(f"junit: {write_junit([Path(p) for p in args.paths], Path(args.junit))}")
    return 0


def cmd_images(args: argparse.Namespace, console: Console) -> int:
    from harness.maintenance import build_images

    return build_images(args.targets, console)


def cmd_clusters(args: argparse.Namespace, console: Console) -> int:
    from harness.maintenance import clean_ssh_hosts, clusters_down, clusters_heal

    if args.ssh or args.nodes is not None or args.nodes_file is not None:
        from clusters.remote.hosts import hosts_from
        from clusters.ssh.factory import SshClusterOptions, check_login_options
        from core.cluster import ClusterError

        if not args.ssh:
            raise UsageError(
                "--nodes and --nodes-file name SSH hosts: add --ssh (without it, "
                f"`harness clusters {args.action}` cleans Docker)"
            )
        options = SshClusterOptions(
            user=args.ssh_user,
            port=args.ssh_port,
            key=args.ssh_key,
            strict=not args.ssh_no_strict,
            known_hosts=args.ssh_known_hosts,
        )
        try:
            hosts = hosts_from(args.nodes, args.nodes_file)
            check_login_options(options)
        except ClusterError as e:
            raise UsageError(str(e)) from None
        return clean_ssh_hosts(args.action, hosts, options, console)
    if args.action == "down":
        return clusters_down(console)
    return clusters_heal(console)


def cmd_suite(args: argparse.Namespace, console: Console) -> int:
    from harness.suite import run_suite

    if not args.list:
        writable_dir(args.out_dir)
    return run_suite(
        Path(args.file), console, only=args.only, out=args.out_dir, list_only=args.list
    )


def build_parser() -> argparse.ArgumentParser:
    from core.options import Bound

    p = _Parser(
        prog="harness",
        description="Jepsen-style tests of coordination services: locks, CAS registers and "
        "leader election under faults, checked for linearizability and mutual "
        "exclusion.",
        epilog="Exit codes: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 crash.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    p.commands = sub.choices
    r = sub.add_parser(
        "run",
        help="run a test and check it",
        description="Run a workload against a target under faults, record the "
        "history, check it. Defaults: the sim target's lock under a "
        "client pause longer than the lease, fencing on.",
    )
    _add_run_options(r)
    r.set_defaults(fn=cmd_run)

    c = sub.add_parser(
        "check",
        help="check a run directory or history files",
        description="Check run directories (all their checkers) or history "
        "files (JSONL, Jepsen EDN, porcupine etcd log, porcupine kv) "
        "for linearizability.",
    )
    c.add_argument("paths", nargs="+", metavar="PATH")
    c.add_argument(
        "--model",
        default=None,
        help="register, cas-register, etcd, kv, mutex, multi-register "
        "(default: implied by the format)",
    )
    c.add_argument(
        "--time-limit",
        type=_parsed(parse_seconds),
        default=None,
        help="seconds per path, reading included (default: none); out of it, "
        "the verdict is unknown",
    )
    c.add_argument(
        "--memory-limit",
        type=_parsed(parse_size),
        default=None,
        help="memory per path, e.g. 2G (default: half the memory available at "
        "start); out of it, the verdict is unknown",
    )
    c.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="write run directories' results.json under DIR (default: into each "
        "run directory, where it can be written)",
    )
    c.add_argument("--json", action="store_true", help="one JSON object per file per line")
    c.set_defaults(fn=cmd_check)

    rp = sub.add_parser("report", help="(re)write a run's report")
    rp.add_argument("run_dir")
    rp.set_defaults(fn=cmd_report)

    sv = sub.add_parser("serve", help="browse the results: an index of every run")
    sv.add_argument("results", nargs="?", default="results", help="results folder")
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (loopback default)")
    sv.add_argument(
        "--port",
        type=_number(Bound("--port", 0, 65535, integer=True, unit="port numbers")),
        default=8080,
        help="0-65535, 0 picks a free one (default: %(default)s)",
    )
    sv.set_defaults(fn=cmd_serve)

    cp = sub.add_parser(
        "compare",
        help="a matrix of targets x faults over several runs",
        description="Compare runs (or folders of runs, e.g. a suite's): "
        "violations, stale writes, danger window, handover delay, "
        "latency quantiles and availability per target and fault.",
    )
    cp.add_argument("paths", nargs="+", metavar="PATH")
    cp.add_argument("--html", default=None, help="also write the matrix as an HTML file")
    cp.add_argument("--junit", default=None, help="also write JUnit XML of these runs")
    cp.set_defaults(fn=cmd_compare)

    st = sub.add_parser("suite", help="run a suite file: many runs, each with its expected outcome")
    st_sub = st.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    sr = st_sub.add_parser(
        "run",
        help="run a suite (TOML), keep going after failures",
        description="Run every run of a suite file in order; write an "
        "index, the comparison matrix and JUnit XML; exit 1 only "
        "when an outcome differs from its expectation.",
    )
    sr.add_argument("file", help="suite file, e.g. suites/smoke.toml")
    sr.add_argument("--list", action="store_true", help="list the runs, run nothing")
    sr.add_argument("--only", default=None, help="only runs whose name matches (glob or part)")
    sr.add_argument("--out-dir", "-o", default="results", help="results folder")
    sr.set_defaults(fn=cmd_suite)

    im = sub.add_parser("images", help="build the targets' Docker images")
    im_sub = im.add_subparsers(dest="action", metavar="ACTION", parser_class=_Parser, required=True)
    b = im_sub.add_parser("build", help="build (or reuse) images")
    b.add_argument("targets", nargs="*", help="default: every Docker target")
    b.set_defaults(fn=cmd_images)

    cl = sub.add_parser(
        "clusters",
        help="clean up what a crashed run left behind",
        description="Undo what runs that could not clean up after themselves "
        "(killed, say) left: in Docker, or with --ssh on the hosts "
        "named (and no others). Exit 1 when something could not "
        "be undone.",
    )
    cl.add_argument(
        "action",
        choices=("down", "heal"),
        help="down: remove the harness's containers and networks (--ssh: heal, "
        "then kill the harness's servers, purge the packages runs recorded "
        "as installed, remove /var/lib/harness/<run id>); heal: clear faults "
        "(rules, stopped processes, clock offsets) and leave servers running",
    )
    ssh = cl.add_argument_group("real hosts over SSH (docs/ssh.md)")
    ssh.add_argument(
        "--ssh",
        action="store_true",
        help="clean the hosts named by --nodes and --nodes-file instead of Docker",
    )
    ssh.add_argument("--nodes", default=None, help="the hosts: host1,user@host2:2222,...")
    _add_ssh_login_options(ssh)
    cl.set_defaults(fn=cmd_clusters)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    console = Console(stderr=False)
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "fn", None):
        parser.print_help()
        return EXIT_BAD_ARGS
    try:
        code = int(args.fn(args, console))
    except UsageError as e:
        print(f"harness: {e}", file=sys.stderr)
        code = EXIT_BAD_ARGS
    except KeyboardInterrupt:  # outside a run's own handling (which checks and reports)
        print("harness: interrupted before a verdict: unknown (exit 2)", file=sys.stderr)
        code = EXIT_UNKNOWN
    except MemoryError:  # the message is built beforehand: allocating now could fail
        os.write(2, _OUT_OF_MEMORY)
        code = EXIT_CRASH
    except Exception as e:  # a crash: one line plus where the details are
        import traceback

        from core.errors import HarnessError

        if isinstance(e, HarnessError):
            print(f"harness: {e}", file=sys.stderr)
            code = EXIT_BAD_ARGS
        else:
            traceback.print_exception(e, chain=False)
            print(f"harness: crashed: {type(e).__name__}: {e}", file=sys.stderr)
            code = EXIT_CRASH
    return code


if __name__ == "__main__":
    sys.exit(main())
