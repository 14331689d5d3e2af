"""The options of the workloads whose clients hold something (a lock, a leadership, a
registration's session) or work on what they read: the lock implementation, the lease and
its keepalive, the work in a critical section, the acquire's wait, fencing at the
protected resource, the number of locks and the holder's own check. Read as
``opts.record(LockOptions)``; the workloads that use it list it in their records
(``workloads.workload.holding``), which hands it in (``core.options.hand_in``).

Its defaults are the classic scenario's (``core.options``): a lease of 10 s kept alive
every 3 s, fencing on. Its own rules come in with it: a keepalive shorter than the lease
(``check``), a keepalive not given fitted to a shorter lease given (``fit``), and what an
op of a holder may legitimately take (``hold``), which the op timeout follows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Final

from core.option_checks import DAY, MS, Bound, OptionError
from core.option_defaults import round_down
from core.option_records import option
from core.options import Hold

if TYPE_CHECKING:
    from core.options import RunOptions


@dataclass(frozen=True, slots=True)
class LockOptions:
    """The lock (and lease) of a workload whose clients hold something."""

    TOPIC: ClassVar = ("locks", "locks and leases")
    """The help topic its flags are shown under (``harness docs options locks``): several
    workloads share it."""

    impl: str | None = option(
        None,
        "the target's lock implementation",
        flat="lock",
        variant=True,
        title=True,
        common=True,
    )
    """The lock implementation (``--lock``); None: the target's default."""
    lib_version: str | None = option(
        None,
        "the version of the lock library --lock names, installed into an environment "
        "of its own (default: the harness's pinned one)",
        metavar="VERSION",
    )
    """The version of the lock library ``--lock`` names to install (``--lib-version``);
    None: the one the harness pins (``workloads.libraries.library_registry``)."""
    lease_ttl: float = option(
        10.0,
        "seconds a lease lives unrenewed (default: %(default)s)",
        bound=Bound("--lease-ttl", 0.01, DAY),
        common=True,
    )
    """At least 10 ms, so that the keepalive fitted to it (``fit``) is a millisecond or
    more."""
    keepalive: float = option(
        3.0,
        "seconds between keepalives (default: %(default)s, or 0.3 of a shorter --lease-ttl)",
        bound=Bound("--keepalive", MS, DAY),
    )
    work_time: float = option(
        0.3,
        "seconds of work in each critical section",
        bound=Bound("--work-time", MS, DAY, zero=True),
    )
    acquire_wait: float = option(
        5.0,
        "seconds an acquire waits before it fails",
        bound=Bound("--acquire-wait", MS, DAY, zero=True),
    )
    fencing: bool = option(
        True,
        "on: the protected resource rejects lower tokens; off: accepts all (default: %(default)s)",
        named="fence",
        common=True,
    )
    locks: int = option(
        1,
        "number of locks, 1-1000",
        bound=Bound("--locks", 1, 1000, integer=True, unit="locks"),
    )
    holder_check: bool = option(
        True,
        "on: a holder checks its lease or session is not known lost before it writes; "
        "off: it writes on its belief, as a naive application does (default: %(default)s)",
        named="holdercheck",
    )
    """Whether a holder checks that its lease or session is not known to be lost before
    it writes, as a careful application does; off: it writes on the belief that it still
    holds (``workloads.common.critical``), the naive application whose worst case failovers,
    session moves and lost connections show."""

    def check(self) -> None:
        """A keepalive shorter than the lease (one-line OptionError): else the lease
        would expire between keepalives."""
        if self.keepalive >= self.lease_ttl:
            raise OptionError(
                f"--keepalive {self.keepalive} is not shorter than --lease-ttl "
                f"{self.lease_ttl}: the lease would expire between keepalives; use a "
                "shorter keepalive"
            )

    def fit(self, opts: RunOptions) -> RunOptions:
        """``opts`` with a keepalive not given shorter than the lease TTL: its classic
        share of it (``KEEPALIVE_SHARE``), said in ``opts.adapted``."""
        if self.keepalive < self.lease_ttl or opts.was_given("keepalive"):
            return opts
        keepalive = round_down(self.lease_ttl * KEEPALIVE_SHARE)
        return opts.adapt(
            f"keepalive {keepalive:g} s (not given): the default {self.keepalive:g} s is not "
            f"shorter than lease_ttl {self.lease_ttl:g} s; {KEEPALIVE_SHARE:g} of it, as in "
            "the classic scenario",
            keepalive=keepalive,
        )

    def hold(self) -> Hold:
        """What one op of a holder may legitimately take: its critical section's work and
        its acquire's wait."""
        return Hold(work=self.work_time, wait=self.acquire_wait)


KEEPALIVE_SHARE: Final = LockOptions().keepalive / LockOptions().lease_ttl
"""The classic keepalive's share of the lease TTL (3 s of 10 s)."""
