"""The lock libraries the harness runs as ``--lock`` variants: one ``Library`` each.

A library is installed, at its pinned ``version`` (``--lib-version`` picks another), into
an environment of its own for the client workers (``workloads.libraries.env``), and used
through its adapter's ``make`` (``workloads.lock.own``'s protocol), on the targets whose
offer of the lock workload lists it (``library_variants``: each target's spec says which).
What it offers is said with it: a fencing token or not, a loss noticed on release or not,
its renewal, whether it trusts clocks (``suites/libraries.toml`` adds the clock fault for
those).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from workloads.libraries import promises as said
from workloads.libraries.promises import Promises


@dataclass(frozen=True, slots=True)
class Library:
    """One lock library as a lock variant."""

    name: str
    """Its ``--lock`` name."""
    package: str
    """Its distribution on PyPI."""
    version: str
    """The version a run installs unless ``--lib-version`` says another."""
    make: str
    """``module:attribute`` of its adapter's ``make``."""
    fencing: bool
    """Whether it gives a fencing token."""
    loss_on_release: bool
    """Whether its release says when it no longer held the lock."""
    renewal: str
    """How it keeps the lock past its TTL, in a few words."""
    trusts_clocks: bool = False
    """Whether its safety rests on clocks (its own validity time)."""
    whole_seconds: bool = False
    """Whether it counts the TTL and the wait in whole seconds."""
    spread: bool = False
    """Whether it talks to every server at once (completions then name no node)."""
    requires: tuple[str, ...] = ()
    """Other packages its adapter imports, pinned, installed with it (tooz's drivers)."""
    promises: Promises | None = None
    """What its documentation promises, with the pages (``workloads.libraries.promises``)."""

    @property
    def offers(self) -> str:
        """What it offers, in a few words: the README table's column."""
        token = "fencing token" if self.fencing else "no fencing token"
        release = "loss said on release" if self.loss_on_release else "loss not said on release"
        clocks = ", trusts clocks" if self.trusts_clocks else ""
        return f"{token}; {release}; {self.renewal}{clocks}"


KAZOO: Final = "2.11.0"
ETCD3GW: Final = "2.7.0"
TOOZ_DRIVERS: Final = (
    f"kazoo=={KAZOO}",
    "redis==8.1.0",
    f"etcd3gw=={ETCD3GW}",
    "psycopg2-binary==2.9.13",
)
"""The drivers tooz imports only when a coordinator asks for one, pinned: one environment
has them all."""


def _tooz(name: str, renewal: str, promises: Promises, **offers: bool) -> Library:
    """tooz's lock over one of its drivers (``--lock tooz-DRIVER``: its adapter's
    ``make_DRIVER`` in ``workloads.libraries.tooz_lock``); ``offers``: what else it offers."""
    make = f"workloads.libraries.tooz_lock:make_{name.removeprefix('tooz-')}"
    return Library(
        name,
        "tooz",
        "9.1.0",
        make,
        fencing=False,
        renewal=renewal,
        requires=TOOZ_DRIVERS,
        promises=promises,
        **offers,
    )


MORE_LIBRARIES: Final = (
    _tooz(
        "tooz-zookeeper",
        "kazoo's session pings",
        said.TOOZ_ZOOKEEPER,
        loss_on_release=False,
        whole_seconds=True,
    ),
    _tooz(
        "tooz-redis",
        "heartbeat thread every 1/2 TTL",
        said.TOOZ_REDIS,
        loss_on_release=True,
        whole_seconds=True,
    ),
    _tooz(
        "tooz-etcd3gw",
        "heartbeat thread every 1/2 TTL",
        said.TOOZ_ETCD3GW,
        loss_on_release=True,
        whole_seconds=True,
    ),
    _tooz(
        "tooz-postgresql",
        "no TTL (held while its connection lasts)",
        said.TOOZ_POSTGRESQL,
        loss_on_release=False,
        whole_seconds=False,
        spread=True,
    ),
    Library(
        "kazoo",
        "kazoo",
        KAZOO,
        "workloads.libraries.kazoo_lock:make",
        fencing=False,
        loss_on_release=False,
        renewal="session pings by its connection thread",
        promises=said.KAZOO,
    ),
    Library(
        "etcd3gw",
        "etcd3gw",
        ETCD3GW,
        "workloads.libraries.etcd3gw_lock:make",
        fencing=False,
        loss_on_release=True,
        renewal="none of its own (the application refreshes every 1/3 TTL)",
        promises=said.ETCD3GW,
        whole_seconds=True,
    ),
)
"""tooz's drivers, kazoo's and etcd3gw's locks."""

LIBRARIES: Final[dict[str, Library]] = {
    lib.name: lib
    for lib in (
        Library(
            "redis-py",
            "redis",
            "8.2.0",
            "workloads.libraries.redis_py:make",
            fencing=False,
            loss_on_release=True,
            renewal="no renewal (the key expires a TTL after the grant)",
            promises=said.REDIS_PY,
        ),
        Library(
            "python-redis-lock",
            "python-redis-lock",
            "4.0.1",
            "workloads.libraries.python_redis_lock:make",
            fencing=False,
            loss_on_release=True,
            renewal="renewal thread every 2/3 TTL",
            promises=said.PYTHON_REDIS_LOCK,
            whole_seconds=True,
        ),
        Library(
            "pottery-redlock",
            "pottery",
            "3.0.1",
            "workloads.libraries.pottery_redlock:make",
            fencing=False,
            loss_on_release=True,
            renewal="no renewal (extend on request only)",
            promises=said.POTTERY,
            trusts_clocks=True,
            spread=True,
        ),
        *MORE_LIBRARIES,
    )
}
"""Every library, by its ``--lock`` name."""

OWN_LOCKS_REF: Final = "workloads.libraries.resolve:OWN_LOCKS"
"""The client builder of every library (``workloads.libraries.resolve``)."""


def library_variants(*names: str) -> dict[str, str]:
    """Libraries ``names`` as a target's offer of the lock workload lists its variants
    (name -> client builder)."""
    return {name: OWN_LOCKS_REF for name in names if name in LIBRARIES}


def unfenced_libraries(*names: str) -> tuple[str, ...]:
    """Those of libraries ``names`` that give no fencing token."""
    return tuple(n for n in names if n in LIBRARIES and not LIBRARIES[n].fencing)
