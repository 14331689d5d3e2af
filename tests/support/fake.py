"""A scripted ``Remote`` for tests and dry runs: records every call, answers by rules.

``FakeRemote().on(r"^iptables -S", stdout="-P INPUT ACCEPT\n")`` answers any command whose
text matches the regular expression (the most recently added rule wins; no rule: exit 0,
no output). Uploads land in ``files`` (path -> bytes) and downloads are served from it, so
a test can check what was written where, and which commands ran in which order, without
any machine. Nothing is executed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clusters.remote.base import (
    Command,
    CommandResult,
    RemoteError,
    command_text,
    signal_command,
)

Responder = Callable[[str], CommandResult]


@dataclass(frozen=True, slots=True)
class Call:
    """One recorded call: ``kind`` is run, upload or download; ``text`` the command or path."""

    kind: str
    text: str
    sudo: bool = False
    timeout: float | None = None


class FakeRemote:
    """Implements ``clusters.remote.base.Remote`` from rules; see the module docstring."""

    def __init__(self, host: str = "fake-host") -> None:
        self.host = host
        self.calls: list[Call] = []
        self.files: dict[str, bytes] = {}
        self.modes: dict[str, int] = {}
        self._rules: list[tuple[re.Pattern[str], Responder]] = []
        self.closed = 0

    def on(
        self,
        pattern: str,
        exit: int = 0,
        stdout: str = "",
        stderr: str = "",
        *,
        respond: Responder | None = None,
    ) -> FakeRemote:
        """Answer commands matching ``pattern`` (``re.search``) with this result, or with
        whatever ``respond(command_text)`` returns."""
        fixed = CommandResult(exit, stdout, stderr)
        self._rules.append((re.compile(pattern), respond or (lambda _: fixed)))
        return self

    def run(
        self, cmd: Command, *, timeout: float | None = None, sudo: bool = False
    ) -> CommandResult:
        text = command_text(cmd)
        self.calls.append(Call("run", text, sudo, timeout))
        for pattern, respond in reversed(self._rules):
            if pattern.search(text):
                return respond(text)
        return CommandResult(0, "", "")

    def upload(self, local: Path, remote_path: str, mode: int = 0o644) -> None:
        self.calls.append(Call("upload", remote_path, True))
        self.files[remote_path] = local.read_bytes()
        self.modes[remote_path] = mode

    def download(self, remote_path: str, local: Path) -> None:
        self.calls.append(Call("download", remote_path, True))
        if remote_path not in self.files:
            raise RemoteError(f"{self.host}: {remote_path} does not exist")
        local.parent.mkdir(parents=True, exist_ok=True)
        local.write_bytes(self.files[remote_path])

    def signal(self, target: int | str, sig: int | str) -> bool:
        return self.run(signal_command(target, sig), sudo=True).ok

    def close(self) -> None:
        self.closed += 1

    # -- for assertions -----------------------------------------------------------------

    def commands(self, sudo: bool | None = None) -> list[str]:
        """The text of every command run so far (only those with/without sudo if given)."""
        return [c.text for c in self.calls if c.kind == "run" and (sudo is None or c.sudo == sudo)]

    def ran(self, pattern: str) -> bool:
        """Whether some command matching ``pattern`` ran."""
        return any(re.search(pattern, text) for text in self.commands())
