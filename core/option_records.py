"""The typed records a run's options are made of (``core.options.RunOptions`` holds one
of each): the faults, the lock, the register, each workload's own, the backend and the SSH
hosts. Each field has one flat name (its own, or ``flat("...")`` where that would say less
or clash): a suite's key, the command line's argparse dest, test.json's key."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final


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

    def __post_init__(self) -> None:
        if self.pause_at == 0:  # the command line's and suites' spelling of "no fixed pause"
            object.__setattr__(self, "pause_at", None)


@dataclass(frozen=True, slots=True)
class LockOptions:
    """The lock (and lease) of a workload whose clients hold something."""

    impl: str | None = field(default=None, metadata=flat("lock"))
    """The lock implementation (``--lock``); None: the target's default."""
    lease_ttl: float = 10.0
    keepalive: float = 3.0
    work_time: float = 0.3
    acquire_wait: float = 5.0
    fencing: bool = True
    locks: int = 1
    holder_check: bool = True
    """Whether a holder checks that its lease or session is not known to be lost before
    it writes, as a careful application does; off: it writes on the belief that it still
    holds (``workloads.critical``), the naive application whose worst case failovers,
    session moves and lost connections show."""


@dataclass(frozen=True, slots=True)
class RegisterOptions:
    """The CAS registers of the cas-register workload."""

    keys: int = 3
    read_mode: str | None = None


@dataclass(frozen=True, slots=True)
class DiscoveryOptions:
    """Service registration: the first ``instances`` client processes register
    themselves, the others list the live instances (read as ``opts.discovery.instances``)."""

    instances: int = 2


@dataclass(frozen=True, slots=True)
class HerdOptions:
    """The waiters of the herd workload (``workloads/herd_workload.py``): how they wait
    for the lock, ``naive`` (all watch it) or ``queue`` (each its predecessor)."""

    recipe: str = "naive"


@dataclass(frozen=True, slots=True)
class WatchOptions:
    """The watch workload (``workloads/watch_workload.py``): the first ``watchers`` client
    threads follow the keys (``--keys``, ``RegisterOptions.keys``), the others write them;
    ``mode`` says how a one-shot watch learns the value (``reread`` or ``payload``); a
    compaction every ``compact_every`` seconds (0: none) where the service keeps a history."""

    watchers: int = 2
    mode: str = field(default="reread", metadata=flat("watch_mode"))
    compact_every: float = 0.0


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
    sim_bugs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IdsOptions:
    """The unique-ids workload (``workloads/unique_ids_workload.py``) and the clients'
    clock fault (``nemesis/faults/client_clock.py``)."""

    generator: str | None = field(default=None, metadata=flat("id_generator"))
    """The id generator (a target's ``id_generators``); None: the target's first."""
    snowflake_defence: str = "none"
    snowflake_workers: str = "fixed"
    client_clock_delta: float = -5.0
    segment_size: int = 1000
    segment_prefetch: float = 0.1
    """Leaf-segment: the fraction of a range used when the next is taken."""


RECORDS: Final[dict[str, type]] = {
    "faults": FaultOptions,
    "lock": LockOptions,
    "register": RegisterOptions,
    "discovery": DiscoveryOptions,
    "herd": HerdOptions,
    "watches": WatchOptions,
    "backend": BackendOptions,
    "ssh": SshOptions,
    "ids": IdsOptions,
}
"""The run's records: ``RunOptions`` attribute -> its type."""
