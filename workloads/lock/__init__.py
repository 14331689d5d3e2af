"""The lock workload, whole: clients loop acquire -> write with the token -> release.

``workload.py`` is its ``Workload`` (generator, checkers, holder, the lock implementation as
the variant a target offers), ``client.py`` its client for locks attached to a lease with a
fencing token (``LockBackend``), ``ttl.py`` its client for locks that are their own lease
(``TtlLockBackend``: Redis's SET NX PX lock), ``redlock.py`` the Redlock algorithm over
several such servers, and ``own.py`` the own-lock protocol with the client that drives a
lock library or a user's lock (docs/own-lock.md). This face hands on the clients' names and
the own-lock protocol's, what a target, a lock adapter and a worker import; the workload
itself (its checkers) is imported by the registry alone."""

from workloads.lock.client import LockBackend, LockClient
from workloads.lock.own import Held, LockLost
from workloads.lock.ttl import TtlLockBackend, TtlLockClient

__all__ = [
    "Held",
    "LockBackend",
    "LockClient",
    "LockLost",
    "TtlLockBackend",
    "TtlLockClient",
]
