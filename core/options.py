"""Run options: everything a run can be told, with its defaults, recorded in test.json.

The defaults reproduce the classic scenario of the domain on the default target (the
built-in ``sim``, first in ``clusters.target_registry``) and workload (the lock, first in
``workloads.workload_registry``): a lock with lease TTL 10 s and keepalive every 3 s
(``workloads.common.lock_options``), its holder paused at 12 s for 14 s, fencing on at
the protected resource.

A run's options are one frozen value made of typed records: the run itself
(``RunOptions``), one record each (``core.option_records``) for its clients, its faults,
where its cluster runs and the SSH hosts, and the workloads' own records, handed in by
their registry (``hand_in``). Outside,
they are one flat table: every option has one name (a suite
file's key, the command line's argparse dest, test.json's key: ``FIELDS``), so the same
options give the same run from the command line and from a suite.

This module and its records are the one place for every default of the run's own
options, the workloads' records for theirs; the ranges are in ``core.option_checks`` and
the records' fields.
The defaults that depend on the workload and its faults are decided by the application
layer from their registry entries (``harness.validate.decide``, for the command line and
suite files alike): the workload when none is named, its fault when none is named, and
the operation timeout when none is given (it follows the work of a workload whose clients
hold something, ``Hold``, and what the faults asked for freeze of it, see
``needed_op_timeout``; test.json says why). This module names no workload and no fault:
what a fault does to the rules comes in as ``FaultRules``, what a holder's op may take as
``Hold``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final, TypeVar

from core.option_checks import (
    NUMBERS,
    OptionError,
    check_name,
    check_number,
    parse_faults,
    safe_word,
)
from core.option_records import (
    RECORDS,
    BackendOptions,
    ClientOptions,
    FaultOptions,
    SshOptions,
)
from core.paths import check_path

R = TypeVar("R")
DEFAULT_OP_TIMEOUT: Final = 10.0
FOLLOW: Final = 0.0
"""``op_timeout`` not asked for (no asked value can be 0): it follows the pause and work."""
DERIVED: Final = ("op_timeout_given", "op_timeout_reason", "given", "adapted")
"""Fields the options decide themselves: never set from a suite or the command line."""
OP_TIMEOUT_MARGIN: Final = 5.0
"""Seconds an automatic op timeout leaves beyond the longest an op may legitimately take."""
FLAGS: Final = {"sim_bugs": "--sim-bug", "ssh_strict": "--ssh-no-strict", "ssh_hosts": "--nodes"}
"""The options whose command-line flag is not their name with dashes (``flag_of``)."""
PATHS: Final = ("out_dir", "ssh_key", "ssh_known_hosts", "ssh_debs")
"""The options that name a file or folder: bounded as paths (``core.paths``)."""
OLD_EXTRA: Final = "extra"
"""A table older suites and test.json files held some options in (``accept_unavailable``,
``clock_delta``): its keys are read as options of their own."""


@dataclass(frozen=True, slots=True)
class FaultRules:
    """What the faults asked for do to the options' rules, from their registry entries
    (``nemesis.fault_registry.rules_of``): ``freeze`` seconds one may freeze a holder in the
    middle of its work (``freeze_why`` in words, empty: none does), the faults that take
    turns every ``nemesis_interval`` (``periodic``), each fault's own check of the
    options (``checks``: an OptionError when it cannot be scheduled) and how each fits
    its own defaults to the options given (``adapts``, ``core.option_defaults``)."""

    freeze: float = 0.0
    freeze_why: str = ""
    periodic: tuple[str, ...] = ()
    checks: tuple[Callable[[RunOptions], None], ...] = ()
    adapts: tuple[Callable[[RunOptions], RunOptions], ...] = ()


@dataclass(frozen=True, slots=True)
class Hold:
    """What one op of a workload whose clients hold something may legitimately take, from
    its options (``workloads.common.lock_options.LockOptions.hold``): ``work`` seconds of a
    critical section (which a fault freezing the holder lengthens) or ``wait`` seconds of
    an acquire."""

    work: float
    wait: float


@dataclass(frozen=True)
class RunOptions:
    """The configuration of one run, a value: build it from the flat table with
    ``RunOptions.of(...)`` or ``from_mapping`` (a suite's table: every value checked), then
    ``decide(...)`` and ``validate(...)`` with its workload's facts (what
    ``harness.validate.check_run`` does); a change is a new value (``with_``). An
    ``op_timeout`` left at its default follows the pause and the work (``op_timeout_given``
    says whether it was asked for). ``to_dict`` gives the flat table back (test.json)."""

    target: str = ""
    """The target's name (``clusters.target_registry``); empty: the registry's default, filled in
    when the run is checked (``harness.validate.check_run``) or started."""
    workload: str = ""
    """The workload's name (``workloads.workload_registry``); empty: the registry's default, filled
    in when the run is checked or started (``harness.validate.decide``)."""
    concurrency: int = 3
    rate: float | None = None
    min_rate: float | None = None
    """The load floor: a run whose client operations completed at fewer per second is
    unknown, not valid (``checkers.load``); None: no floor."""
    time_limit: float = 35.0
    recovery_time: float = 3.0
    op_timeout: float = FOLLOW
    op_timeout_given: bool = False
    """Whether ``op_timeout`` was asked for; if not, it follows the pause and the work."""
    op_timeout_reason: str = ""
    seed: int | None = None
    out_dir: str = "results"
    name: str | None = None
    accept_unavailable: bool = False
    """Whether a run in which the service was never available counts as valid (said)."""
    stop_on_anomaly: bool = False
    """Whether the run ends at the first anomaly its live check finds (``harness.live_check``)."""
    clients: ClientOptions = field(default_factory=ClientOptions)
    faults: FaultOptions = field(default_factory=FaultOptions)
    backend: BackendOptions = field(default_factory=BackendOptions)
    ssh: SshOptions = field(default_factory=SshOptions)
    records: tuple[Any, ...] = ()
    """The workloads' own records (``hand_in``) whose values are not their defaults, in
    the order they were handed in; read one with ``record``."""
    given: tuple[str, ...] = field(default=(), compare=False)
    """The options the user wrote (the command line's, a suite's keys), by flat name: a
    refusal is only ever about one of them; the others are defaults, which adapt to them.
    Not compared, like ``adapted``: options that run the same are equal, however they
    were arrived at (a rerun's command line writes the adapted values out)."""
    adapted: tuple[str, ...] = field(default=(), compare=False)
    """The defaults that were adapted to the options given, one sentence each, and why
    (recorded in test.json, like ``op_timeout_reason``)."""

    def __post_init__(self) -> None:
        if not self.op_timeout_reason:  # built afresh, not copied from decided options
            given = self.op_timeout != FOLLOW
            object.__setattr__(self, "op_timeout_given", given)
            if given:
                object.__setattr__(self, "op_timeout_reason", "given")

    @classmethod
    def of(cls, **values: Any) -> RunOptions:
        """Options from flat names (``FIELDS``), each into its record; lists are kept as
        tuples; the names with a value are the options given (``given``). No value is
        checked: ``from_mapping`` checks a suite's."""
        named = tuple(sorted(k for k, v in values.items() if v is not None and k not in DERIVED))
        return replace(cls()._with(values), given=named)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RunOptions:
        """Options from a suite file's table: every raw number and kind checked, the
        fields the options decide refused; the whole is validated with its workload's facts
        by the caller (``harness.validate.check_run``)."""
        values = _unfold_extra(values)
        for name, value in values.items():
            if name in DERIVED:
                raise OptionError(
                    f"{name} is decided by the options, not set"
                    + (": give op_timeout" if name.startswith("op_timeout") else "")
                )
            check_number(name, value)
            _check_kind(name, value)
        if "nemesis" in values:
            values["nemesis"] = parse_faults(values["nemesis"])
        if values.get("name") is not None:
            check_name(values["name"])
        return cls.of(**values)

    def with_(self, **values: Any) -> RunOptions:
        """These options with some changed, by flat names (``FIELDS``)."""
        return self._with(values, keep_decided=True)

    def _with(self, values: Mapping[str, Any], keep_decided: bool = False) -> RunOptions:
        by_record: dict[str | type, dict[str, Any]] = {}
        top: dict[str, Any] = {}
        for name, value in values.items():
            where = FIELDS.get(name)
            if where is None:
                raise TypeError(f"RunOptions has no option {name!r}")
            record, attr, is_tuple = where
            value = tuple(value) if is_tuple and isinstance(value, list) else value
            (by_record.setdefault(record, {}) if record else top)[attr] = value
        handed = {type(r): r for r in self.records}
        for record, changes in by_record.items():
            if isinstance(record, str):
                top[record] = replace(getattr(self, record), **changes)
            else:
                handed[record] = replace(self.record(record), **changes)
        if any(isinstance(record, type) for record in by_record):
            top["records"] = tuple(r for t, r in _ordered(handed) if r != t())
        if not keep_decided and "op_timeout" in top:
            top.setdefault("op_timeout_reason", "")
        return replace(self, **top)

    def record(self, kind: type[R]) -> R:
        """The run's record of the type ``kind`` (a workload's own options record, as
        ``opts.record(HerdOptions)``): its values, or its defaults when none was given."""
        return next((r for r in self.records if type(r) is kind), None) or kind()

    def get(self, name: str) -> Any:
        """The value of the option ``name`` (a flat name, ``FIELDS``)."""
        record, attr, _ = FIELDS[name]
        if record is None:
            return getattr(self, attr)
        holder = getattr(self, record) if isinstance(record, str) else self.record(record)
        return getattr(holder, attr)

    def was_given(self, name: str) -> bool:
        """Whether the user wrote the option ``name`` (a flat name): only such a value is
        ever refused; a default adapts to the others."""
        return name in self.given

    def adapt(self, why: str, **values: Any) -> RunOptions:
        """These options with defaults the user did not write changed (flat names), and
        ``why`` recorded in ``adapted``."""
        return replace(self.with_(**values), adapted=(*self.adapted, why))

    def fault_names(self) -> list[str]:
        """The faults asked for (``none`` left out)."""
        return [n for n in self.faults.nemesis if n != "none"]

    def test_name(self) -> str:
        """The run's name (its folder under the output directory): ``name`` when given,
        else ``<target>-<workload>[-<lock>]-<faults>`` (``<lock>``: the value of each
        option that titles a run, ``TITLED``, when set) and, after the faults, a word for
        each choice that changes the outcome and is not at its default (``NAMED``):
        ``sim-lock-client-pause-nofence``, ``sim-cas-register-no-fault-bug-stale-read``."""
        if self.name:
            return self.name
        parts = [self.target, self.workload]
        parts += [safe_word(v) for v in map(self.get, TITLED) if isinstance(v, str) and v]
        faults = self.fault_names()
        parts.append("+".join(faults) if faults else "no-fault")
        defaults = RunOptions()
        for option, word in NAMED.items():
            value = self.get(option)
            if value != defaults.get(option):
                parts.append(_spelled(word, value))
        return "-".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The options as test.json records them: the flat table (tuples as lists)."""
        out = {}
        for name in FIELDS:
            value = self.get(name)
            out[name] = list(value) if isinstance(value, tuple) else value
        return out

    def needed_op_timeout(self, hold: Hold | None, rules: FaultRules) -> tuple[float, str]:
        """The longest a client op may legitimately take, and why: a critical section's
        work (plus what a fault freezes of it in the middle, ``rules``), or an acquire's
        wait, when the workload's clients hold something (``hold``, else None). An op
        timeout shorter than that abandons healthy workers and tests nothing."""
        if hold is None:  # reads, writes and cas: no work, no wait
            return 0.0, "no work time or acquire wait (a register's ops)"
        work = hold.work
        why = f"work time {hold.work:g} s"
        if rules.freeze_why:
            work += rules.freeze
            why = f"{rules.freeze_why} + {why}"
        if hold.wait > work:
            return hold.wait, f"acquire wait {hold.wait:g} s"
        return work, why

    def follow_op_timeout(self, hold: Hold | None, rules: FaultRules) -> RunOptions:
        """These options with the op timeout decided: given, or following the work
        (``needed_op_timeout``)."""
        if self.op_timeout_given:
            return replace(self, op_timeout_reason="given")
        need, why = self.needed_op_timeout(hold, rules)
        if need + OP_TIMEOUT_MARGIN > DEFAULT_OP_TIMEOUT:
            return replace(
                self,
                op_timeout=round(need + OP_TIMEOUT_MARGIN, 3),
                op_timeout_reason=f"not given: {why} + {OP_TIMEOUT_MARGIN:g} s margin, "
                "so that no healthy op times out",
            )
        return replace(
            self,
            op_timeout=DEFAULT_OP_TIMEOUT,
            op_timeout_reason=f"not given: the default ({why} fits in it)",
        )

    def validate(self, hold: Hold | None, rules: FaultRules) -> None:
        """Every option in its range and consistent with the others (one-line
        OptionError; each record handed in by its own ``check``), given what an op of the
        workload's clients may take when they hold something (``hold``, else None) and
        what the faults asked for do to the rules (``rules``)."""
        for name in NUMBERS:
            _check_kind(name, self.get(name))
            try:
                check_number(name, self.get(name))
            except OptionError:
                if self.was_given(name):
                    raise
                raise OptionError(self._fitted_out_of_range(name)) from None
        parse_faults(self.faults.nemesis)
        if self.name is not None:
            check_name(self.name)
        for name in PATHS:
            if self.get(name) is not None:
                check_path(self.get(name), flag_of(name))
        need, why = self.needed_op_timeout(hold, rules)
        if self.op_timeout_given and self.op_timeout <= need:
            raise OptionError(
                f"--op-timeout {self.op_timeout:g} is not longer than the {why} an op may "
                f"take: healthy ops would time out; give --op-timeout above {need:g} or "
                "leave it out (it then follows)"
            )
        for kind in HANDED:
            check = getattr(kind, "check", None)
            if check is not None:
                check(self.record(kind))
        self._validate_schedule(rules)
        if self.ssh.enabled and not self.ssh.hosts:
            raise OptionError("--ssh needs hosts: --nodes host1,host2,host3 or --nodes-file F")
        if self.ssh.hosts and not self.ssh.enabled:
            raise OptionError(
                "host names in --nodes (or --nodes-file) need --ssh; without it "
                "--nodes is the number of Docker nodes"
            )

    def _fitted_out_of_range(self, name: str) -> str:
        """The refusal of a default fitted out of its range by the options given (a
        time limit made longer than a day by the pause given): it names those."""
        bound = NUMBERS[name]
        given = [flag_of(g) for g in self.given if g in NUMBERS] or ["the options given"]
        return (
            f"{bound.flag} (not given) would be {self.get(name):g} to fit "
            f"{', '.join(given)}, beyond its range ({bound.low:g} to {bound.high:g} "
            f"{bound.unit}): give smaller values, or {bound.flag} too"
        )

    def _validate_schedule(self, rules: FaultRules) -> None:
        """Every fault asked for must start and stop inside the time limit: those at
        their own time by their own checks, those taking turns here."""
        for check in rules.checks:
            check(self)
        periodic = len(rules.periodic)
        if periodic:
            k = (2 * periodic - 1) / periodic  # the last fault stops k intervals after the first
            interval = self.faults.nemesis_interval
            if self.first_fault_at() + interval * k > self.time_limit:
                raise OptionError(
                    f"--nemesis-interval {interval:g} leaves no room to start and "
                    f"stop each fault inside --time-limit {self.time_limit:g}: use "
                    f"--nemesis-interval {0.8 * self.time_limit / k:.3g} or less, or "
                    f"--time-limit {1.25 * interval * k:.3g} or more"
                )

    def first_fault_at(self) -> float:
        """Seconds after the workload starts at which the periodic schedule's first fault
        starts: one interval, but no later than a fifth of the time limit, so that it falls
        well inside the run."""
        return min(self.faults.nemesis_interval, self.time_limit / 5)


def flag_of(name: str) -> str:
    """The command line's flag of the option ``name`` (a flat name), for messages."""
    return FLAGS.get(name, "--" + name.replace("_", "-"))


def _fields() -> Iterator[tuple[str, str | None, str, str]]:
    """(flat name, record or None, attribute, declared type) of every option."""
    for f in fields(RunOptions):
        if f.name == "records":  # the workloads' records: their fields come in with them
            continue
        if f.name in RECORDS:
            for g in fields(RECORDS[f.name]):
                yield g.metadata.get("flat", g.name), f.name, g.name, str(g.type)
        else:
            yield f.name, None, f.name, str(f.type)


_TYPES: Final = {name: declared for name, _, _, declared in _fields()}
FIELDS: Final[dict[str, tuple[str | type | None, str, bool]]] = {
    name: (record, attr, declared.startswith("tuple")) for name, record, attr, declared in _fields()
}
"""The options' flat names (a suite's keys, the command line's argparse dests, test.json's
keys) -> (the record holding it: the ``RunOptions`` attribute of one of the run's own, a
workload's record type handed in, or None for the run's own fields; its attribute there,
whether it is held as a tuple: a JSON list in test.json and suite files)."""
HANDED: Final[dict[type, dict[str, Any]]] = {}
"""The workloads' records handed in (``hand_in``), in order -> each field's metadata by its
flat name (``core.option_records.option``: help, choices, range...)."""


def hand_in(*records: type) -> None:
    """Take in workloads' options records (the workloads' registry hands in each
    workload's): their fields become options like the run's own, with flat names
    (``FIELDS``), ranges (``NUMBERS``, from their ``bound``) and the words a test name
    spells them with (``NAMED``, ``TITLED``); their rules, ``check`` and ``fit``, apply to
    every run (``core.option_records.option``). A record handed in again is left as it
    is; a flat name another option has is a TypeError (a programming error, found at
    import)."""
    for record in records:
        if record in HANDED:
            continue
        meta: dict[str, Any] = {}
        for g in fields(record):
            name = g.metadata.get("flat", g.name)
            if name in FIELDS:
                raise TypeError(f"{record.__name__}.{g.name}: the option {name!r} exists")
            FIELDS[name] = (record, g.name, str(g.type).startswith("tuple"))
            _TYPES[name] = str(g.type)
            if "bound" in g.metadata:
                NUMBERS[name] = g.metadata["bound"]
            if "named" in g.metadata:
                NAMED[name] = g.metadata["named"]
                for own in RUN_NAMED:  # the target's own are spelled after the workloads'
                    NAMED[own] = NAMED.pop(own)
            if g.metadata.get("title"):
                TITLED.append(name)
            meta[name] = dict(g.metadata)
        HANDED[record] = meta


def metadata_of(name: str) -> Mapping[str, Any]:
    """What a handed-in record says of its option ``name`` (empty: none, or a run's own)."""
    return next((m[name] for m in HANDED.values() if name in m), {})


def _ordered(records: Mapping[type, Any]) -> list[tuple[type, Any]]:
    """``records`` (type -> value) in the order their types were handed in."""
    return [(t, records[t]) for t in HANDED if t in records]


NAMED: Final[dict[str, str]] = {
    "persistence": "persist",
    "sim_bugs": "bug",
}
"""The options a test name spells when not at their default (option -> its word): the
choices, not numbers, that change what a run finds (the workloads' and faults' ``options``
name them, a workload's record's come in with it, ``named``, and are spelled first;
``tests/unit/test_run_names.py`` holds this table to those registries) and the
target's own (persistence, injected bugs). ``id_generator`` is not here: the target
decides it for every run, so spelling it would rename the runs that left it to the
default."""
RUN_NAMED: Final = tuple(NAMED)
"""The run's own options in ``NAMED`` (the target's), spelled after the workloads'."""
TITLED: Final[list[str]] = []
"""The options whose value, when set, names a run right after its workload, before its
faults (``test_name``: the lock implementation), from the records handed in (``title``)."""


def _spelled(word: str, value: Any) -> str:
    """An option's part of a test name: ``no<word>`` for a switch turned off, ``<word>``
    for one turned on, else ``<word>-<value>`` (several values joined by ``+``)."""
    if isinstance(value, bool):
        return word if value else f"no{word}"
    if isinstance(value, tuple):
        value = "+".join(map(str, value))
    return f"{word}-{value}"


def _unfold_extra(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with an older file's ``extra`` table read as the options it holds."""
    values = dict(values)
    extra = values.pop(OLD_EXTRA, None)
    if extra is None:
        return values
    if not isinstance(extra, dict):
        raise OptionError(f"extra must be a table of options, not {extra!r:.60}")
    unknown = sorted(k for k in extra if k not in FIELDS)
    if unknown:
        raise OptionError(
            f"unknown option {unknown[0]!r} in extra: give it as an option of its own"
        )
    return {**extra, **values}


def _check_kind(name: str, value: Any) -> None:
    """A suite value of the type its field declares (``str``, ``bool``, ``list[str]``;
    numbers are ``NUMBERS``'), None only where the field is optional."""
    declared = _TYPES.get(name)
    if declared is None:
        return  # unknown fields are the caller's error
    if value is None:
        if "None" not in declared:
            raise OptionError(f"{name} cannot be empty (null)")
        return
    if name in NUMBERS or name == "nemesis":
        return  # checked apart
    if FIELDS[name][2]:
        declared = "list[str]"  # as a suite file and test.json give it
    kinds: list[tuple[str, type]] = [("bool", bool), ("list", list), ("str", str)]
    kind = next((k for word, k in kinds if declared.startswith(word)), None)
    ok = kind is None or isinstance(value, kind)
    if ok and isinstance(value, list):
        ok = all(isinstance(v, str) for v in value)
    if not ok:
        raise OptionError(f"{name} must be {declared.replace(' | None', '')}, not {value!r:.60}")


def check_recorded(values: Any) -> None:
    """A recorded options table (test.json's ``options``) whose known options have their
    kinds: a table, each number a number or null where the option is optional, each
    other value of its declared type (an older file's ``extra`` table read as its
    options); ranges are not checked: a run recorded what it ran. One-line OptionError."""
    if not isinstance(values, dict):
        raise OptionError(f"must be a table of options, not {values!r:.40}")
    extra = values.get(OLD_EXTRA, {})
    if not isinstance(extra, dict):
        raise OptionError(f"extra must be a table of options, not {extra!r:.40}")
    for name, value in [*extra.items(), *values.items()]:
        if name in NUMBERS and value is not None:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise OptionError(f"{name} must be a number, not {value!r:.40}")
        elif name in FIELDS and name != "nemesis":
            _check_kind(name, value)
        elif name == "nemesis" and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise OptionError(f"nemesis must be a list of fault names, not {value!r:.40}")
