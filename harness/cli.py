"""The ``harness`` command line.

Exit codes follow Jepsen's: 0 valid, 1 invalid, 2 unknown (and interrupted: a run cut
short whose checks found no violation), 254 bad arguments or input, 255 a crash of the
harness itself. Bad input is one line saying what is wrong and what to
do, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from types import ModuleType
from typing import Any, Final

from core.errors import EXIT_CRASH
from harness.commands.args import EXIT_BAD_ARGS, EXIT_UNKNOWN, Parser, UsageError, bounded

_OUT_OF_MEMORY = b"harness: out of memory; try --memory-limit or fewer files\n"


COMMANDS: Final = (
    "run",
    "check",
    "report",
    "serve",
    "compare",
    "suite",
    "merge",
    "images",
    "clusters",
    "docs",
    "completion",
    "junit-summary",
)
"""The commands, one module each (``harness.commands``, a dash in the name an underscore
in the module's), in the order of ``--help``."""


def command(name: str) -> ModuleType:
    """The module of command ``name`` (imported on first use)."""
    return importlib.import_module(f"harness.commands.{name.replace('-', '_')}")


def version_text() -> str:
    """The harness's version, Python's, and whether the compiled checker is in use."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    from core import compiled

    try:
        mine = version("coordination-harness")
    except PackageNotFoundError:  # run from a checkout that was never installed
        mine = "unknown (not installed)"
    if os.environ.get("HARNESS_PURE_PYTHON"):
        checker = "plain Python (HARNESS_PURE_PYTHON is set)"
    elif compiled.active():
        checker = f"compiled (mypyc, {compiled.location()})"
    else:
        checker = "plain Python (no compiled build matches these sources)"
    return (
        f"harness {mine}\nPython {platform.python_version()} "
        f"({platform.python_implementation()}, {sys.executable})\n"
        f"linearizability checker: {checker}"
    )


class VersionAction(argparse.Action):
    """``--version``: print ``version_text()`` and exit 0 (computed only when asked)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(version_text())
        parser.exit(0)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of ``harness`` and of every command, or of command ``only`` alone: a
    command's parser may read the registries (``run``'s choices), which ``harness check``
    of one history file should not pay for."""
    p = Parser(
        prog="harness",
        description="Jepsen-style tests of coordination services: locks, CAS registers and "
        "leader election under faults, checked for linearizability and mutual "
        "exclusion.",
        epilog="Exit codes: 0 valid, 1 invalid, 2 unknown, 254 bad arguments, 255 crash.",
    )
    p.add_argument(
        "--version", action=VersionAction, help="the version, Python's, and the checker in use"
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    p.commands = sub.choices
    for name in COMMANDS:
        if only is None or name == only:
            command(name).add(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The ``harness`` command: ``argv``, or None for this process's own command line,
    whose start-up and exit then skip the cyclic garbage collector's work (``main``
    called with ``argv``, as tests do, keeps the collector as it was).

    Start-up (choosing the command, importing its modules) makes tens of thousands of
    objects and no garbage: no collection runs meanwhile, and once the command is
    chosen what it made is frozen out of every later collection (``_resume_gc``). At
    the end whatever is left is frozen too, so the interpreter's collection at exit has
    nothing to traverse. Both were a tenth of a small file's ``harness check``."""
    paused = argv is None and gc.isenabled()
    if paused:
        gc.disable()
    try:
        return _main_streams(
            list(sys.argv[1:] if argv is None else argv), _resume_gc if paused else None
        )
    finally:
        if paused:
            gc.freeze()
            gc.enable()


def _resume_gc() -> None:
    """The command is chosen and its modules imported: freeze what start-up made and
    collect again (``main``)."""
    gc.freeze()
    gc.enable()


def _main_streams(argv: list[str], started: Callable[[], None] | None) -> int:
    with stop_early(bool(argv[:1]) and argv[0] in STOPPED_EARLY):
        try:
            from harness.terminal import guard_streams
        except KeyboardInterrupt as e:
            return _interrupted(e)
        with guard_streams() as outputs:
            code = _interruptible(argv, started)
    if outputs.failure is not None:  # the answer did not arrive: a crash, not a verdict
        _say_last(f"harness: could not write the output ({outputs.failure}); exit {EXIT_CRASH}")
        return EXIT_CRASH
    return code


def _say_last(line: str) -> None:
    """One line on stderr, whatever became of it (it may be the stream that failed)."""
    with contextlib.suppress(OSError):
        os.write(2, (line + "\n").encode())


STOPPED_EARLY: Final = ("run", "suite", "check")
"""The commands a stop signal ends like Ctrl-C from their first instant (``stop_early``):
a run interrupted is unknown, exit 2, however early; a check too, its scratch folder
removed (``harness.checkstream``)."""


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP before a run's own handling of them: ends the command as
    Ctrl-C does (``harness.orchestrate`` records one that arrives during a run)."""

    def __init__(self, signame: str) -> None:
        super().__init__(signame)
        self.signame = signame


@contextlib.contextmanager
def stop_early(active: bool) -> Iterator[None]:
    """While in it (when ``active``), SIGTERM and SIGHUP raise ``Stopped``, as SIGINT
    raises KeyboardInterrupt: entered before anything slow (the registries' imports), so
    that a run stopped in its first instant says so, exit 2, rather than dying by the
    signal. An ignored signal (nohup) stays ignored; the handlers before are restored."""
    if not active:  # nor the signal module's import (its enums cost a small check's time)
        yield
        return
    import signal

    def handler(signum: int, frame: object) -> None:
        raise Stopped(signal.Signals(signum).name)

    signals = (signal.SIGTERM, signal.SIGHUP)
    old = {s: signal.getsignal(s) for s in signals}
    for s, h in old.items():
        if h is signal.SIG_DFL:
            signal.signal(s, handler)
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _interruptible(argv: list[str], started: Callable[[], None] | None = None) -> int:
    """``_main``, a stop before a verdict (Ctrl-C, or with ``stop_early`` SIGTERM and
    SIGHUP) outside a run's own handling, which checks and reports, being exit 2: however
    early it came, reading the arguments or importing the registries included."""
    try:
        return _main(argv, started)
    except KeyboardInterrupt as e:
        return _interrupted(e)


def _interrupted(e: KeyboardInterrupt) -> int:
    """Exit 2, said in one line: stopped (by which signal) before a verdict."""
    by = f" by {e.signame}" if isinstance(e, Stopped) else ""
    print(f"harness: interrupted{by} before a verdict: unknown (exit 2)", file=sys.stderr)
    return EXIT_UNKNOWN


def _main(argv: list[str], started: Callable[[], None] | None = None) -> int:
    from harness.terminal import Terminal

    first = argv[0] if argv else None
    parser = build_parser(first if first in COMMANDS else None)
    args = parser.parse_args(argv)
    if started is not None:
        started()
    if not getattr(args, "fn", None):
        parser.print_help()
        return EXIT_BAD_ARGS
    try:
        return int(args.fn(args, Terminal(as_json=bool(getattr(args, "json", False)))))
    except UsageError as e:
        print(f"harness: {bounded(str(e))}", file=sys.stderr)
        return EXIT_BAD_ARGS
    except MemoryError:  # the message is built beforehand: allocating now could fail
        os.write(2, _OUT_OF_MEMORY)
        return EXIT_CRASH
    except Exception as e:
        from core.errors import HarnessError

        if isinstance(e, HarnessError):
            print(f"harness: {bounded(str(e))}", file=sys.stderr)
            return EXIT_BAD_ARGS
        print(f"harness: crashed: {crash_line(e)}", file=sys.stderr)
        return EXIT_CRASH


def crash_line(e: BaseException) -> str:
    """A crash in one line: what failed, and where its traceback went (the run's
    ``harness.log`` when a run is logging, else how to see it). A full disk or another
    failed write says which file, and that the history written so far can be checked."""
    import logging

    from core.errors import CrashReported
    from harness.logs import log_files

    if isinstance(e, CrashReported):
        return str(e)
    files = log_files()
    if files:
        logging.getLogger("harness").error("crashed", exc_info=e)
        where = f"traceback in {files[0]}"
    elif os.environ.get("HARNESS_TRACEBACK"):
        import traceback

        traceback.print_exception(e)
        where = "traceback above"
    else:
        where = "HARNESS_TRACEBACK=1 prints the traceback"
    return f"{type(e).__name__}: {e} ({where})"


if __name__ == "__main__":
    sys.exit(main())
