"""Is a host the machine the harness runs on? The check behind every refusal to touch it.

Some faults must never hit the control machine: setting a clock there would move the
harness's own clock (and every container's: they share its kernel). A host counts as this
machine when any of these holds:

- its address is one of ours (loopback, or an address a local socket can bind to);
- its ``/etc/machine-id`` equals ours (the same installation);
- its ``/proc/sys/kernel/random/boot_id`` equals ours (the same running kernel: this
  machine itself, or a container on it, which shares its clock).

Everything here reads; nothing changes a host.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from pathlib import Path

from clusters.remote.base import Exec

MACHINE_ID = "/etc/machine-id"
BOOT_ID = "/proc/sys/kernel/random/boot_id"
READ_IDS = (
    f'printf "machine-id=%s\\nboot-id=%s\\n" "$(cat {MACHINE_ID} 2>/dev/null)" '
    f'"$(cat {BOOT_ID} 2>/dev/null)"'
)
"""Prints ``machine-id=...`` and ``boot-id=...`` (empty values for missing files)."""


@dataclass(frozen=True, slots=True)
class MachineIdentity:
    """A machine's installation id and its running kernel's boot id ("" when unknown)."""

    machine_id: str
    boot_id: str


def local_identity(root: Path = Path("/")) -> MachineIdentity:
    """This machine's identity."""

    def read(path: str) -> str:
        try:
            return (root / path.lstrip("/")).read_text().strip()
        except OSError:
            return ""

    return MachineIdentity(read(MACHINE_ID), read(BOOT_ID))


def identity_of(run: Exec) -> MachineIdentity:
    """A host's identity, read with ``run``; "" for what it does not have."""
    _, out = run(READ_IDS)
    found = dict(line.strip().partition("=")[::2] for line in out.splitlines())
    return MachineIdentity(found.get("machine-id", ""), found.get("boot-id", ""))


def is_local_address(host: str) -> bool:
    """Whether ``host`` (a name or an address) resolves to an address of this machine."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except OSError:
        return False
    for family, _, _, _, sockaddr in infos:
        address = str(sockaddr[0])
        ip = ipaddress.ip_address(address.split("%", 1)[0])
        if ip.is_loopback or ip.is_unspecified:
            return True
        # Binding succeeds only to an address one of our interfaces holds.
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.bind((address, 0))
            return True
        except OSError:
            continue
    return False


def same_machine(
    address: str, identity: MachineIdentity, ours: MachineIdentity | None = None
) -> str | None:
    """Why the host at ``address`` with ``identity`` is this machine, or None if it is not."""
    ours = ours or local_identity()
    if is_local_address(address):
        return f"its address {address} belongs to this machine"
    if identity.machine_id and identity.machine_id == ours.machine_id:
        return f"it has this machine's {MACHINE_ID}"
    if identity.boot_id and identity.boot_id == ours.boot_id:
        return (
            "it runs on this machine's kernel (same boot_id: a container here, or this "
            "machine itself) and shares its clock"
        )
    return None
