"""A fault as one value: ``FaultSpec``, written in its own module ``nemesis/faults/<name>.py``.

Everything the run, the command line and the checkers need to know of a fault is here,
registered against its kind (``core.faults``: its name and what it aims at, the data the
layers below read): its operations (``start-<name>``/``stop-<name>``, the naming the
checkers read windows by), how to build its nemesis, the value its start op carries, what
``--nemesis-target`` may aim it at, the abilities it needs of the target
(``core.abilities``), the packages it needs on the machine that runs the harness, its help
line, and the words a fault window of it is described with and what it does as the
checkers see it (both recorded in test.json, so a checker explains a fault it has never
heard of).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from core.abilities import Ability
from core.cluster import Cluster
from core.faults import FaultKind
from core.options import RunOptions
from nemesis.base import Nemesis

Builder = Callable[[Cluster, str, int, RunOptions], Nemesis]
"""(cluster, what the fault aims at, seed, options) -> the nemesis; TypeError when the
cluster cannot take the fault (said as an option error)."""
Make = Callable[[Cluster, str, int], Nemesis]
StartValue = Callable[[str, RunOptions], "dict[str, Any] | None"]
"""(what the fault aims at, options) -> the start op's value (None: no value)."""


def aim_value(target: str, opts: RunOptions) -> dict[str, Any] | None:
    """The usual start value: ``{"target": what the fault aims at}``."""
    return {"target": target}


Timing = Callable[[RunOptions], "tuple[float, float] | None"]
"""options -> (seconds into the workload at which the fault starts, seconds it lasts) when
it keeps a time of its own; None: it takes turns with the others every
``--nemesis-interval`` (``nemesis.build``)."""
Freeze = Callable[[RunOptions], "tuple[float, str] | None"]
"""options -> the seconds the fault may freeze a client in the middle of its work, and
those words for the op timeout's reason (``core.options.FaultRules``); None: it freezes none."""
Check = Callable[[RunOptions], None]
"""options -> None, or an OptionError (one line) when they cannot schedule the fault."""
Adapt = Callable[[RunOptions], RunOptions]
"""options -> the options with the fault's own defaults the user did not write fitted to
those they did (``RunOptions.adapt`` says why), or an OptionError naming what they wrote
when nothing fits (``core.option_defaults``)."""


def takes_turns(opts: RunOptions) -> tuple[float, float] | None:
    """The usual timing: the fault takes turns with the others."""
    return None


def freezes_nothing(opts: RunOptions) -> tuple[float, str] | None:
    """The usual fault freezes no client in the middle of its work."""
    return None


def no_check(opts: RunOptions) -> None:
    """The usual fault has no rule of its own on the options."""


def keeps_defaults(opts: RunOptions) -> RunOptions:
    """The usual fault has no defaults of its own to fit."""
    return opts


def simple(make: Make) -> Builder:
    """The builder of a nemesis made of the cluster, what it aims at and the seed alone."""
    return lambda cluster, target, seed, opts: make(cluster, target, seed)


@dataclass(frozen=True, slots=True)
class Aim:
    """What ``--nemesis-target`` may aim a fault at: ``targets`` (``default`` when none is
    given) and, with ``node_names``, node names too (``n2``, ``n1,n3``)."""

    targets: tuple[str, ...] = ()
    default: str | None = None
    node_names: bool = False

    def takes(self) -> str:
        """The values it takes, in words."""
        return ", ".join(self.targets) + (", node names (n2 or n1,n3)" if self.node_names else "")


NO_AIM: Final = Aim()
"""A fault that takes no target."""


@dataclass(frozen=True, slots=True)
class FaultSpec:
    """One fault. ``describe``: the words of one of its windows, with ``{when}`` (from
    ... to ...) and any of ``{processes}``, ``{nodes}``, ``{jumps}`` (clock offsets) and
    ``{fault}``, and ``effects`` what the checkers may explain a violation by (from
    ``checkers.windows.EFFECTS``: it freezes a client, cuts servers off, crashes a server,
    moves a clock); ``built_by``: another fault whose nemesis also
    handles this one's operations when both are asked for (loss rides on partition's
    iptables)."""

    kind: FaultKind
    """Its name and what it aims at (``core.faults``): the fault's behaviour, this spec, is
    registered against it."""
    help: str
    build: Builder
    describe: str
    needs: frozenset[Ability] = frozenset()
    effects: frozenset[str] = frozenset()
    aim: Aim = NO_AIM
    start_value: StartValue = aim_value
    built_by: str | None = None
    options: tuple[str, ...] = ()
    """The run options that shape it (``RunOptions`` fields), shown with it in reports."""
    packages: tuple[str, ...] = ()
    """The Debian/Ubuntu packages (apt names) the machine running the harness needs for
    it, beyond the harness itself: what a CI job installs before a suite that asks for the
    fault (``harness.host_packages``; ``tests/unit/test_workflow_packages.py`` holds the
    workflows to it)."""
    timing: Timing = takes_turns
    freezes: Freeze = freezes_nothing
    check: Check = no_check
    adapt: Adapt = keeps_defaults

    @property
    def name(self) -> str:
        """Its kind's name: ``--nemesis``'s word for it."""
        return self.kind.name

    @property
    def in_clients(self) -> bool:
        """Whether it acts on the clients' own processes (a signal to one, their clock
        through libfaketime; its kind says so): a run with it keeps each client in a
        worker process (``harness.client_mode``)."""
        return self.kind.client

    @property
    def start(self) -> str:
        """The operation that starts the fault."""
        return f"start-{self.name}"

    @property
    def stop(self) -> str:
        """The operation that stops it (and heals what it did)."""
        return f"stop-{self.name}"

    def facts(self) -> dict[str, Any]:
        """What test.json records of the fault for the checkers (``checkers.windows``)."""
        return {
            "start": self.start,
            "stop": self.stop,
            "describe": self.describe,
            "effects": sorted(self.effects),
        }
