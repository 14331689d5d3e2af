"""The checks of option values: each number option's range (``NUMBERS``), names used as
folder names, the ``--nemesis`` list (paths: ``core.paths``); every failure a one-line
``OptionError`` that says what is wrong and what to do."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from core.errors import HarnessError

NAME_MAX: Final = 100
MS: Final = 0.001
"""The shortest duration an option takes (a millisecond): below it, the clocks and
timers a run uses cannot tell it from none, and its inverse overflows."""


class OptionError(HarnessError, ValueError):
    """A bad option; the message says what is wrong and what to do."""


class UnknownName(OptionError):
    """A name that is none of its choices; the message names the nearest, or them all
    (``unknown_name``)."""


@dataclass(frozen=True, slots=True)
class Bound:
    """The range of a number option: ``low`` (exclusive when ``open_low``) to ``high``;
    with ``zero``, 0 too (a duration whose 0 means "none")."""

    flag: str
    low: float
    high: float
    open_low: bool = False
    integer: bool = False
    unit: str = "seconds"
    zero: bool = False

    def check(self, value: Any) -> None:
        """OptionError (one line) unless ``value`` is a finite number in range."""
        kind = "an integer" if self.integer else "a number"
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (self.integer and not isinstance(value, int))
        ):
            raise OptionError(f"{self.flag} must be {kind} ({self.unit}), not {value!r}")
        if not math.isfinite(value):
            raise OptionError(f"{self.flag} must be a finite number ({self.unit}), not {value!r}")
        low_ok = value > self.low if self.open_low else value >= self.low
        if (not low_ok and not (self.zero and value == 0)) or value > self.high:
            low = f"more than {_num(self.low)}" if self.open_low else f"at least {_num(self.low)}"
            low = f"0 or {low}" if self.zero else low
            raise OptionError(
                f"{self.flag} must be {low} and at most {_num(self.high)} "
                f"({self.unit}), not {value!r}"
            )


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


DAY: Final = 86_400.0
NUMBERS: Final[dict[str, Bound]] = {
    "concurrency": Bound("--concurrency", 1, 1000, integer=True, unit="client processes"),
    "rate": Bound("--rate", MS, 1e6, unit="operations per second"),
    "min_rate": Bound("--min-rate", MS, 1e6, unit="operations per second"),
    "time_limit": Bound("--time-limit", 0.01, DAY),
    "recovery_time": Bound("--recovery-time", MS, DAY, zero=True),
    "op_timeout": Bound("--op-timeout", MS, 3 * DAY),  # follows work + pause, each up to a day
    "seed": Bound("--seed", 0, 2**63 - 1, integer=True, unit="integers"),
    "nemesis_interval": Bound("--nemesis-interval", MS, DAY),
    "pause_at": Bound("--pause-at", MS, DAY, zero=True),
    "pause_for": Bound("--pause-for", MS, DAY),
    "clock_delta": Bound("--clock-delta", -DAY, DAY),
    "nodes": Bound("--nodes", 1, 99, integer=True, unit="nodes"),
    "client_clock_delta": Bound("--client-clock-delta", -3600, 3600),
    "ssh_port": Bound("--ssh-port", 1, 65535, integer=True, unit="port numbers"),
}
"""Every number option and its range (a workload's record's own come in with it:
``core.options.hand_in``); None is allowed where the field is optional. A
duration is at least a millisecond (``MS``), or 0 where 0 means none; the time limit
at least 10 ms, so that the default fitted to it (the interval between faults:
``core.option_defaults``) is a millisecond or more."""


def check_number(name: str, value: Any) -> None:
    """Check the raw value of a number option (from the command line or a suite file)."""
    if value is not None and name in NUMBERS:
        NUMBERS[name].check(value)


def safe_word(value: str) -> str:
    """``value`` as one word of a folder name: every run of characters but letters,
    digits and ``. _ -`` made one ``-`` (``pkg.mod:make`` -> ``pkg.mod-make``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-.") or "-"


def check_name(value: str, what: str = "--name") -> str:
    """A name used as one path component: no separators, not ``.``/``..``, bounded."""
    if not isinstance(value, str) or not value.strip():
        raise OptionError(f"{what} must be a non-empty name, not {value!r}")
    bad = [c for c in value if c in "/\\" or ord(c) < 32 or c == "\x7f"]
    if bad or value in (".", "..") or value.startswith("."):
        raise OptionError(
            f"{what} {value!r} is not one folder name: use letters, digits and "
            "- _ + . (no / or \\, not starting with a dot)"
        )
    if len(value) > NAME_MAX:
        raise OptionError(f"{what} is {len(value)} characters long: at most {NAME_MAX}")
    return value


def parse_faults(value: Any, names: Sequence[str] = ()) -> tuple[str, ...]:
    """The ``--nemesis`` list: at least one name, no repeats, ``none`` alone. The fault
    names are the application's (``nemesis.fault_registry``): given as ``names``, each must be
    one of them; else only the syntax is checked here."""
    if isinstance(value, str):
        value = [x.strip() for x in value.split(",")] if value.strip() else []
    if not isinstance(value, list | tuple) or not value:
        some = f"at least one of {', '.join(names)}" if names else "at least one fault, or none"
        raise OptionError(f"--nemesis needs {some}")
    strange = next((n for n in value if not isinstance(n, str)), None)
    if strange is not None:
        raise OptionError(f"--nemesis takes fault names, not {strange!r:.60}")
    for n in value if names else ():
        _one_of("--nemesis", n, tuple(names), "(several separated by commas)")
    if len(set(value)) != len(value):
        raise OptionError(f"--nemesis names a fault twice: {','.join(value)}")
    if "none" in value and len(value) > 1:
        raise OptionError("--nemesis none cannot be combined with faults")
    return tuple(value)


def _one_of(flag: str, value: Any, choices: tuple[str, ...], hint: str = "") -> None:
    if value not in choices:
        raise UnknownName(unknown_name(flag.lstrip("-"), value, choices, f"for {flag}", hint))


def unknown_name(
    kind: str, value: object, choices: Sequence[str], where: str = "", hint: str = ""
) -> str:
    """The one line refusing ``value``, not one of ``choices``: the nearest of them when
    one is close (``unknown target 'etdc'; did you mean 'etcd'?``), else all of them.
    ``where`` says where it was given (``for --nemesis``), ``hint`` how to give several."""
    said = f"unknown {kind} {value!r}" + (f" {where}" if where else "")
    near = nearest(value, choices)
    if near is not None:
        return f"{said}; did you mean {near!r}?"
    return f"{said}: choose from {', '.join(map(str, choices))}" + (f" {hint}" if hint else "")


def nearest(value: object, choices: Sequence[str]) -> str | None:
    """The one of ``choices`` close enough to ``value`` to be what was meant, if any."""
    import difflib

    near = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.6)
    return near[0] if near else None
