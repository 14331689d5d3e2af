"""What every command of ``harness`` shares: its exit codes, the parser class whose
errors are one line (the nearest name for a misspelt one), what an option says of itself
beyond argparse's fields (``OptionInfo``), the types that check an option's value, the SSH
login options."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple, NoReturn

from core.errors import EXIT_BAD_INPUT

if TYPE_CHECKING:
    from pathlib import Path  # imported by the functions that make one: not every start-up

    from core.option_checks import Bound

EXIT_BAD_ARGS = EXIT_BAD_INPUT
EXIT_UNKNOWN = 2  # Jepsen's unknown: also an interrupted run, and one stopped before a verdict


class UsageError(Exception):
    """Bad arguments or input: printed as one line, exit 254."""


class UnknownChoice(Exception):
    """A misspelt name on the command line (a command, a target...): the one line of
    ``core.option_checks.unknown_name`` naming the nearest, printed as it is, exit 254.
    Not a ValueError, so that argparse lets it through its value conversion."""


_UNSET: Final[Any] = object()


class OptionInfo(NamedTuple):
    """What an option says of itself beyond argparse's fields, attached by ``describe``.

    ``shown``: the default its help shows when argparse's is None (the option's own
    default, left to ``RunOptions`` so that what the user wrote can be told from it);
    ``details``: the per-value table the option reference adds after its help (``harness
    docs options``); ``offers``: its values, for help and completion, when argparse has no
    ``choices`` (a comma list, names from a registry), ``comma`` when it takes several
    separated by commas; ``files``: it takes file names too (completion); ``common``:
    listed in its command's short ``--help``."""

    shown: Any = _UNSET
    details: Callable[[], str] | None = None
    offers: Callable[[], Iterable[str]] | None = None
    comma: bool = False
    files: bool = False
    common: bool = False


NO_INFO: Final = OptionInfo()


def describe(
    action: argparse.Action,
    *,
    shown: Any = _UNSET,
    details: Callable[[], str] | None = None,
    offers: Callable[[], Iterable[str]] | None = None,
    comma: bool = False,
    files: bool = False,
    common: bool = False,
) -> argparse.Action:
    """Attach ``OptionInfo`` to ``action`` (returned, for chaining)."""
    info = OptionInfo(shown, details, offers, comma, files, common)
    setattr(action, "info", info)  # noqa: B010
    return action


def info_of(action: argparse.Action) -> OptionInfo:
    """What ``action`` says of itself (``NO_INFO`` when nothing was attached)."""
    info = getattr(action, "info", NO_INFO)
    return info if isinstance(info, OptionInfo) else NO_INFO


def choices_of(action: argparse.Action) -> tuple[str, ...]:
    """The fixed set of values an option takes: argparse's choices or its ``offers``."""
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        return tuple(map(str, action.choices))
    offers = info_of(action).offers
    return tuple(offers()) if offers is not None else ()


def shown_default(value: object) -> str:
    """A default as ``--help`` shows it: on/off for a switch, a list joined by commas,
    ``none`` for an empty one."""
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, (list, tuple)):
        return ", ".join(map(str, value)) or "none"
    if isinstance(value, float):
        return f"{value:g}"
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

    def _split_lines(self, text: str, width: int) -> list[str]:
        """argparse's wrapping, without breaking a name at its hyphens (token-reuse)."""
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False)

    def _expand_help(self, action: argparse.Action) -> str:
        info = info_of(action)
        if info.shown is not _UNSET:  # argparse's default is None: "not given"
            import copy  # help only: a command's start-up does without it

            action = copy.copy(action)
            action.default = shown_default(info.shown)
        text = super()._expand_help(action)
        if not action.option_strings or action.nargs == 0:  # positionals and switches
            return text
        extra = []
        listed = action.metavar is None and action.choices is not None  # as the metavar
        values = choices_of(action)
        if values and not listed and not all(v in text for v in values):
            extra.append(("several of: " if info.comma else "one of: ") + ", ".join(values))
        if "default" not in text and action.default not in (None, argparse.SUPPRESS):
            extra.append(f"default: {shown_default(action.default)}")
        return f"{text} ({'; '.join(extra)})" if extra else text


class Parser(argparse.ArgumentParser):
    commands: Mapping[str, argparse.ArgumentParser] | None = None
    """On the top parser: command -> its parser, to name it in errors."""
    help_writer: Callable[[argparse.ArgumentParser, argparse.HelpFormatter], str] | None = None
    """What writes its ``--help`` instead of argparse (``harness.option_help.brief_help``:
    the common options only, the others by topic, the epilog's examples as written)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:  # name the command whose options these are not (argparse names none)
            command = (self.commands or {}).get(getattr(ns, "command", None) or "", self)
            _suggest_option(command, extras)
            command.error(f"unrecognized arguments: {' '.join(extras)}")
        return ns

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        try:
            return super().parse_known_args(args, namespace)
        except UnknownChoice as e:
            sys.stderr.write(f"harness: {bounded(str(e))}\n")
            raise SystemExit(EXIT_BAD_ARGS) from None

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        """A value outside the choices: the nearest choice when one is close (a command,
        a target...), else argparse's own error listing them."""
        if action.choices is not None and value not in action.choices:
            from core.option_checks import unknown_name

            said = unknown_name(_kind(action), value, [str(c) for c in action.choices])
            if "did you mean" in said:
                raise UnknownChoice(said)
        super()._check_value(action, value)

    def format_help(self) -> str:
        if self.help_writer is None:
            return super().format_help()
        return self.help_writer(self, self._get_formatter())

    def error(self, message: str) -> NoReturn:
        """One line: what is wrong and where the options are listed (not the usage)."""
        sys.stderr.write(f"harness: error: {bounded(message)} (see `{self.prog} --help`)\n")
        raise SystemExit(EXIT_BAD_ARGS)


WORD_MAX: Final = 300
"""Characters of one word (a value the user gave, echoed) a refusal shows whole."""


def bounded(message: str) -> str:
    """``message`` with every word longer than ``WORD_MAX`` cut to its start and its
    length: a refusal echoing a 100,000-character value stays a line one can read."""
    import re

    return re.sub(
        rf"\S{{{WORD_MAX + 1},}}", lambda m: f"{m[0][:60]}... ({len(m[0])} characters)", message
    )


def _kind(action: argparse.Action) -> str:
    """What an action's values are called in errors: ``command``, ``target``..."""
    if isinstance(action, argparse._SubParsersAction):
        return "command"
    return action.option_strings[0].lstrip("-") if action.option_strings else action.dest


def _suggest_option(parser: argparse.ArgumentParser, extras: Sequence[str]) -> None:
    """UnknownChoice naming the nearest option of ``parser`` for the first unrecognized
    word that looks like a misspelt one (``--taget``); nothing when none is near."""
    from core.option_checks import unknown_name

    flags = [f for a in parser._actions for f in a.option_strings]
    for word in extras:
        if word.startswith("--"):
            said = unknown_name("option", word.split("=", 1)[0], flags, f"of `{parser.prog}`")
            if "did you mean" in said:
                sys.stderr.write(f"harness: {said}\n")
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


def number_option(
    group: argparse._ActionsContainer, flag: str, help: str, common: bool = False
) -> argparse.Action:
    """Add the number option ``flag`` (``--time-limit``) of the run option it names
    (``time_limit``): its type checks the option's range; argparse's default is None (not
    given: ``RunOptions`` has the default, which adapts to what was given), the help
    shows the option's own."""
    from core.option_checks import NUMBERS
    from core.options import RunOptions

    field = flag.removeprefix("--").replace("-", "_")
    bound = NUMBERS[field]
    metavar = "N" if bound.integer else "SECONDS" if bound.unit == "seconds" else "X"
    action = group.add_argument(flag, type=number(field), default=None, metavar=metavar, help=help)
    shown = RunOptions().get(field)
    return describe(action, shown=_UNSET if shown is None else shown, common=common)


def run_default(field: str) -> Any:
    """The default ``RunOptions`` gives the run option ``field``, to show in help."""
    from core.options import RunOptions

    return RunOptions().get(field)


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
    from core.option_checks import OptionError, UnknownName
    from nemesis.fault_registry import parse_nemesis

    try:
        return parse_nemesis(text)  # as a suite's value: no silently dropped empty name
    except UnknownName as e:
        if "did you mean" in str(e):
            raise UnknownChoice(str(e)) from None
        raise argparse.ArgumentTypeError(str(e)) from None
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def path(what: str) -> Callable[[str], str]:
    """The argparse type of a path argument (``what``: its name in messages, ``--html``,
    ``PATH``): bounded as the file system bounds it (``core.paths.check_path``), a
    one-line error otherwise, before anything opens it."""
    from core.paths import PathError, check_path

    def parse(text: str) -> str:
        try:
            return check_path(text, what)
        except PathError as e:  # argparse names the argument already
            raise argparse.ArgumentTypeError(str(e).removeprefix(f"{what}: ")) from None

    parse.__name__ = what  # argparse names the type in some errors
    return parse


def path_option(
    parser: argparse._ActionsContainer, flag: str, help: str, metavar: str | None = None
) -> argparse.Action:
    """Add the optional path option ``flag`` (default None: not given), bounded as a path
    (``path``)."""
    return parser.add_argument(flag, type=path(flag), default=None, metavar=metavar, help=help)


def parsed(parse: Callable[[str], object]) -> Callable[[str], object]:
    """An argparse type from a parser that raises ValueError with its reason."""

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    convert.__name__ = parse.__name__
    return convert


def add_ssh_login_options(g: argparse._ArgumentGroup, given_only: bool = False) -> None:
    """Which hosts, and how to log in to them: shared by ``run`` and ``clusters``. With
    ``given_only`` (``run``), an option left out is None, told apart from one given."""
    g.add_argument(
        "--nodes-file",
        type=path("--nodes-file"),
        default=None,
        help="hosts, one [user@]host[:port] a line (default: --nodes)",
    )
    g.add_argument("--ssh-user", default=None, help="login name (default: yours)")
    g.add_argument(
        "--ssh-key",
        type=path("--ssh-key"),
        default=None,
        help="private key (default: agent, ~/.ssh/id_*)",
    )
    port = g.add_argument(
        "--ssh-port",
        type=number("ssh_port"),
        default=None if given_only else 22,
        help="1-65535 (default: %(default)s)",
    )
    g.add_argument(
        "--ssh-no-strict",
        action="store_false",
        dest="ssh_strict",
        default=None if given_only else True,
        help="accept unknown host keys (lab machines only)",
    )
    if given_only:
        describe(port, shown=run_default("ssh_port"))
    g.add_argument(
        "--ssh-known-hosts",
        type=path("--ssh-known-hosts"),
        default=None,
        help="check host keys against this file (default: ~/.ssh/known_hosts)",
    )


def writable_dir(path: str, flag: str = "--out-dir") -> Path:
    """``path`` as a folder this process can write into (created if missing), else a
    one-line UsageError: not a file, not /proc, not read-only."""
    from pathlib import Path

    from core.writes import can_write_in

    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        can_write_in(folder)
    except OSError as e:
        raise UsageError(
            f"{flag} {path}: cannot write there ({e.strerror or e}); name a folder you can write"
        ) from None
    return folder


def writable_parent(path: str, flag: str) -> Path:
    """``path`` as a file whose folder exists and this process can write into, else a
    one-line UsageError; nothing is created (a file written only when there is
    something to write)."""
    from pathlib import Path

    from core.writes import can_write_in

    folder = Path(path).parent
    try:
        can_write_in(folder)
    except OSError as e:
        raise UsageError(
            f"{flag} {path}: cannot write in {folder} ({e.strerror or e}); name a file in a "
            "folder you can write"
        ) from None
    return Path(path)


def writable_file(path: str, flag: str) -> Path:
    """``path`` as a file this process can write (created empty if missing), else a
    one-line UsageError: not a folder, not in a missing or read-only folder; a link
    there is refused (``core.writes.WriteRefused``), never followed."""
    from pathlib import Path

    from core.writes import WriteRefused, open_append

    file = Path(path)
    try:
        open_append(file).close()
    except WriteRefused as e:
        raise UsageError(f"{flag} {e}") from None
    except OSError as e:
        raise UsageError(
            f"{flag} {path}: cannot write there ({e.strerror or e}); name a "
            "file in a folder you can write"
        ) from None
    return file
