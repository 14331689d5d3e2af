"""What a target lets faults do to its cluster: the closed vocabulary of abilities.

A target declares the abilities it has (``clusters/<target>/target.py``) and, for one it
lacks, why (one line naming ``{target}`` and ``{fault}``); a fault declares the abilities
it needs (``nemesis/faults/<fault>.py``). A fault whose needs are not all among the
target's abilities is refused before anything starts (``check_abilities``), with the
target's reason. Plain data: targets and faults both build on it, neither knows the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from enum import StrEnum
from typing import Final

from core.option_checks import OptionError


class Ability(StrEnum):
    """One thing a fault may do to a target's cluster."""

    KILL = "kill"
    """Kill a server process (kill -9) and restart it."""
    PAUSE = "pause"
    """Freeze a server process (SIGSTOP) and thaw it."""
    NETWORK = "network"
    """Cut links between servers (iptables in the nodes' namespaces)."""
    LOSE_PACKETS = "lose-packets"
    """Drop a share of the packets between servers. No target declares it yet: the loss
    fault's rules exist, but no target has offered it since the Docker targets came."""
    POWER_LOSS = "power-loss"
    """Cut a node's power: kill its server and discard what it had not fsynced (its data
    directory on the power-loss layer, ``clusters/_powerfs``), then restart it."""
    CLOCK = "clock"
    """Move a server's clock (libfaketime in a container, the host's clock over SSH)."""


SERVER_ABILITIES: Final = frozenset({Ability.KILL, Ability.PAUSE, Ability.NETWORK, Ability.CLOCK})
"""What a cluster of several servers in containers takes: the Docker targets' default."""
UNSUPPORTED: Final = "{target} does not support the {fault} fault"
"""The refusal of a fault needing an ability the target gives no reason for lacking."""


def check_abilities(
    target: str,
    has: Set[Ability],
    lacks: Mapping[Ability, str],
    needs: Mapping[str, Set[Ability]],
    **words: str,
) -> None:
    """OptionError (one line) unless ``target``, which ``has`` these abilities, has every
    one each fault needs (``needs``: fault -> its abilities); the refusal is the target's
    reason for the first it ``lacks`` (formatted with ``{target}``, ``{fault}`` and
    ``words``). Faults refused for the same reason are named together: ``loss, partition
    faults need a real cluster``."""
    by_reason: dict[str, list[str]] = {}
    for fault in sorted(needs):
        missing = sorted(needs[fault] - has)
        if missing:
            reason = lacks.get(missing[0], UNSUPPORTED)
            by_reason.setdefault(reason, []).append(fault)
    for reason, faults in by_reason.items():
        raise OptionError(reason.format(target=target, fault=", ".join(faults), **words))
