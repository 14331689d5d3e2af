"""What a workload is: one frozen ``Workload`` value, written in its own package
(``workloads/lock/workload.py``, ``election/workload.py``) and listed once in
``workloads.workload_registry``. Its client lives apart (``workloads/lock/client.py``,
``election/client.py``, ``register/client.py``): worker processes import the client only,
not the checkers and generators a workload names.

A workload is target-independent: its operations (a client generator), whether it needs
the protected resource, whether its clients hold something while they work (a lock, a
leadership: the op timeout follows that work, and ``holder`` faults aim at the holder),
the fault a run of it gets when none is named, its checkers and what reports draw of its
runs (``workloads.section``). A target supplies only the clients (its backend of the
workload's client).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from checkers import guarded, stats
from checkers.record import Checker, RunRecord
from core import gen
from core.faults import CLIENT_PAUSE
from core.options import Hold, RunOptions
from workloads.common.lock_options import LockOptions
from workloads.cycles import guarded_cycle
from workloads.holders import WORKER, Holder
from workloads.overlap import FaultLength, cannot_overlap

ClientGenerator = Callable[[RunOptions, int], Any]
"""(options, seed) -> the clients' generator (``core.gen``), before any ``--rate``."""


@dataclass(frozen=True, slots=True)
class When:
    """A checker that runs only on the runs a recorded fact selects (``applies``)."""

    applies: Callable[[RunRecord], bool]
    checker: Checker


@dataclass(frozen=True, slots=True)
class Variant:
    """The run option that picks which of a target's variants of a workload runs (a lock
    implementation, an id generator, a read mode, a recipe: ``clusters.spec.Offer``)."""

    option: str
    """Its flat name (``lock``, ``id_generator``, ``read_mode``, ``recipe``); None as its
    value: the target's default, its first variant."""
    words: str
    """What one variant is called in a sentence: ``lock implementation``, ``read mode``."""
    decided: bool = False
    """Whether the target's default is written into the options when none is named (so
    test.json names the one that ran)."""
    own: str | None = None
    """``module:attribute`` of what takes the variants that are no target's own (the lock
    workload's libraries and locks of one's own: ``workloads.libraries.resolve.OwnLocks``);
    None: a target's variants are all there are."""

    @property
    def flag(self) -> str:
        return "--" + self.option.replace("_", "-")


@dataclass(frozen=True, slots=True)
class Workload:
    """One workload: see the module docstring."""

    name: str
    help: str
    """One line for ``--workload``'s help."""
    generator: ClientGenerator
    needs_resource: bool
    """Whether its clients write to the protected resource (started by the run)."""
    holds: bool
    """Whether its clients hold something and work while holding it (``hold``): then
    ``LockOptions`` is among its records."""
    default_fault: str
    """The fault of a run that names none (``none`` for no fault)."""
    checkers: tuple[Checker | When, ...]
    options: tuple[str, ...] = ()
    """The run options that shape its runs (``RunOptions`` fields), shown with it in
    reports; ``fencing`` among them: a run without fencing is told apart in comparisons."""
    model: str | None = None
    """The linearizability model of its histories (``harness check`` of a history file
    whose test.json names the workload); None: they are not checked as one."""
    check: Callable[[RunOptions], None] = field(default=lambda opts: None)
    """Its own rule on the options: an OptionError (one line) when it cannot run them."""
    recovery: ClientGenerator | None = None
    """Its clients' operations during the recovery time, once the time limit is over (the
    watch workload's watchers settle while nobody writes); None: ``generator`` goes on."""
    holder: Holder | None = None
    """Who its holder is (``workloads.holders``), what ``--nemesis-target holder`` aims
    at; None: it has none, and that target is refused."""
    warn: Callable[[RunOptions, Sequence[FaultLength]], list[str]] = field(
        default=lambda opts, faults: []
    )
    """What it says, one sentence each, of settings that cannot produce what its checkers
    look for under the run's faults (``workloads.overlap``), said at the start and in
    test.json; the run goes on."""
    variant: Variant | None = None
    """The option that picks one of a target's variants of it (``clusters.spec.Offer``);
    None: a target offers it with one client."""
    records: tuple[type, ...] = ()
    """Its own options records (``core.option_records.option`` fields), which the
    registry hands in (``core.options.hand_in``): read as ``opts.record(HerdOptions)``,
    their flags built from their fields and shown under its name in ``run --help``."""
    sections: tuple[str, ...] = ()
    """``module:attribute`` of each section its runs' reports draw (a
    ``workloads.section.Section``, in order), imported when a report draws one."""
    across: str | None = None
    """``module:attribute`` of what it shows over many runs (a ``workloads.section.Across``:
    ``harness compare``'s tables); None: nothing."""

    def __post_init__(self) -> None:
        if self.holds and LockOptions not in self.records:
            raise TypeError(
                f"workload {self.name}: its clients hold something: add LockOptions to its "
                "records (workloads.common.lock_options)"
            )

    def client_generator(self, opts: RunOptions, seed: int) -> Any:
        """The clients' operations, at ``opts.rate`` when it is set."""
        g = self.generator(opts, seed)
        return gen.rate(opts.rate, g) if opts.rate else g

    def recovery_generator(self, opts: RunOptions, seed: int) -> Any:
        """Its clients' operations during the recovery time; None: the same as before."""
        return None if self.recovery is None else self.recovery(opts, seed)

    def hold(self, opts: RunOptions) -> Hold | None:
        """What one of its clients' ops may legitimately take under ``opts`` when they hold
        something (the op timeout follows it), else None."""
        return opts.record(LockOptions).hold() if self.holds else None

    def checks(self, record: RunRecord) -> list[Checker]:
        """The checkers of one of its runs: those whose recorded fact applies."""
        return [
            c.checker if isinstance(c, When) else c
            for c in self.checkers
            if not isinstance(c, When) or c.applies(record)
        ]


def holding(
    name: str,
    help: str,
    generator: ClientGenerator,
    checkers: tuple[Checker | When, ...],
    options: tuple[str, ...],
    holder: Holder,
    model: str | None = None,
    variant: Variant | None = None,
    records: tuple[type, ...] = (),
    sections: tuple[str, ...] = (),
    across: str | None = None,
) -> Workload:
    """A workload whose clients hold something (a lock, a leadership: ``holder``), work
    while holding it and write to the protected resource with its fencing number; its fault
    when none is named is the classic scenario's, a client pause of the holder; it warns of
    faults too short or too long to make two holders overlap (``workloads.overlap``)."""
    return Workload(
        name,
        help,
        generator,
        True,
        True,
        CLIENT_PAUSE.name,
        checkers,
        options,
        model,
        holder=holder,
        warn=cannot_overlap,
        variant=variant,
        records=(LockOptions, *records),
        sections=sections,
        across=across,
    )


def lock_free(name: str, help: str, prefix: str) -> Workload:
    """A lock-free workload (``workloads.guarded``): the lock workload's protected work on
    names ``<prefix>-N``, each write guarded by the data instead of a lock. Its clients
    work on the basis they read, as holders do (client pauses aim at them); no resource,
    no fencing; ``checkers.guarded`` judges it."""
    return Workload(
        name,
        help,
        lambda opts, seed: guarded_cycle(prefix, opts.record(LockOptions).locks),
        needs_resource=False,
        holds=True,
        default_fault=CLIENT_PAUSE.name,
        checkers=(guarded.check_record, stats.check_record),
        options=("work_time", "locks"),
        holder=WORKER,
        records=(LockOptions,),
    )
