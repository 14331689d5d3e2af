"""The faults: one line per fault, each a ``FaultSpec`` written in its own module.

The command line's choices and help, the validation of ``--nemesis`` and
``--nemesis-target``, the nemesis a run builds (``nemesis.build``), what the target must
be able to do (``core.abilities``) and what test.json records for the checkers all read
this table. ``none`` is not a fault: it is the value that asks for none.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from core.abilities import Ability
from core.option_checks import OptionError, parse_faults
from core.options import FaultRules, RunOptions
from nemesis.faults import (
    client_clock,
    client_kill,
    client_pause,
    clock,
    kill,
    loss,
    partition,
    pause,
    power_loss,
)
from nemesis.spec import FaultSpec

FAULTS: Final[Mapping[str, FaultSpec]] = {
    f.name: f
    for f in (
        client_pause.FAULT,
        pause.FAULT,
        partition.FAULT,
        loss.FAULT,
        kill.FAULT,
        power_loss.FAULT,
        clock.FAULT,
        client_kill.FAULT,
        client_clock.FAULT,
    )
}
NONE: Final = "none"


def nemesis_names() -> tuple[str, ...]:
    """What ``--nemesis`` takes: ``none`` and every fault."""
    return (NONE, *FAULTS)


def parse_nemesis(value: object) -> tuple[str, ...]:
    """``--nemesis`` (a comma list or a suite's list) as fault names, each registered."""
    return parse_faults(value, nemesis_names())


def spec_of(name: str) -> FaultSpec:
    """The fault ``name``; OptionError (one line listing the faults) if there is none."""
    spec = FAULTS.get(name)
    if spec is None:
        parse_nemesis([name])  # says which names there are
        raise OptionError(f"{name!r} is not a fault")  # only "none" gets here
    return spec


def rules_of(opts: RunOptions) -> FaultRules:
    """What the faults ``opts`` asks for do to its rules (``core.options.FaultRules``):
    the longest freeze of a holder's work, the faults taking turns (a name not registered
    among them: it is refused later, by ``parse_nemesis``), each fault's own check and
    fitting of its defaults."""
    specs = [FAULTS[n] for n in opts.fault_names() if n in FAULTS]
    freezes = [f for f in (s.freezes(opts) for s in specs) if f is not None]
    freeze, why = max(freezes, default=(0.0, ""))
    periodic = tuple(
        n for n in opts.fault_names() if n not in FAULTS or FAULTS[n].timing(opts) is None
    )
    return FaultRules(
        freeze, why, periodic, tuple(s.check for s in specs), tuple(s.adapt for s in specs)
    )


def needs_of(faults: Iterable[str]) -> dict[str, frozenset[Ability]]:
    """What each fault needs of the target, for ``core.abilities.check_abilities``."""
    return {f: spec_of(f).needs for f in faults}


def packages_of(faults: Iterable[str]) -> tuple[str, ...]:
    """The packages the machine running the harness needs for these faults (each
    ``FaultSpec.packages``), each once, in the order first named."""
    return tuple(dict.fromkeys(p for f in faults for p in spec_of(f).packages))


def facts_of(faults: Iterable[str]) -> dict[str, dict[str, Any]]:
    """What test.json records of the run's faults, for the checkers (``checkers.windows``)."""
    return {f: spec_of(f).facts() for f in faults}


def help_lines() -> str:
    """Every fault with its help line, one a line, for ``--nemesis``'s reference."""
    return "\n".join(f"{f.name}: {f.help}" for f in FAULTS.values())
