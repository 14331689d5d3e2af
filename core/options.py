"""Run options: everything a run can be told, with its defaults, recorded in test.json.

The defaults reproduce the classic scenario of the domain on the default target (the
built-in ``sim``, first in ``clusters.registry``):
a lock with lease TTL 10 s and keepalive every 3 s, its holder paused at 12 s for 14 s,
fencing on at the protected resource.

This module is the one place for every default and every range: the command line and
suite files build their ``RunOptions`` through it, so the same options give the same run.
The defaults that depend on the workload and its faults are decided by the application
layer from their registry entries (``harness.validate.decide``, for the command line and
suite files alike): the workload when none is named, its fault when none is named, and
the operation timeout when none is given (it follows the work of a workload whose clients
hold something and what the faults asked for freeze of it, see ``needed_op_timeout``;
test.json says why). This module names no workload and no fault: what a fault does to
the rules comes in as ``FaultRules``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Final

from core.errors import HarnessError

DEFAULT_OP_TIMEOUT: Final = 10.0
FOLLOW: Final = 0.0
"""``op_timeout`` not asked for (no asked value can be 0): it follows the pause and work."""
DERIVED: Final = ("op_timeout_given", "op_timeout_reason")
"""Fields the options decide themselves: never set from a suite or the command line."""
OP_TIMEOUT_MARGIN: Final = 5.0
"""Seconds an automatic op timeout leaves beyond the longest an op may legitimately take."""
NAME_MAX: Final = 100


class OptionError(HarnessError, ValueError):
    """A bad option; the message says what is wrong and what to do."""


@dataclass(frozen=True, slots=True)
class Bound:
    """The range of a number option: ``low`` (exclusive when ``open_low``) to ``high``."""

    flag: str
    low: float
    high: float
    open_low: bool = False
    integer: bool = False
    unit: str = "seconds"

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
        if not low_ok or value > self.high:
            low = f"more than {_num(self.low)}" if self.open_low else f"at least {_num(self.low)}"
            raise OptionError(
                f"{self.flag} must be {low} and at most {_num(self.high)} "
                f"({self.unit}), not {value!r}"
            )


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


DAY: Final = 86_400.0
NUMBERS: Final[dict[str, Bound]] = {
    "concurrency": Bound("--concurrency", 1, 1000, integer=True, unit="client processes"),
    "rate": Bound("--rate", 0, 1e6, open_low=True, unit="operations per second"),
    "time_limit": Bound("--time-limit", 0, DAY, open_low=True),
    "recovery_time": Bound("--recovery-time", 0, DAY),
    "op_timeout": Bound("--op-timeout", 0, DAY, open_low=True),
    "seed": Bound("--seed", 0, 2**63 - 1, integer=True, unit="integers"),
    "nemesis_interval": Bound("--nemesis-interval", 0, DAY, open_low=True),
    "pause_at": Bound("--pause-at", 0, DAY),
    "pause_for": Bound("--pause-for", 0, DAY, open_low=True),
    "lease_ttl": Bound("--lease-ttl", 0, DAY, open_low=True),
    "keepalive": Bound("--keepalive", 0, DAY, open_low=True),
    "work_time": Bound("--work-time", 0, DAY),
    "acquire_wait": Bound("--acquire-wait", 0, DAY),
    "locks": Bound("--locks", 1, 1000, integer=True, unit="locks"),
    "keys": Bound("--keys", 1, 1_000_000, integer=True, unit="keys"),
    "nodes": Bound("--nodes", 1, 99, integer=True, unit="nodes"),
    "client_clock_delta": Bound("--client-clock-delta", -3600, 3600),
    "ssh_port": Bound("--ssh-port", 1, 65535, integer=True, unit="port numbers"),
}
"""Every number option and its range; None is allowed where the field is optional."""


def check_number(name: str, value: Any) -> None:
    """Check the raw value of a number option (from the command line or a suite file)."""
    if value is not None and name in NUMBERS:
        NUMBERS[name].check(value)


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


@dataclass(frozen=True, slots=True)
class FaultRules:
    """What the faults asked for do to the options' rules, from their registry entries
    (``nemesis.registry.rules_of``): ``freeze`` seconds one may freeze a holder in the
    middle of its work (``freeze_why`` in words, empty: none does), the faults that take
    turns every ``nemesis_interval`` (``periodic``), and each fault's own check of the
    options (``checks``: an OptionError when it cannot be scheduled)."""

    freeze: float = 0.0
    freeze_why: str = ""
    periodic: tuple[str, ...] = ()
    checks: tuple[Callable[[RunOptions], None], ...] = ()


@dataclass(frozen=True)
class RunOptions:
    """The configuration of one run, a value: build it with ``RunOptions(...)`` or
    ``from_mapping``, then ``decide(...)`` (which returns the decided options) and
    ``validate(...)`` with its workload's facts (what ``harness.validate.check_run``
    does); a change is a new value (``dataclasses.replace``). ``nemesis=()`` means the
    workload's default fault; an ``op_timeout`` left at its default follows the pause and
    the work (``op_timeout_given`` says whether it was asked for). Lists given for the
    tuple fields are kept as tuples; ``to_dict`` gives them back as lists (test.json)."""

    target: str = ""
    """The target's name (``clusters.registry``); empty: the registry's default, filled in
    when the run is checked (``harness.validate.check_run``) or started."""
    workload: str = ""
    """The workload's name (``workloads.registry``); empty: the registry's default, filled
    in when the run is checked or started (``harness.validate.decide``)."""
    lock: str | None = None
    nemesis: tuple[str, ...] = ()
    nemesis_interval: float = 10.0
    nemesis_target: str | None = None
    """None: each fault's own default; else one value for every fault or ``fault=value``
    pairs separated by ``;`` (``nemesis.targets``)."""
    concurrency: int = 3
    rate: float | None = None
    time_limit: float = 35.0
    recovery_time: float = 3.0
    op_timeout: float = FOLLOW
    op_timeout_given: bool = False
    """Whether ``op_timeout`` was asked for; if not, it follows the pause and the work."""
    op_timeout_reason: str = ""
    seed: int | None = None
    out_dir: str = "results"
    name: str | None = None
    # Locks and leases.
    lease_ttl: float = 10.0
    keepalive: float = 3.0
    work_time: float = 0.3
    acquire_wait: float = 5.0
    fencing: bool = True
    locks: int = 1
    pause_at: float | None = 12.0
    pause_for: float = 14.0
    # CAS register.
    keys: int = 3
    read_mode: str | None = None
    # unique-ids workload (workloads/unique_ids_workload.py) and its client-clock fault.
    id_generator: str | None = None
    """The id generator (a target's ``id_generators``); None: the target's first."""
    snowflake_defence: str = "none"
    snowflake_workers: str = "fixed"
    client_clock_delta: float = -5.0
    # Targets.
    nodes: int | None = None
    image: str | None = None
    persistence: str | None = None
    sim_bugs: tuple[str, ...] = ()
    # Real hosts over SSH (docs/ssh.md): with ssh, the cluster runs on ssh_hosts.
    ssh: bool = False
    ssh_hosts: tuple[str, ...] = ()
    ssh_user: str | None = None
    ssh_key: str | None = None
    ssh_port: int = 22
    ssh_strict: bool = True
    ssh_known_hosts: str | None = None
    ssh_install: str = "auto"
    ssh_keep_packages: bool = False
    ssh_debs: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in _TUPLES:
            value = getattr(self, name)
            if isinstance(value, list):
                object.__setattr__(self, name, tuple(value))
        if not self.op_timeout_reason:  # built afresh, not copied from decided options
            given = self.op_timeout != FOLLOW
            object.__setattr__(self, "op_timeout_given", given)
            if given:
                object.__setattr__(self, "op_timeout_reason", "given")

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> RunOptions:
        """Options from a suite file's table: every raw number and kind checked, the
        fields the options decide refused; the whole is validated with its workload's facts
        by the caller (``harness.validate.check_run``)."""
        for name, value in values.items():
            if name in DERIVED:
                raise OptionError(f"{name} is decided by the options, not set: give op_timeout")
            check_number(name, value)
            _check_kind(name, value)
        values = dict(values)
        if "nemesis" in values:
            values["nemesis"] = parse_faults(values["nemesis"])
        if values.get("name") is not None:
            check_name(values["name"])
        return cls(**values)

    def test_name(self) -> str:
        if self.name:
            return self.name
        parts = [self.target, self.workload]
        if self.lock:
            parts.append(self.lock)
        faults = [n for n in self.nemesis if n != "none"]
        parts.append("+".join(faults) if faults else "no-fault")
        return "-".join(parts)

    def faults(self) -> list[str]:
        """The faults asked for (``none`` left out)."""
        return [n for n in self.nemesis if n != "none"]

    def to_dict(self) -> dict[str, Any]:
        """The options as test.json records them (the tuple fields as lists)."""
        return {k: list(v) if k in _TUPLES else v for k, v in asdict(self).items()}

    def needed_op_timeout(self, holds: bool, rules: FaultRules) -> tuple[float, str]:
        """The longest a client op may legitimately take, and why: a critical section's
        work (plus what a fault freezes of it in the middle, ``rules``), or an acquire's
        wait, when the workload's clients hold something (``holds``). An op timeout
        shorter than that abandons healthy workers and tests nothing."""
        if not holds:  # reads, writes and cas: no work, no wait
            return 0.0, "no work time or acquire wait (a register's ops)"
        work = self.work_time
        why = f"work time {self.work_time:g} s"
        if rules.freeze_why:
            work += rules.freeze
            why = f"{rules.freeze_why} + {why}"
        if self.acquire_wait > work:
            return self.acquire_wait, f"acquire wait {self.acquire_wait:g} s"
        return work, why

    def follow_op_timeout(self, holds: bool, rules: FaultRules) -> RunOptions:
        """These options with the op timeout decided: given, or following the work
        (``needed_op_timeout``)."""
        if self.op_timeout_given:
            return replace(self, op_timeout_reason="given")
        need, why = self.needed_op_timeout(holds, rules)
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

    def validate(self, holds: bool, rules: FaultRules) -> None:
        """Every option in its range and consistent with the others (one-line
        OptionError), given whether the workload's clients hold something (``holds``) and
        what the faults asked for do to the rules (``rules``)."""
        for name in NUMBERS:
            _check_kind(name, getattr(self, name))
            check_number(name, getattr(self, name))
        parse_faults(self.nemesis)
        if self.name is not None:
            check_name(self.name)
        need, why = self.needed_op_timeout(holds, rules)
        if self.op_timeout_given and self.op_timeout <= need:
            raise OptionError(
                f"--op-timeout {self.op_timeout:g} is not longer than the {why} an op may "
                f"take: healthy ops would time out; give --op-timeout above {need:g} or "
                "leave it out (it then follows)"
            )
        if self.keepalive >= self.lease_ttl:
            raise OptionError(
                f"--keepalive {self.keepalive} is not shorter than --lease-ttl {self.lease_ttl}:"
                " the lease would expire between keepalives; use a shorter keepalive"
            )
        self._validate_schedule(rules)
        if self.ssh and not self.ssh_hosts:
            raise OptionError("--ssh needs hosts: --nodes host1,host2,host3 or --nodes-file F")
        if self.ssh_hosts and not self.ssh:
            raise OptionError(
                "host names in --nodes (or --nodes-file) need --ssh; without it "
                "--nodes is the number of Docker nodes"
            )

    def _validate_schedule(self, rules: FaultRules) -> None:
        """Every fault asked for must start and stop inside the time limit: those at
        their own time by their own checks, those taking turns here."""
        for check in rules.checks:
            check(self)
        periodic = len(rules.periodic)
        if periodic:
            k = (2 * periodic - 1) / periodic  # the last fault stops k intervals after the first
            if self.first_fault_at() + self.nemesis_interval * k > self.time_limit:
                raise OptionError(
                    f"--nemesis-interval {self.nemesis_interval:g} leaves no room to start and "
                    f"stop each fault inside --time-limit {self.time_limit:g}: use "
                    f"--nemesis-interval {0.8 * self.time_limit / k:.3g} or less, or "
                    f"--time-limit {1.25 * self.nemesis_interval * k:.3g} or more"
                )

    def first_fault_at(self) -> float:
        """Seconds after the workload starts at which the periodic schedule's first fault
        starts: one interval, but no later than a fifth of the time limit, so that it falls
        well inside the run."""
        return min(self.nemesis_interval, self.time_limit / 5)


FIELDS: Final = frozenset(f.name for f in fields(RunOptions))
"""The options' names: a suite's keys and the command line's argparse dests."""
_TUPLES: Final = frozenset(f.name for f in fields(RunOptions) if str(f.type).startswith("tuple"))
"""The fields held as tuples (JSON lists in test.json and suite files)."""


def _check_kind(name: str, value: Any) -> None:
    """A suite value of the type its field declares (``str``, ``bool``, ``list[str]``,
    ``dict``; numbers are ``NUMBERS``'), None only where the field is optional."""
    declared = {f.name: str(f.type) for f in fields(RunOptions)}.get(name)
    if declared is None:
        return  # unknown fields are the caller's error
    if value is None:
        if "None" not in declared:
            raise OptionError(f"{name} cannot be empty (null)")
        return
    if name in NUMBERS or name == "nemesis":
        return  # checked apart
    if name in _TUPLES:
        declared = "list[str]"  # as a suite file and test.json give it
    kinds: list[tuple[str, type]] = [("bool", bool), ("list", list), ("dict", dict), ("str", str)]
    kind = next((k for word, k in kinds if declared.startswith(word)), None)
    ok = kind is None or isinstance(value, kind)
    if ok and isinstance(value, list):
        ok = all(isinstance(v, str) for v in value)
    if not ok:
        raise OptionError(f"{name} must be {declared.replace(' | None', '')}, not {value!r:.60}")


def parse_faults(value: Any, names: Sequence[str] = ()) -> tuple[str, ...]:
    """The ``--nemesis`` list: at least one name, no repeats, ``none`` alone. The fault
    names are the application's (``nemesis.registry``): given as ``names``, each must be
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
        raise OptionError(
            f"unknown {flag.lstrip('-')} {value!r} for {flag}: choose from "
            f"{', '.join(choices)}" + (f" {hint}" if hint else "")
        )
