"""Disposable qemu guests on a private bridge: SSH hosts with clocks of their own.

``vm_lab(image, count, workdir)`` creates, by names of its own (``hvm-<6 hex>``):

- a Linux bridge holding the first address of a private subnet (``10.213.7.0/24`` unless
  told otherwise; refused when any route or address here overlaps it), with no way out: no
  NAT, IPv4 forwarding off for it and ``iptables`` FORWARD rules dropping whatever enters
  or leaves it (tagged with the bridge's name), IPv6 off; the guests get no gateway either;
- per guest a tap device on that bridge, a qcow2 overlay over the cached image (which
  stays pristine) and a qemu process (512 MiB, the image's kernel booted directly) whose
  serial console is logged to ``workdir/console-<i>.log``; guest ``i`` has address
  ``.10+i``, a fresh machine-id and its own boot id;

waits until every guest's sshd greets, yields a ``VmLab``, and on the way out (failure
included) stops the qemu processes it started and deletes the overlays, taps, rules and
bridge, each by name. Needs root (``unavailable()`` says what is missing).

qemu runs the guests with KVM when this machine's KVM can run Debian's kernel, else with
TCG, qemu's own emulator (``accelerator()``): much slower (a boot takes about a minute)
but it needs no /dev/kvm at all. Either way a guest's clock is its own: setting it
changes the guest kernel's time, never this machine's. The KVM of a machine that is itself
a PVM guest (the ``kvm_pvm`` module: a /dev/kvm that answers, in a VM without hardware
virtualization) runs only kernels built for PVM; Debian's dies in its instruction
emulator (at a BMI2 instruction of the decompressor, or, booted past it, at a cmpxchg16b
after a minute of emulated early boot), so TCG is chosen there.
"""

from __future__ import annotations

import fcntl
import ipaddress
import json
import os
import secrets
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clusters._probe import tcp_exchange, wait_until
from clusters._rootfs import run_tool
from clusters.remote.base import tail
from core.cluster import ClusterError
from tests.support.vmhost.image import HOSTNAME, USER, VmImage

if TYPE_CHECKING:
    from clusters.remote.ssh import SshRemote

DEFAULT_SUBNET = "10.213.7.0/24"
"""Outside the Docker clusters' 10.77.0.0/16 and Docker's default pools."""
MEMORY_MB = 512
BOOT_TIMEOUT_S = {"kvm": 120.0, "tcg": 420.0}
ACCEL_ARGS = {"kvm": ["-enable-kvm", "-cpu", "host"], "tcg": ["-accel", "tcg", "-cpu", "qemu64"]}
"""qemu's flags per accelerator (TCG: a plain x86-64 CPU, all that Debian needs)."""
UNUSED_MODULES = (
    "kvm",
    "kvm_amd",
    "kvm_intel",
    "cfg80211",
    "pcspkr",
    "floppy",
    "psmouse",
    "serio_raw",
    "joydev",
    "evdev",
    "button",
    "i2c_piix4",
    "bochs",
    "drm",
    "ata_piix",
    "ata_generic",
    "powernow_k8",
)
"""Drivers udev would load for qemu's PC devices, which the guest does not use: each costs
seconds of boot under TCG."""
TOOLS = {
    "qemu-system-x86_64": "qemu-system-x86",
    "qemu-img": "qemu-utils",
    "debootstrap": "debootstrap",
    "mkfs.ext4": "e2fsprogs",
    "chroot": "coreutils",
    "ip": "iproute2",
    "iptables": "iptables",
    "ssh-keygen": "openssh-client",
}
"""Commands needed here -> the Debian package that has each."""
KVM_GET_API_VERSION = 0xAE00


def accelerator() -> str:
    """``kvm`` or ``tcg``: ``$HARNESS_VM_ACCEL`` if set, else kvm when /dev/kvm answers and
    is not PVM's (see the module docstring), else tcg."""
    chosen = os.environ.get("HARNESS_VM_ACCEL")
    if chosen:
        if chosen not in ACCEL_ARGS:
            raise ClusterError(f"HARNESS_VM_ACCEL={chosen}: choose kvm or tcg")
        return chosen
    if Path("/sys/module/kvm_pvm").exists():
        return "tcg"
    try:
        fd = os.open("/dev/kvm", os.O_RDWR)
    except OSError:
        return "tcg"
    try:
        fcntl.ioctl(fd, KVM_GET_API_VERSION)
        return "kvm"
    except OSError:
        return "tcg"
    finally:
        os.close(fd)


def unavailable() -> str | None:
    """Why VMs cannot run here (one line saying what to do), or None when they can."""
    if os.geteuid() != 0:
        return "VM hosts need root (a bridge, tap devices, and chroot to build the image)"
    if not Path("/dev/net/tun").exists():
        return "/dev/net/tun is missing: no tap devices for the VMs' network"
    missing = sorted({pkg for tool, pkg in TOOLS.items() if shutil.which(tool) is None})
    if missing:
        return f"missing tools for VM hosts; install them: apt-get install -y {' '.join(missing)}"
    return None


@dataclass(frozen=True, slots=True)
class Guest:
    """One running VM: its address, the machine-id it was given and its console log."""

    index: int
    ip: str
    machine_id: str
    console: Path


@dataclass(frozen=True, slots=True)
class VmLab:
    """Running guests on one bridge, and how to log in to them."""

    image: VmImage
    accel: str
    """How qemu runs the guests: kvm or tcg."""
    bridge: str
    gateway: str
    """The bridge's address: this machine as the guests see it."""
    guests: list[Guest]
    known_hosts: Path

    def hosts(self) -> list[str]:
        """``harness@<ip>`` of each guest, as ``--nodes`` takes them."""
        return [f"{USER}@{g.ip}" for g in self.guests]

    def remote(self, index: int) -> SshRemote:
        """An SSH connection to guest ``index`` (0-based), host key checked strictly."""
        from clusters.remote.hosts import HostSpec
        from clusters.remote.ssh import SshOptions, SshRemote

        opts = SshOptions(key=str(self.image.key), known_hosts=str(self.known_hosts))
        return SshRemote(HostSpec(self.guests[index].ip, USER), opts)


@contextmanager
def vm_lab(
    image: VmImage,
    count: int,
    workdir: Path,
    subnet: str = DEFAULT_SUBNET,
    memory_mb: int = MEMORY_MB,
) -> Iterator[VmLab]:
    """Boot ``count`` guests of ``image`` (see the module docstring); everything is gone
    when the block exits."""
    net = ipaddress.IPv4Network(subnet)
    name = f"hvm-{secrets.token_hex(3)}"
    accel = accelerator()
    workdir.mkdir(parents=True, exist_ok=True)
    with ExitStack() as stack:
        gateway = stack.enter_context(_bridge(name, net))
        started = []
        for i in range(1, count + 1):
            tap = stack.enter_context(_tap(f"{name}-{i}", name))
            guest = Guest(i, str(net[10 + i]), uuid.uuid4().hex, workdir / f"console-{i}.log")
            started.append(
                (
                    guest,
                    stack.enter_context(
                        _qemu(
                            image,
                            guest,
                            tap,
                            net.netmask,
                            workdir,
                            [*ACCEL_ARGS[accel], "-m", str(memory_mb)],
                        )
                    ),
                )
            )
        for guest, proc in started:
            _wait_for_sshd(guest, proc, BOOT_TIMEOUT_S[accel])
        known = workdir / "known_hosts"
        known.write_text("".join(f"{g.ip} {image.host_key()}\n" for g, _ in started))
        yield VmLab(image, accel, name, gateway, [g for g, _ in started], known)


def _run(*argv: str) -> None:
    run_tool(list(argv), f"`{' '.join(argv)}`")


def _try(*argv: str) -> None:
    """An undo step: best effort, so the others still run."""
    subprocess.run(argv, capture_output=True, check=False)


def overlapping_route(routes: list[dict[str, Any]], net: ipaddress.IPv4Network) -> str | None:
    """The first of ``routes`` (``ip -j route`` entries, all tables: local addresses too)
    whose destination overlaps ``net``, as ``dst dev``; None when there is none."""
    for route in routes:
        dst = str(route.get("dst", "default"))
        if dst != "default" and ipaddress.ip_network(dst, strict=False).overlaps(net):
            return f"{dst} dev {route.get('dev', '?')}"
    return None


def check_subnet_free(net: ipaddress.IPv4Network) -> None:
    """ClusterError when a route or an address of this machine overlaps ``net``."""
    out = subprocess.run(
        ["ip", "-4", "-j", "route", "show", "table", "all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = overlapping_route(json.loads(out or "[]"), net)
    if found is not None:
        raise ClusterError(
            f"Subnet {net} is in use here ({found}); boot the VMs on another "
            "subnet (vm_lab's subnet=)"
        )


@contextmanager
def _bridge(name: str, net: ipaddress.IPv4Network) -> Iterator[str]:
    """A bridge ``name`` holding ``net``'s first address, forwarding nothing; its address.
    Only what was created here is removed afterwards."""
    check_subnet_free(net)
    gateway = str(net[1])
    drops = [
        ["FORWARD", side, name, "-m", "comment", "--comment", name, "-j", "DROP"]
        for side in ("-i", "-o")
    ]
    inserted: list[list[str]] = []
    _run("ip", "link", "add", name, "type", "bridge")
    try:
        Path(f"/proc/sys/net/ipv4/conf/{name}/forwarding").write_text("0\n")
        Path(f"/proc/sys/net/ipv6/conf/{name}/disable_ipv6").write_text("1\n")
        for rule in drops:
            _run("iptables", "-I", *rule)
            inserted.append(rule)
        _run("ip", "addr", "add", f"{gateway}/{net.prefixlen}", "dev", name)
        _run("ip", "link", "set", name, "up")
        yield gateway
    finally:
        for rule in inserted:
            _try("iptables", "-D", *rule)
        _try("ip", "link", "del", name)


@contextmanager
def _tap(name: str, bridge: str) -> Iterator[str]:
    """A tap device ``name`` on ``bridge``, deleted afterwards."""
    _run("ip", "tuntap", "add", "dev", name, "mode", "tap")
    try:
        _run("ip", "link", "set", name, "master", bridge)
        _run("ip", "link", "set", name, "up")
        yield name
    finally:
        _try("ip", "link", "del", name)


@contextmanager
def _qemu(
    image: VmImage,
    guest: Guest,
    tap: str,
    netmask: ipaddress.IPv4Address,
    workdir: Path,
    machine: list[str],
) -> Iterator[subprocess.Popen[bytes]]:
    """qemu (with ``machine``'s flags: accelerator, CPU, memory) booting ``guest`` from an
    overlay of ``image`` on ``tap``; stopped (and the overlay deleted) afterwards."""
    overlay = workdir / f"overlay-{guest.index}.qcow2"
    _run(
        "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", str(image.disk), str(overlay)
    )
    cmdline = (
        f"root=/dev/vda rw console=ttyS0 quiet panic=1 net.ifnames=0 "
        f"ip={guest.ip}:::{netmask}:{HOSTNAME}:eth0:off "
        f"systemd.machine_id={guest.machine_id} systemd.firstboot=off "
        f"module_blacklist={','.join(UNUSED_MODULES)}"
    )
    argv = [
        "qemu-system-x86_64",
        "-name",
        f"{tap},process={tap}",
        *machine,
        "-smp",
        "1",
        "-nodefaults",
        "-no-user-config",
        "-no-reboot",
        "-display",
        "none",
        "-monitor",
        "none",
        "-serial",
        f"file:{guest.console}",
        "-kernel",
        str(image.kernel),
        "-initrd",
        str(image.initrd),
        "-append",
        cmdline,
        # cache=unsafe: the guest's flushes are not passed on (the overlay is thrown away
        # anyway); dpkg and etcd fsync a lot, and TCG makes each flush dearer.
        "-drive",
        f"file={overlay},if=virtio,format=qcow2,cache=unsafe",
        "-netdev",
        f"tap,id=net0,ifname={tap},script=no,downscript=no",
        "-device",
        f"virtio-net-pci,netdev=net0,mac=52:54:00:d5:07:{guest.index:02x},romfile=",
        "-device",
        "virtio-rng-pci",
    ]
    log = (workdir / f"qemu-{guest.index}.log").open("wb")
    proc = None
    try:
        proc = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT
        )
        yield proc
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        log.close()
        overlay.unlink(missing_ok=True)


def _wait_for_sshd(guest: Guest, proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait until the guest's sshd greets; ClusterError with the console's tail if the VM
    stops or stays silent for ``timeout`` seconds."""

    def up() -> bool:
        if proc.poll() is not None:
            raise ClusterError(
                f"VM {guest.index} exited ({proc.returncode}) while booting; "
                f"its console ends with: {_tail(guest.console)}"
            )
        return b"SSH-" in (tcp_exchange(guest.ip, 22, b"", until=b"SSH-") or b"")

    if not wait_until(up, timeout, 0.5):
        raise ClusterError(
            f"VM {guest.index} ({guest.ip}): no sshd after {timeout:.0f} s; "
            f"its console ends with: {_tail(guest.console)}"
        )


def _tail(path: Path) -> str:
    try:
        return tail(path.read_text(errors="replace"), 8)
    except OSError:
        return "(no console log)"
