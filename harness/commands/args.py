"""What every command of ``harness`` shares: its exit codes, the parser class whose
errors are one line, the types that check an option's value, the SSH login options."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from core.errors import EXIT_BAD_INPUT

if TYPE_CHECKING:
    from core.option_checks import Bound

EXIT_BAD_ARGS = EXIT_BAD_INPUT
EXIT_UNKNOWN = 2  # Jepsen's unknown: also an interrupted run, and one stopped before a verdict


class UsageError(Exception):
    """Bad arguments or input: printed as one line, exit 254."""


def shown_default(value: object) -> str:
    """A default as ``--help`` shows it: on/off for a switch, a list joined by commas,
    ``none`` for an empty one."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    return str(value)


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` finds it (``COLUMNS``, else
    stdout's terminal, else 80), without importing shutil: argparse makes a formatter for
    every option added, and shutil's import was a thirtieth of a small check's start-up."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    if sys.__stdout__ is None:
        return 80
    try:
        return os.get_terminal_size(sys.__stdout__.fileno()).columns or 80
    except (AttributeError, ValueError, OSError):
        return 80


class HelpFormatter(argparse.HelpFormatter):
    """Every option's help ends with its default and its allowed values, unless its own
    words already give them: an option whose default means something else than a value
    (None: "decided by the target") says so in its help text, which a unit test checks."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        width = _columns() - 2 if width is None else width
        super().__init__(prog, indent_increment, max_help_position, width)

    def _expand_help(self, action: argparse.Action) -> str:
        text = super()._expand_help(action)
        if not action.option_strings or action.nargs == 0:  # positionals and switches
            return text
        extra = []
        listed = action.metavar is None  # argparse shows the choices as the metavar
        if (
            action.choices is not None
            and not listed
            and not all(str(c) in text for c in action.choices)
        ):
            extra.append("one of: " + ", ".join(map(str, action.choices)))
        if "default" not in text and action.default not in (None, argparse.SUPPRESS):
            extra.append(f"default: {shown_default(action.default)}")
        return f"{text} ({'; '.join(extra)})" if extra else text


class Parser(argparse.ArgumentParser):
    commands: Mapping[str, argparse.ArgumentParser] | None = None
    """On the top parser: command -> its parser, to name it in errors."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

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


class Deferred(str):
    """Help text computed only when help is printed (it imports the target registry)."""

    fn: Callable[[], str]

    def __new__(cls, fn: Callable[[], str]) -> Deferred:
        text = super().__new__(cls, "(computed when shown)")
        text.fn = fn
        return text

    def __mod__(self, params: object) -> str:
        return self.fn().replace("%", "%%") % params


def on_off(s: str) -> bool:
    v = s.strip().lower()
    if v in ("on", "true", "yes", "1"):
        return True
    if v in ("off", "false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected on or off, not {s!r}")


def number(field: str | Bound) -> Callable[[str], float | int]:
    """The argparse type of a number option: parsed, then checked against its range in
    ``core.options.NUMBERS`` (one-line error naming the option and the range)."""
    from core.option_checks import NUMBERS, OptionError

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


_OPTION_DEFAULT: Any = object()


def number_option(
    group: argparse._ActionsContainer, flag: str, help: str, default: Any = _OPTION_DEFAULT
) -> None:
    """Add the number option ``flag`` (``--time-limit``) of the run option it names
    (``time_limit``): its type checks the option's range, its default is the option's own
    (``RunOptions``) unless ``default`` is given."""
    from core.options import RunOptions

    field = flag.removeprefix("--").replace("-", "_")
    if default is _OPTION_DEFAULT:
        default = RunOptions().get(field)
    group.add_argument(flag, type=number(field), default=default, help=help)


def checked(check: Callable[[str], object]) -> Callable[[str], str]:
    """An argparse type from a check raising OptionError."""
    from core.option_checks import OptionError

    def parse(text: str) -> str:
        try:
            check(text)
        except OptionError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
        return text

    return parse


def faults(text: str) -> tuple[str, ...]:
    from core.option_checks import OptionError
    from nemesis.registry import parse_nemesis

    try:
        return parse_nemesis(text)  # as a suite's value: no silently dropped empty name
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parsed(parse: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a parser that raises ValueError with its reason."""

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = parse.__name__
    return convert


def add_ssh_login_options(g: argparse._ArgumentGroup) -> None:
    """Which hosts, and how to log in to them: shared by ``run`` and ``clusters``."""
    g.add_argument(
        "--nodes-file", default=None, help="hosts, one [user@]host[:port] a line (default: --nodes)"
    )
    g.add_argument("--ssh-user", default=None, help="login name (default: yours)")
    g.add_argument("--ssh-key", default=None, help="private key (default: agent, ~/.ssh/id_*)")
    g.add_argument(
        "--ssh-port", type=number("ssh_port"), default=22, help="1-65535 (default: %(default)s)"
    )
    g.add_argument(
        "--ssh-no-strict",
        action="store_false",
        dest="ssh_strict",
        help="accept unknown host keys (lab machines only)",
    )
    g.add_argument(
        "--ssh-known-hosts",
        default=None,
        help="check host keys against this file (default: ~/.ssh/known_hosts)",
    )


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
