"""Simulated Debian hosts for the SSH targets' unit tests (tests/unit/test_ssh*.py).

``SimHost`` is a ``FakeRemote`` that keeps a host's state (installed packages, the server
process, iptables rules) and answers an ``SshCluster``'s commands from it, so a test sees
what the cluster does on each host and in which order, and that ``stop`` leaves nothing
behind.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Iterable

from clusters.remote.base import CommandResult
from tests.support.fake import FakeRemote

ETCD_DEBS = ("etcd-server", "etcd-client", "adduser")
"""What etcd's .debs install (the default of ``SimHost``)."""
OK = CommandResult(0, "", "")


class SimHost(FakeRemote):
    """A Debian host as the SSH cluster sees it; see the module docstring."""

    def __init__(self, name: str, unpacks: Iterable[str] = ETCD_DEBS) -> None:
        super().__init__(f"root@{name}:22")
        self.name = name
        self.unpacks = set(unpacks)
        """What ``dpkg -i`` of the uploaded files installs."""
        self.installed = {"base-files", "iptables"}
        self.running = False
        self.paused = False
        self.rules: list[list[str]] = []
        self.on(
            "dpkg-query",
            respond=lambda _: CommandResult(
                0, "".join(f"ii  {p}\n" for p in sorted(self.installed)), ""
            ),
        )
        self.on(r"apt-get .* update", exit=100)
        self.on(r"dpkg -i", respond=self._dpkg)
        self.on(r"purge -y", respond=self._purge)
        self.on(r"^test -e ", exit=1)
        self.on(
            r"server\.pid",
            respond=lambda _: CommandResult(
                0, f"4242 {'T' if self.paused else 'S'}\n" if self.running else "", ""
            ),
        )
        self.on(r"^nohup setsid", respond=self._start)
        self.on(r"^kill -(\w+) 4242$", respond=self._signal)
        self.on(r"^iptables ", respond=self._iptables)
        self.on(r"^timeout [\d.]+ bash -c", respond=self._connect)
        self.on(r"^date \+%s\.%N$", respond=lambda _: CommandResult(0, f"{time.time():.6f}\n", ""))
        self.on(r"^tail -n", stdout="etcd: serving\n")
        self.on(r"^etcd --version$", stdout="etcd Version: 3.5.16\nGit SHA: Not provided\n")

    def _dpkg(self, _: str) -> CommandResult:
        self.installed |= self.unpacks
        return OK

    def _purge(self, text: str) -> CommandResult:
        self.installed -= set(text.split("purge -y ")[1].split(" ||")[0].split())
        return OK

    def _start(self, _: str) -> CommandResult:
        self.running, self.paused = True, False
        return OK

    def _signal(self, text: str) -> CommandResult:
        sig = text.split()[1]
        if not self.running:
            return CommandResult(1, "", "no such process")
        if sig == "-KILL":
            self.running = False
        self.paused = {"-STOP": True, "-CONT": False}.get(sig, self.paused)
        return OK

    def _iptables(self, text: str) -> CommandResult:
        op, *spec = shlex.split(text)[1:]
        if op == "-A":
            self.rules.append(spec)
        elif op == "-D":
            if spec not in self.rules:
                return CommandResult(1, "", "Bad rule")
            self.rules.remove(spec)
        elif op == "-C":
            return OK if spec in self.rules else CommandResult(1, "", "")
        elif op == "-S":
            return CommandResult(
                0,
                "-P INPUT ACCEPT\n" + "".join("-A " + shlex.join(r) + "\n" for r in self.rules),
                "",
            )
        return OK

    def _connect(self, text: str) -> CommandResult:
        peer = re.search(r"/dev/tcp/([\d.]+)/", text)
        dropped = peer is not None and any(r[r.index("-s") + 1] == peer[1] for r in self.rules)
        return CommandResult(124, "", "") if dropped else OK
