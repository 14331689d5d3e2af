"""The VM host's disk image: Debian with systemd, sshd and sudo, built from Debian packages.

``ensure_image()`` returns the cached image for the recipe below, building it first when
it is missing (as root; 2-4 minutes, mostly debootstrap and the kernel's initramfs). It
lives in ``~/.cache/harness/vm/<hash>/`` (``$HARNESS_VM_CACHE``), the hash covering the
whole recipe, so editing it builds a new image and an unchanged one is reused:

- ``disk.img``: raw ext4 made with ``mkfs.ext4 -d`` from the root directory (no loop
  mount), to be booted through a copy-on-write overlay (``vm.py``) so it stays pristine;
- ``vmlinuz``, ``initrd.img``: the guest's kernel, booted directly by qemu (no bootloader);
- ``id_ed25519``: the private key that logs in as ``harness`` (passwordless sudo), made at
  build time like the host key, whose public half is ``ssh_host_ed25519_key.pub``: the
  tests check the guest's host key strictly.

The root filesystem is debootstrapped like the Docker images' base (``clusters._rootfs``)
plus a kernel, systemd as init, systemd-timesyncd (it reaches no server, but it is the
time service a clock fault must stop and start again), sshd, sudo and the tools the SSH
targets need. The network is set at boot from the kernel command line (``ip=``, read by
systemd-network-generator for systemd-networkd); the machine-id too, so each guest is a
machine of its own.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from clusters import _rootfs
from clusters._imagedef import content_hash
from core.cluster import ClusterError

USER = "harness"
HOSTNAME = "harness-vm"
PACKAGES = (
    "linux-image-amd64",
    "systemd-sysv",
    "systemd-timesyncd",
    "udev",
    "dbus",
    "openssh-server",
    "sudo",
    "iproute2",
    "iptables",
    "procps",
)
FILES: dict[str, str] = {
    "etc/hostname": f"{HOSTNAME}\n",
    "etc/hosts": f"127.0.0.1 localhost\n127.0.1.1 {HOSTNAME}\n",  # sudo resolves its host
    "etc/fstab": "/dev/vda / ext4 defaults 0 0\n",
    "etc/machine-id": "",  # given on the kernel command line: one per guest
    f"etc/sudoers.d/{USER}": f"{USER} ALL=(ALL) NOPASSWD: ALL\n",
    "etc/ssh/sshd_config.d/harness.conf": (
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\n"
        "PermitRootLogin prohibit-password\nUseDNS no\n"
    ),
}
UNITS = ("systemd-networkd.service", "systemd-network-generator.service")
"""Enabled besides what the packages enable (ssh, systemd-timesyncd)."""
SLACK_BYTES = 1 << 30
"""Free space in the image beyond its files: the target's packages, data and logs."""
RECIPE_VERSION = "1"

Progress = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class VmImage:
    """A built image's files (see the module docstring)."""

    directory: Path

    @property
    def disk(self) -> Path:
        return self.directory / "disk.img"

    @property
    def kernel(self) -> Path:
        return self.directory / "vmlinuz"

    @property
    def initrd(self) -> Path:
        return self.directory / "initrd.img"

    @property
    def key(self) -> Path:
        """The private key that logs in as ``USER``."""
        return self.directory / "id_ed25519"

    def host_key(self) -> str:
        """The guest's ed25519 host key, ``ssh-ed25519 AAAA...`` (a known_hosts entry's
        key part)."""
        kind, blob, *_ = (self.directory / "ssh_host_ed25519_key.pub").read_text().split()
        return f"{kind} {blob}"


def cache_root() -> Path:
    """``$HARNESS_VM_CACHE``, else ``~/.cache/harness/vm``."""
    env = os.environ.get("HARNESS_VM_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "harness" / "vm"


def recipe_hash() -> str:
    """Names the image: every input of the build (not the mirror)."""
    parts = [RECIPE_VERSION, _rootfs.SUITE, USER, *PACKAGES, *UNITS, *_rootfs.SLIM]
    parts += [f"{k}\0{v}" for k, v in sorted({**_rootfs.FILES, **FILES}.items())]
    return content_hash([p.encode() for p in parts])


def ensure_image(progress: Progress = lambda _: None) -> tuple[VmImage, bool]:
    """The image of the current recipe and whether it was built just now (else cached).
    One build at a time across processes; a failed build leaves nothing behind."""
    root = cache_root()
    image = VmImage(root / recipe_hash())
    if image.disk.is_file():
        return image, False
    root.mkdir(parents=True, exist_ok=True)
    with (root / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if image.disk.is_file():  # built by another process meanwhile
            return image, False
        if os.geteuid() != 0:
            raise ClusterError("Building the VM image needs root (debootstrap, chroot)")
        build = Path(tempfile.mkdtemp(prefix=".build-", dir=root))
        try:
            _build(build, root / "debootstrap-debs", progress)
            shutil.rmtree(build / "root")  # it is in disk.img now
            build.rename(image.directory)
        except BaseException:
            shutil.rmtree(build, ignore_errors=True)
            raise
    return image, True


def _build(out: Path, debs: Path, progress: Progress) -> None:
    """Build the image's files into ``out`` (the root filesystem in ``out/root``)."""
    root = out / "root"
    _rootfs.debootstrap(root, PACKAGES, debs, lambda message: progress(f"vm image: {message}"))
    _rootfs.slim(root)
    (root / "usr/sbin/policy-rc.d").unlink()  # a real host: package scripts start services
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    (root / f"etc/sudoers.d/{USER}").chmod(0o440)

    def chroot(*argv: str) -> None:
        _rootfs.run_tool(["chroot", str(root), *argv], argv[0])

    chroot("useradd", "--create-home", "--shell", "/bin/bash", USER)
    chroot("usermod", "--password", "*", USER)  # no password, but not locked: keys work
    chroot("systemctl", "enable", *UNITS)
    key = out / "id_ed25519"
    _rootfs.run_tool(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "harness-vm", "-f", str(key)],
        "ssh-keygen",
    )
    ssh_dir = root / "home" / USER / ".ssh"
    ssh_dir.mkdir(mode=0o700)
    shutil.copy(f"{key}.pub", ssh_dir / "authorized_keys")
    chroot("chown", "-R", f"{USER}:{USER}", f"/home/{USER}/.ssh")
    shutil.copy(root / "etc/ssh/ssh_host_ed25519_key.pub", out)
    for name, pattern in (("vmlinuz", "vmlinuz-*"), ("initrd.img", "initrd.img-*")):
        found = sorted((root / "boot").glob(pattern))
        if len(found) != 1:
            raise ClusterError(f"Expected one /boot/{pattern} in the VM image, found {found}")
        shutil.copy(found[0], out / name)
    progress("vm image: mkfs.ext4 -d")
    used = int(
        subprocess.run(
            ["du", "-sxb", str(root)], capture_output=True, text=True, check=True
        ).stdout.split()[0]
    )
    disk = out / "disk.img"
    with disk.open("wb") as f:
        f.truncate((used + SLACK_BYTES) // (1 << 20) * (1 << 20))
    _rootfs.run_tool(
        ["mkfs.ext4", "-q", "-F", "-L", HOSTNAME, "-d", str(root), str(disk)], "mkfs.ext4"
    )


if __name__ == "__main__":  # python -m tests.support.vmhost.image: build it ahead of the tests
    built, fresh = ensure_image(print)
    print(f"{'built' if fresh else 'cached'}: {built.directory}")
    sys.exit(0)
