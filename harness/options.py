"""Run options: everything a run can be told, with its defaults, recorded in test.json.

The defaults reproduce the classic scenario of the domain on the built-in ``sim`` target:
a lock with lease TTL 10 s and keepalive every 3 s, its holder paused at 12 s for 14 s,
fencing on at the protected resource.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from harness.errors import HarnessError

WORKLOADS = ("lock", "cas-register", "election")
NEMESES = ("none", "client-pause", "pause", "partition", "loss", "kill", "clock")


class OptionError(HarnessError, ValueError):
    """A bad option; the message says what is wrong and what to do."""


@dataclass
class RunOptions:
    """The configuration of one run."""

    target: str = "sim"
    workload: str = "lock"
    lock: str | None = None
    nemesis: list[str] = field(default_factory=lambda: ["client-pause"])
    nemesis_interval: float = 10.0
    nemesis_target: str = "one"
    concurrency: int = 3
    rate: float | None = None
    time_limit: float = 35.0
    recovery_time: float = 3.0
    op_timeout: float = 10.0
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
    # Targets.
    nodes: int | None = None
    image: str | None = None
    persistence: str | None = None
    sim_bugs: list[str] = field(default_factory=list)
    # Real hosts over SSH (docs/ssh.md): with ssh, the cluster runs on ssh_hosts.
    ssh: bool = False
    ssh_hosts: list[str] = field(default_factory=list)
    ssh_user: str | None = None
    ssh_key: str | None = None
    ssh_port: int = 22
    ssh_strict: bool = True
    ssh_known_hosts: str | None = None
    ssh_install: str = "auto"
    ssh_keep_packages: bool = False
    ssh_debs: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def test_name(self) -> str:
        if self.name:
            return self.name
        parts = [self.target, self.workload]
        if self.lock:
            parts.append(self.lock)
        faults = [n for n in self.nemesis if n != "none"]
        parts.append("+".join(faults) if faults else "no-fault")
        return "-".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def validate(self) -> None:
        if self.workload not in WORKLOADS:
            raise OptionError(
                f"unknown workload {self.workload!r}: choose one of {', '.join(WORKLOADS)}"
            )
        for n in self.nemesis:
            if n not in NEMESES:
                raise OptionError(
                    f"unknown nemesis {n!r}: choose from {', '.join(NEMESES)} "
                    "(several separated by commas)"
                )
        if self.concurrency < 1:
            raise OptionError("--concurrency must be at least 1")
        if self.time_limit <= 0:
            raise OptionError("--time-limit must be positive (seconds)")
        if self.keepalive >= self.lease_ttl:
            raise OptionError(
                f"--keepalive {self.keepalive} is not shorter than --lease-ttl {self.lease_ttl}:"
                " the lease would expire between keepalives; use a shorter keepalive"
            )
        if self.ssh and not self.ssh_hosts:
            raise OptionError("--ssh needs hosts: --nodes host1,host2,host3 or --nodes-file F")
        if self.ssh_hosts and not self.ssh:
            raise OptionError("host names in --nodes (or --nodes-file) need --ssh; without it "
                              "--nodes is the number of Docker nodes")
        if self.rate is not None and self.rate <= 0:
            raise OptionError("--rate must be positive (operations per second)")
