"""Designed refusals: the ``fail`` errors that are a service's definite answer by design.

An operation that ended ``fail`` is one of two things. Either the service answered "no"
because that is what its design says it must answer (a compare-and-set whose expected
value is not the register's, a lock another holds until the wait ran out, a write whose
token is below one the protected resource has seen, a write on a basis the data has moved
past, a lease it let expire), or the operation failed for lack of the service (connection
refused, no leader, no answer in time). Availability (``checkers.stats``) counts the
first as answered, hence available, and the second as an outage.

The clients record a designed refusal with an error that begins with one of the prefixes
of ``DESIGNED_REFUSALS`` (and only then: a client that could not reach the service says
so in other words). The clients take these constants from here, so the words the history
holds and the words this table reads are one; ``refused_by_design`` reads the history's
error, the same for every target and every run, old runs included.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final

from core.ops import Op

CAS_MISMATCH: Final = "cas mismatch"
NOT_GRANTED: Final = "not granted"
NOT_ELECTED: Final = "not elected"
STALE_TOKEN: Final = "rejected: stale token"
REJECTED_BY_DATA: Final = "rejected by the data"
LEASE_NOT_FOUND: Final = "lease not found"

DESIGNED_REFUSALS: Final[Mapping[str, str]] = MappingProxyType(
    {
        CAS_MISMATCH: "the register did not hold the expected value (cas-register)",
        NOT_GRANTED: "another held the lock until the wait ran out (lock, herd, election)",
        NOT_ELECTED: "another candidate led until the wait ran out (election)",
        STALE_TOKEN: "the protected resource refused a token below one it had seen",
        REJECTED_BY_DATA: "the data refused a write on a stale basis or a taken key "
        "(version-cas, unique-key)",
        LEASE_NOT_FOUND: "the service no longer knew the lease: it expired unrenewed, or was "
        "revoked (a release, a resign, a take under it)",
    }
)
"""Each designed refusal's error prefix -> what the service's answer meant."""


def refusal_of(error: object) -> str | None:
    """The designed refusal an error records (its prefix in ``DESIGNED_REFUSALS``): the
    whole error, or the prefix followed by ``:`` and the details; else None."""
    if not isinstance(error, str):
        return None
    for prefix in DESIGNED_REFUSALS:
        if error == prefix or error.startswith(prefix + ":"):
            return prefix
    return None


def refused_by_design(completion: Op | None) -> bool:
    """Whether a completion is a ``fail`` the service answered by design."""
    return (
        completion is not None
        and completion.type == "fail"
        and refusal_of(completion.error) is not None
    )
