"""What each lock library's documentation promises, as data, each promise with the public
page that makes it: whether the lock gives a fencing token, whether it renews itself, what
its release does when the lock was lost, and what its "do I still hold it" answer rests on.

test.json records them (``lock_library.promises``), and the checkers hold a run to them
(``checkers.blame``): a library that answered "held" while the service had granted another
broke its word; one that gives no fencing token and let a paused holder write behaved as
documented. Public facts only, in our own words.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Promise:
    """One thing a library's documentation says it does: ``value`` (a word from the
    field's vocabulary in ``Promises``), ``says`` (in a few words), ``source`` (the page)."""

    value: str
    says: str
    source: str


@dataclass(frozen=True, slots=True)
class Promises:
    """A library's documented promises."""

    fencing: Promise
    """``token``: a number that grows with each grant; ``none``."""
    renewal: Promise
    """``auto``: it keeps the lock alive by itself; ``none``: the TTL runs from the grant
    unless the application extends it; ``connection``: held while its connection lasts."""
    lost_release: Promise
    """What ``release`` does when the lock was no longer its own: ``raise``, ``return``
    (answers False), ``silent`` (returns as though it released)."""
    still_held: Promise
    """What its "still held" answer rests on: ``service`` (it asks the service),
    ``local`` (its own belief), ``none`` (it cannot say)."""

    def record(self) -> dict[str, dict[str, str]]:
        """As test.json records them."""
        return {name: asdict(p) for name, p in _fields(self)}


def _fields(p: Promises) -> tuple[tuple[str, Promise], ...]:
    return (
        ("fencing", p.fencing),
        ("renewal", p.renewal),
        ("lost_release", p.lost_release),
        ("still_held", p.still_held),
    )


REDIS_PY_DOC: Final = "https://redis.readthedocs.io/en/stable/lock.html"
REDIS_LOCK_DOC: Final = "https://python-redis-lock.readthedocs.io/en/latest/readme.html"
POTTERY_DOC: Final = "https://github.com/brainix/pottery#redlock"
TOOZ_DOC: Final = "https://docs.openstack.org/tooz/latest/user/tutorial/lock.html"
TOOZ_DRIVERS_DOC: Final = "https://docs.openstack.org/tooz/latest/user/drivers.html"
KAZOO_DOC: Final = "https://kazoo.readthedocs.io/en/latest/api/recipe/lock.html"
KAZOO_STATES_DOC: Final = (
    "https://kazoo.readthedocs.io/en/latest/basic_usage.html#understanding-kazoo-states"
)
ETCD3GW_DOC: Final = "https://opendev.org/openstack/etcd3gw"


def _no_token(what: str, source: str) -> Promise:
    return Promise("none", f"no fencing token: {what}", source)


REDIS_PY: Final = Promises(
    _no_token("the key's value is a random token it compares on release", REDIS_PY_DOC),
    Promise(
        "none", "the key expires `timeout` after the grant; extend() only when asked", REDIS_PY_DOC
    ),
    Promise(
        "raise",
        "release() raises LockNotOwnedError when the key is no longer its token",
        REDIS_PY_DOC,
    ),
    Promise("service", "owned() reads the key and compares it with its token", REDIS_PY_DOC),
)
PYTHON_REDIS_LOCK: Final = Promises(
    _no_token("the key's value is a random id", REDIS_LOCK_DOC),
    Promise("auto", "auto_renewal: a thread renews the key every 2/3 of `expire`", REDIS_LOCK_DOC),
    Promise("raise", "release() raises NotAcquired when the key is not its id", REDIS_LOCK_DOC),
    Promise("service", "get_owner_id() reads the key's id", REDIS_LOCK_DOC),
)
POTTERY: Final = Promises(
    _no_token("each master's key holds a random value", POTTERY_DOC),
    Promise("none", "auto_release_time runs from the grant; extend() only when asked", POTTERY_DOC),
    Promise(
        "raise",
        "release() raises ReleaseUnlockedLock when it no longer holds a quorum",
        POTTERY_DOC,
    ),
    Promise(
        "service",
        "locked() asks its masters and answers the validity left by its own clock",
        POTTERY_DOC,
    ),
)


def _tooz(renewal: Promise, lost_release: Promise, still_held: Promise) -> Promises:
    """tooz's lock over one driver: no driver gives a fencing token."""
    return Promises(
        _no_token("tooz's Lock API has acquire, release and heartbeat only", TOOZ_DOC),
        renewal,
        lost_release,
        still_held,
    )


_HEARTBEAT: Final = Promise(
    "auto", "start(start_heart=True): a heartbeat thread renews the lock", TOOZ_DOC
)
TOOZ_ZOOKEEPER: Final = _tooz(
    Promise("auto", "kazoo's session, kept by its pings, holds the lock node", TOOZ_DRIVERS_DOC),
    Promise(
        "silent", "release() deletes its own node and answers without saying it was gone", TOOZ_DOC
    ),
    Promise("local", "is_still_owner() answers kazoo's own view of its lock", TOOZ_DRIVERS_DOC),
)
TOOZ_REDIS: Final = _tooz(
    _HEARTBEAT,
    Promise("return", "release() answers False when it no longer held the lock", TOOZ_DOC),
    Promise("service", "is_still_owner() reads the lock's key", TOOZ_DRIVERS_DOC),
)
TOOZ_ETCD3GW: Final = _tooz(
    _HEARTBEAT,
    Promise("return", "release() answers False when it no longer held the lock", TOOZ_DOC),
    Promise("none", "is_still_owner() is not implemented by the etcd3gw driver", TOOZ_DRIVERS_DOC),
)
TOOZ_POSTGRESQL: Final = _tooz(
    Promise("connection", "an advisory lock, held while its session lasts", TOOZ_DRIVERS_DOC),
    Promise("silent", "release() answers without saying the lock was gone", TOOZ_DOC),
    Promise(
        "none", "is_still_owner() is not implemented by the PostgreSQL driver", TOOZ_DRIVERS_DOC
    ),
)
KAZOO: Final = Promises(
    _no_token(
        "the documented Lock API is acquire, release, cancel, contenders and is_acquired",
        KAZOO_DOC,
    ),
    Promise(
        "auto",
        "the session, kept alive by the client's pings, holds the lock node",
        KAZOO_STATES_DOC,
    ),
    Promise(
        "silent", "release() deletes its own node and says nothing when it was gone", KAZOO_DOC
    ),
    Promise(
        "local",
        "is_acquired is its own flag; a lost session is told by the LOST connection state",
        KAZOO_STATES_DOC,
    ),
)
ETCD3GW: Final = Promises(
    _no_token("the lock's key holds a random uuid under a lease", ETCD3GW_DOC),
    Promise("none", "refresh() keeps the lease only when the application calls it", ETCD3GW_DOC),
    Promise("return", "release() answers False when the key is no longer its own", ETCD3GW_DOC),
    Promise("service", "is_acquired() reads the key and compares its uuid", ETCD3GW_DOC),
)
