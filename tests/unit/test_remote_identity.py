"""Telling whether a host is the machine the harness runs on (the refusal behind clock
faults): by address, by machine-id, by boot id. Binding a socket is the only probe: no
packet is sent anywhere."""

from __future__ import annotations

import subprocess
from pathlib import Path

from clusters.remote.base import Command, command_text
from clusters.remote.identity import (
    MachineIdentity,
    identity_of,
    is_local_address,
    local_identity,
    same_machine,
)

OURS = MachineIdentity("m" * 32, "b-ours")


def test_loopback_and_our_own_addresses_are_local() -> None:
    assert is_local_address("127.0.0.1")
    assert is_local_address("127.8.9.10")
    assert is_local_address("localhost")
    assert is_local_address("0.0.0.0")


def test_other_addresses_and_unresolvable_names_are_not() -> None:
    assert not is_local_address("203.0.113.7")  # TEST-NET-3: documentation only
    assert not is_local_address("no-such-host.invalid")


def run_here(cmd: Command) -> tuple[int, str]:
    """Runs a (read-only) command on this machine, as a host would."""
    proc = subprocess.run(["sh", "-c", command_text(cmd)], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def test_identity_is_read_from_the_host_by_the_very_script_sent() -> None:
    assert identity_of(run_here) == local_identity()
    assert identity_of(lambda c: (1, "")) == MachineIdentity("", "")


def test_missing_files_read_as_unknown(tmp_path: Path) -> None:
    def without_machine_id(cmd: Command) -> tuple[int, str]:
        return run_here(command_text(cmd).replace("/etc/machine-id", str(tmp_path / "none")))

    ident = identity_of(without_machine_id)
    assert ident.machine_id == "" and ident.boot_id == local_identity().boot_id


def test_this_machine_read_as_a_host_is_refused_by_every_criterion() -> None:
    ident = identity_of(run_here)
    reason = same_machine("203.0.113.7", ident)
    assert reason is not None
    assert same_machine("203.0.113.7", MachineIdentity("", ident.boot_id)) is not None


def test_local_identity_reads_our_files(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/machine-id").write_text("mid\n")
    assert local_identity(tmp_path) == MachineIdentity("mid", "")
    real = local_identity()
    assert real.boot_id, "Linux always has a boot id"


def test_a_remote_machine_is_not_us() -> None:
    assert same_machine("203.0.113.7", MachineIdentity("other", "b-other"), OURS) is None


def test_our_address_machine_id_or_boot_id_make_it_us() -> None:
    far = MachineIdentity("other", "b-other")
    assert "belongs to this machine" in str(same_machine("127.0.0.1", far, OURS))
    assert "machine-id" in str(
        same_machine("203.0.113.7", MachineIdentity(OURS.machine_id, "x"), OURS)
    )
    container = same_machine("203.0.113.7", MachineIdentity("img", OURS.boot_id), OURS)
    assert container is not None and "container" in container


def test_unknown_ids_never_match() -> None:
    assert same_machine("203.0.113.7", MachineIdentity("", ""), MachineIdentity("", "")) is None
