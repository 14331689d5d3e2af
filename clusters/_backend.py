"""What the Docker and SSH backends share: a ``ServerSpec``'s cluster, minus the transport.

``ServerCluster`` turns a backend's few transport primitives (run a command on a node,
start the launcher, signal the server, read its /proc state and log) into the abilities a
run and the nemeses use: health and readiness (one readiness wait for both backends),
Killable, Pausable, the version, and HasLeader for a spec with a leader
(``LeadingMixin``). A backend subclasses both.
"""

from __future__ import annotations

import re
import time

from clusters._probe import wait_until
from clusters.server import Address, Place, ServerSpec
from core.cluster import ClusterError, server_version

RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}")
"""Run ids name containers, networks and hosts' directories: valid Docker names."""


class ServerCluster:
    """A cluster of one ``ServerSpec``'s servers; a backend fills in the transport."""

    name: str
    server: ServerSpec
    place: Place

    # -- transport, per backend ---------------------------------------------------------

    def nodes(self) -> list[str]:
        raise NotImplementedError

    def ip(self, node: str) -> str:
        """The address of ``node`` as the control machine and the peers reach it."""
        raise NotImplementedError

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
        """Run ``cmd`` (argv, or a string for ``sh -c``) on ``node`` as root."""
        raise NotImplementedError

    def log_tail(self, node: str, lines: int = 15) -> str:
        """The last ``lines`` lines of ``node``'s server log, joined with " | "."""
        raise NotImplementedError

    def port(self, node: str) -> int:
        """The client port of ``node``'s server (the spec's fixed one unless a backend
        gives each node its own)."""
        return self.server.port

    def where(self, node: str) -> str:
        """``node`` as error messages name it."""
        return node

    def _launch(self, node: str) -> None:
        raise NotImplementedError

    def _signal(self, node: str, sig: str) -> None:
        """Send ``sig`` (KILL, STOP, CONT) to the server on ``node``."""
        raise NotImplementedError

    def _states(self, node: str) -> list[str]:
        """The /proc state letters of the live (not zombie) server processes on ``node``."""
        raise NotImplementedError

    # -- shared -------------------------------------------------------------------------

    def address(self, node: str) -> Address:
        """Where ``node``'s server takes clients: (ip, client port)."""
        return Address(self.ip(node), self.port(node))

    def addresses(self) -> dict[str, Address]:
        """Node -> address, n1 first."""
        return {n: self.address(n) for n in self.nodes()}

    def endpoints(self) -> dict[str, str]:
        """Node name -> "ip:port" of its client port."""
        return {n: str(at) for n, at in self.addresses().items()}

    def is_healthy(self, node: str) -> bool:
        """Whether ``node``'s server answers its probe from the control machine now."""
        return self.server.healthy(self.address(node))

    def is_ready(self) -> bool:
        """Whether the whole cluster serves."""
        return self.server.ready(self.addresses())

    def is_running(self, node: str) -> bool:
        """Whether a (possibly paused) server process exists on ``node``."""
        return bool(self._states(node))

    def is_paused(self, node: str) -> bool:
        """Whether the server on ``node`` is stopped (state T in /proc)."""
        states = self._states(node)
        return bool(states) and all(s in "Tt" for s in states)

    def kill(self, node: str) -> None:
        """kill -9 the server on ``node`` and wait until it is gone."""
        self._signal(node, "KILL")
        if not wait_until(lambda: not self.is_running(node), 10, 0.05):
            raise ClusterError(
                f"{self.server.process} on {self.where(node)} survived kill -9 for 10 s"
            )

    def restart(self, node: str) -> None:
        """Start the server on ``node`` again (a no-op while it runs); does not wait."""
        if not self.is_running(node):
            self._launch(node)

    def pause(self, node: str) -> None:
        """SIGSTOP the server process on ``node`` (not the node: its network stays up)."""
        self._signal(node, "STOP")

    def resume(self, node: str) -> None:
        """SIGCONT the server process on ``node``."""
        self._signal(node, "CONT")

    def version(self) -> str:
        """The server's version as its image or package says it (on n1), or as its spec
        says it (``fixed_version``)."""
        if self.server.fixed_version is not None:
            return self.server.fixed_version
        return server_version(
            self, self.server.version_command(self.place), self.server.version_prefix
        )

    def wait_healthy(self, node: str, timeout: float = 60.0) -> None:
        """Wait until ``node`` answers its probe; ClusterError with its log tail otherwise."""
        if not wait_until(lambda: self.is_healthy(node), timeout, 0.2):
            raise ClusterError(
                f"{self.name} node {self.where(node)} not healthy after "
                f"{timeout:.0f}s; its log ends with: {self.log_tail(node)}"
            )

    def wait_ready(self) -> None:
        """Wait until the cluster serves; ClusterError with the log tails when a server
        exits or the spec's start timeout passes."""
        timeout = self.server.timeout(self.place)
        deadline = time.monotonic() + timeout
        next_liveness = time.monotonic() + self.server.start_grace
        while not self.is_ready():
            now = time.monotonic()
            if now >= next_liveness:
                next_liveness = now + 1.0
                for node in self.nodes():
                    if not self.is_running(node):
                        raise ClusterError(
                            f"{self.name} server on {self.where(node)} exited during start; "
                            f"its log ends with: {self.log_tail(node)}"
                        )
            if now >= deadline:
                lagging = [n for n in self.nodes() if not self.is_healthy(n)] or self.nodes()
                tails = "; ".join(f"{n}: {self.log_tail(n)}" for n in lagging)
                raise ClusterError(
                    f"{self.name} cluster not healthy after {timeout:.0f}s; logs end with: {tails}"
                )
            time.sleep(0.2)


class LeadingMixin(ServerCluster):
    """HasLeader, for the cluster of a spec with a leader (``ServerSpec.has_leader``): a
    backend's leading class puts it first (``class LeadingX(LeadingMixin, X)``)."""

    def leader(self) -> str | None:
        """The node the spec's leader query names, else None."""
        return self.server.leader(self.addresses())
