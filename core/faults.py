"""The kinds of fault a run can ask for, by name: the ground floor's one list of them.

A kind is data: its name (``--nemesis``'s word, the ``start-<name>``/``stop-<name>``
operations of its windows) and what it aims at (server processes, the network between
servers, or client processes: a client fault). Its behaviour is its module in
``nemesis/faults/``, whose ``FaultSpec`` is registered against its kind; the checkers (the
words of an older run's windows, ``checkers.windows``), the workloads (the fault a run of
theirs gets when it names none) and the targets (a bug that needs a fault, a rule that
holds during power loss) read the names from here, so no layer above spells one.
``tests/unit/test_fault_kinds.py`` holds the fault modules and the other layers to it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

SERVERS: Final = "servers"
"""It hits server processes, or the clocks of the servers' nodes."""
NETWORK: Final = "network"
"""It hits the links between servers."""
CLIENTS: Final = "clients"
"""It hits the harness's client processes (or their clocks): a client fault."""
AIMS: Final = (SERVERS, NETWORK, CLIENTS)


@dataclass(frozen=True, slots=True)
class FaultKind:
    """One kind of fault: its name and what it aims at (``AIMS``)."""

    name: str
    aims_at: str

    def __post_init__(self) -> None:
        if self.aims_at not in AIMS:
            raise ValueError(f"fault {self.name!r} aims at {self.aims_at!r}, not one of {AIMS}")

    @property
    def client(self) -> bool:
        """Whether it is a client fault: it hits the clients, not the service."""
        return self.aims_at == CLIENTS


CLIENT_PAUSE: Final = FaultKind("client-pause", CLIENTS)
NODE_PAUSE: Final = FaultKind("pause", SERVERS)
PARTITION: Final = FaultKind("partition", NETWORK)
LOSS: Final = FaultKind("loss", NETWORK)
KILL: Final = FaultKind("kill", SERVERS)
POWER_LOSS: Final = FaultKind("power-loss", SERVERS)
CLOCK: Final = FaultKind("clock", SERVERS)
CLIENT_KILL: Final = FaultKind("client-kill", CLIENTS)
CLIENT_CLOCK: Final = FaultKind("client-clock", CLIENTS)

KINDS: Final[Mapping[str, FaultKind]] = MappingProxyType(
    {
        k.name: k
        for k in (
            CLIENT_PAUSE,
            NODE_PAUSE,
            PARTITION,
            LOSS,
            KILL,
            POWER_LOSS,
            CLOCK,
            CLIENT_KILL,
            CLIENT_CLOCK,
        )
    }
)
"""Every kind by name, in ``--nemesis``'s order of listing."""
