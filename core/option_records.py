"""The typed records a run's options are made of (``core.options.RunOptions`` holds one
of each): the clients, the faults, the backend and the SSH hosts; each workload's own
record (the lock's and lease's of the workloads that hold something among them:
``workloads.common.lock_options``) is declared beside the workload with ``option`` fields
and handed in by its registry. Each
field has one flat name (its own, or ``flat("...")`` where that would say less or clash):
a suite's key, the command line's argparse dest, test.json's key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from core.option_checks import Bound


def flat(name: str) -> Any:
    """A record field's metadata naming it ``name`` in the flat table (where its own name
    would say less, or clash)."""
    return {"flat": name}


@dataclass(frozen=True, slots=True)
class FaultOptions:
    """The faults asked for and their schedule. ``nemesis=()`` means the workload's
    default fault; ``pause_at`` None (or 0) means the client pause takes turns with the
    other faults instead of happening once at a fixed time."""

    nemesis: tuple[str, ...] = ()
    nemesis_interval: float = 10.0
    nemesis_target: str | None = None
    """None: each fault's own default; else one value for every fault or ``fault=value``
    pairs separated by ``;`` (``nemesis.targets``)."""
    pause_at: float | None = 12.0
    pause_for: float = 14.0
    clock_delta: float | None = None
    """Seconds the clock fault moves a clock by; None: its own default."""
    client_clock_delta: float = -5.0
    """Seconds the client-clock fault steps the clients' wall clock by (negative: back)."""

    def __post_init__(self) -> None:
        if self.pause_at == 0:  # the command line's and suites' spelling of "no fixed pause"
            object.__setattr__(self, "pause_at", None)


@dataclass(frozen=True, slots=True)
class SshOptions:
    """Real hosts over SSH (docs/ssh.md): when ``enabled``, the cluster runs on ``hosts``."""

    enabled: bool = field(default=False, metadata=flat("ssh"))
    hosts: tuple[str, ...] = field(default=(), metadata=flat("ssh_hosts"))
    user: str | None = field(default=None, metadata=flat("ssh_user"))
    key: str | None = field(default=None, metadata=flat("ssh_key"))
    port: int = field(default=22, metadata=flat("ssh_port"))
    strict: bool = field(default=True, metadata=flat("ssh_strict"))
    known_hosts: str | None = field(default=None, metadata=flat("ssh_known_hosts"))
    install: str = field(default="auto", metadata=flat("ssh_install"))
    keep_packages: bool = field(default=False, metadata=flat("ssh_keep_packages"))
    debs: str | None = field(default=None, metadata=flat("ssh_debs"))


@dataclass(frozen=True, slots=True)
class BackendOptions:
    """The target's cluster: its size, image, persistence and injected bugs."""

    nodes: int | None = None
    image: str | None = None
    persistence: str | None = None
    server_version: str | None = None
    """The Debian release the server comes from (``--server-version``); None: the target's
    default (trixie)."""
    sim_bugs: tuple[str, ...] = ()


CLIENT_MODES: Final = ("auto", "process", "thread")
"""How a run's clients run (``--clients``): each in a worker process of its own, or in
threads of the harness process; ``auto`` decides (``harness.client_mode``)."""


@dataclass(frozen=True, slots=True)
class ClientOptions:
    """How the run's clients run: ``mode`` one of ``CLIENT_MODES``."""

    mode: str = field(default="auto", metadata=flat("clients"))


RECORDS: Final[dict[str, type]] = {
    "clients": ClientOptions,
    "faults": FaultOptions,
    "backend": BackendOptions,
    "ssh": SshOptions,
}
"""The run's own records: ``RunOptions`` attribute -> its type. A workload's options are
a record of its own, handed in by the workloads' registry (``core.options.hand_in``)."""


def option(
    default: Any,
    help: str,
    *,
    flat: str | None = None,
    choices: tuple[str, ...] = (),
    bound: Bound | None = None,
    named: str | None = None,
    shares: str | None = None,
    variant: bool = False,
    title: bool = False,
    common: bool = False,
    metavar: str | None = None,
) -> Any:
    """A field of a workload's options record, with what the rest of the harness reads of
    it: its ``help`` (its flag's), its flat name when not its own (``flat``), its
    ``choices``, the range of a number (``bound``), the word a test name spells it with
    when not at its default (``named``), the role of the other clients when it takes some
    of ``--concurrency`` (``shares``: their default adapts to it), whether it picks a
    target's variant of the workload (``variant``: the choices are the target's), whether
    its value, when set, names the run right after its workload (``title``: the lock
    implementation), whether its flag is among the common ones of ``run --help``
    (``common``) and the word its flag's value is shown as (``metavar``). A boolean
    field's flag takes ``on`` or ``off``.

    A record may also bring rules of its own, as methods: ``check(self)`` (a one-line
    OptionError for values it cannot run), ``fit(self, opts) -> opts`` (its defaults not
    given fitted to the options given, ``core.option_defaults``)."""
    meta: dict[str, Any] = {
        "help": help,
        "choices": choices,
        "variant": variant,
        "title": title,
        "common": common,
    }
    optional = (("flat", flat), ("bound", bound), ("named", named), ("shares", shares))
    for key, value in (*optional, ("metavar", metavar)):
        if value is not None:
            meta[key] = value
    return field(default=default, metadata=meta)
