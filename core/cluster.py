"""The cluster protocol and its optional abilities.

A ``Cluster`` is what a run needs of a target's servers: start them from nothing and wait
until healthy, say where clients connect, collect logs, tear everything down. Abilities a
fault needs are separate small protocols, checked with ``isinstance``: a nemesis offers
kill faults only to a ``Killable`` cluster.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

from core.errors import HarnessError


class ClusterError(HarnessError):
    """A cluster could not be started or reached; the message says what to do."""


@runtime_checkable
class Cluster(Protocol):
    """The servers of one target for one run."""

    name: str

    def nodes(self) -> list[str]:
        """Node names, stable for the cluster's life."""
        ...

    def start(self, run_dir: Path) -> None:
        """Start from nothing and return once healthy; raise ClusterError otherwise."""
        ...

    def endpoints(self) -> dict[str, str]:
        """Node name -> address clients connect to ("host:port")."""
        ...

    def collect_logs(self, dest: Path) -> None:
        """Copy every node's log under ``dest/<node>/``."""
        ...

    def stop(self) -> None:
        """Tear down everything ``start`` created. Safe to call twice or after a failed start."""
        ...


@runtime_checkable
class Killable(Protocol):
    """Can kill -9 a node's server process and start it again, keeping the node."""

    def kill(self, node: str) -> None: ...

    def restart(self, node: str) -> None: ...


@runtime_checkable
class Pausable(Protocol):
    """Can freeze (SIGSTOP) and thaw (SIGCONT) a node's server process."""

    def pause(self, node: str) -> None: ...

    def resume(self, node: str) -> None: ...

    def is_paused(self, node: str) -> bool: ...


@runtime_checkable
class PowerCuttable(Protocol):
    """Can cut a node's power: its server is killed and every write it had not fsynced
    (data and directory entries) is discarded; answers the bytes discarded per file.
    ``restart`` (``Killable``) brings the server back on what the disk kept."""

    def power_cut(self, node: str) -> dict[str, int]: ...


@runtime_checkable
class HasLeader(Protocol):
    """Knows which node currently leads, when the system has a leader."""

    def leader(self) -> str | None: ...


class Commands(Protocol):
    """A cluster that runs commands on its nodes (Docker exec, SSH)."""

    def nodes(self) -> list[str]: ...

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]: ...


def server_version(cluster: Commands, argv: tuple[str, ...] | None, prefix: str = "") -> str:
    """What the server says of its version, run on the first node: the first line of
    ``argv``'s output after ``prefix`` (``etcd Version: 3.5.16``), or "unknown"."""
    if not argv:
        return "unknown"
    try:
        _, out = cluster.exec(cluster.nodes()[0], list(argv))
    except (ClusterError, OSError, IndexError):
        return "unknown"
    lines = out.strip().splitlines()
    return f"{prefix}{lines[0].strip()}" if lines else "unknown"
