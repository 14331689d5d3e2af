"""The base image: a slim Debian root filesystem made by debootstrap, then imported.

No registry can be pulled from, so every image starts here: ``debootstrap --variant=minbase``
from the Debian mirror this machine's apt already uses, plus the tools every node needs for
faults (iproute2, iptables, procps, psmisc, libfaketime, curl), slimmed like the official
images (no docs, man pages, locales or apt lists) and ``docker import``-ed. The recipe below
is hashed into the tag: change it and every image is rebuilt. The release is trixie
(``clusters.releases.DEFAULT_SUITE``) unless a run asks for a server from another
(``--server-version``): each release has its own base, tagged by it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from clusters._docker import LABEL, LABEL_IMAGE
from clusters._imagedef import content_hash, image_tag
from clusters.releases import DEFAULT_SUITE
from core.cluster import ClusterError

if TYPE_CHECKING:
    import docker

SUITE = DEFAULT_SUITE
PACKAGES = ("iproute2", "iptables", "procps", "psmisc", "libfaketime", "curl")
"""Installed in every image: network faults, process control, clock faults, probes."""

# Written into the root filesystem. Future `apt-get install`s in per-target images then
# also skip docs and recommends, and no package's maintainer script starts a service.
FILES: dict[str, str] = {
    "etc/dpkg/dpkg.cfg.d/harness-slim": (
        "path-exclude /usr/share/doc/*\n"
        "path-exclude /usr/share/man/*\n"
        "path-exclude /usr/share/info/*\n"
        "path-exclude /usr/share/locale/*\n"
        "path-include /usr/share/locale/locale.alias\n"
    ),
    "etc/apt/apt.conf.d/harness": (
        'APT::Install-Recommends "false";\n'
        'APT::Install-Suggests "false";\n'
        'Acquire::Languages "none";\n'
        'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb || true"; };\n'
    ),
    "usr/sbin/policy-rc.d": "#!/bin/sh\nexit 101\n",
}
SUITE_FILES: dict[str, dict[str, str]] = {
    # Unstable's Release is valid for a week only: apt then refuses a mirror (or a mirror
    # snapshot) not refreshed within it, where the stable releases' never expire.
    "sid": {"etc/apt/apt.conf.d/harness-sid": 'Acquire::Check-Valid-Until "false";\n'},
}
"""Written into the base of one release only (and hashed into its tag alone)."""
SLIM = (
    "usr/share/doc",
    "usr/share/man",
    "usr/share/info",
    "usr/share/locale",
    "var/lib/apt/lists",
    "var/cache/apt",
)
CHANGES = ("ENV LANG=C.UTF-8", 'CMD ["/bin/bash"]', f"LABEL {LABEL}=1 {LABEL_IMAGE}=base")
RECIPE_VERSION = "1"

Progress = Callable[[str], None]


def base_tag(suite: str = SUITE) -> str:
    """The tag of the base image of Debian ``suite`` for the current recipe (the mirror
    is not part of it)."""
    parts = [RECIPE_VERSION, suite, *PACKAGES, *SLIM, *CHANGES]
    parts += [f"{k}\0{v}" for k, v in sorted(FILES.items())]
    parts += [f"{k}\0{v}" for k, v in sorted(SUITE_FILES.get(suite, {}).items())]
    return image_tag("base", content_hash([p.encode() for p in parts]))


def build_base(
    client: docker.DockerClient, tag: str, cache_dir: Path, progress: Progress, suite: str = SUITE
) -> None:
    """debootstrap ``suite``, slim and import the base root filesystem as ``tag``."""
    if os.geteuid() != 0:
        raise ClusterError(
            "Building the base image needs root (debootstrap); run as root or "
            "load images from a cache with `python -m clusters.images build`"
        )
    with tempfile.TemporaryDirectory(prefix="rootfs-", dir=cache_dir) as tmp:
        root = Path(tmp) / "root"
        debootstrap(
            root,
            PACKAGES,
            cache_dir / "debootstrap-debs",
            lambda message: progress(f"base: {message}"),
            suite,
        )
        slim(root, suite)
        progress("base: importing the root filesystem")
        tar = subprocess.Popen(
            ["tar", "-C", str(root), "--numeric-owner", "-cf", "-", "."], stdout=subprocess.PIPE
        )
        assert tar.stdout is not None
        try:
            repo, _, version = tag.partition(":")
            client.api.import_image_from_stream(
                tar.stdout, repository=repo, tag=version, changes=list(CHANGES)
            )
        finally:
            tar.stdout.close()
            tar.wait()
        if tar.returncode != 0:
            raise ClusterError(f"tar of the base root filesystem failed (exit {tar.returncode})")


def debootstrap(
    root: Path, packages: Sequence[str], debs: Path, progress: Progress, suite: str = SUITE
) -> None:
    """``debootstrap --variant=minbase`` of ``suite`` plus ``packages`` into ``root`` (which
    must not exist yet), from ``debian_mirror()``; downloaded .debs are kept in ``debs``
    for the next time. Needs root; ClusterError with the tail of debootstrap's output."""
    if shutil.which("debootstrap") is None:
        raise ClusterError("debootstrap is missing; install it: apt-get install -y debootstrap")
    mirror = debian_mirror()
    debs.mkdir(parents=True, exist_ok=True)
    progress(f"debootstrap {suite} from {mirror}")
    try:
        run_tool(
            [
                "debootstrap",
                "--variant=minbase",
                f"--include={','.join(packages)}",
                f"--cache-dir={debs}",
                suite,
                str(root),
                mirror,
            ],
            "debootstrap",
        )
    finally:
        _unmount_under(root)  # a failed debootstrap can leave /proc or /sys mounted


def slim(root: Path, suite: str = SUITE) -> None:
    """Drop docs, man pages, locales and apt's lists and caches from a debootstrapped
    ``root``; write ``FILES`` and ``suite``'s ``SUITE_FILES`` (no docs or recommends in
    later installs, no service starts from package scripts) and remove the build
    machine's hostname and resolv.conf."""
    for rel in SLIM:
        path = root / rel
        if path.is_dir():
            for child in path.iterdir():
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
    for rel, text in {**FILES, **SUITE_FILES.get(suite, {})}.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        if rel.startswith("usr/sbin/"):
            path.chmod(0o755)
    # Some postinst scripts (the JRE's) need the man directories to exist.
    for i in range(1, 9):
        (root / f"usr/share/man/man{i}").mkdir(parents=True, exist_ok=True)
    (root / "var/lib/apt/lists/partial").mkdir(parents=True, exist_ok=True)
    (root / "var/cache/apt/archives/partial").mkdir(parents=True, exist_ok=True)
    for rel in ("etc/hostname", "etc/resolv.conf"):
        (root / rel).unlink(missing_ok=True)


def _unmount_under(root: Path) -> None:
    """Lazily unmount every mount point inside ``root`` (deepest first)."""
    prefix = str(root.resolve()) + "/"
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for point in sorted((m for m in mounts if m.startswith(prefix)), reverse=True):
        subprocess.run(["umount", "-l", point], check=False)


def debian_mirror() -> str:
    """The Debian mirror to debootstrap from: $HARNESS_DEBIAN_MIRROR, else the host's apt's."""
    env = os.environ.get("HARNESS_DEBIAN_MIRROR")
    if env:
        return env.rstrip("/")
    found = _mirror_from_apt(Path("/etc/apt"))
    return found or "http://deb.debian.org/debian"


def _mirror_from_apt(etc_apt: Path) -> str | None:
    """The first non-security ``.../debian`` URI in apt's sources (one-line or deb822)."""
    files = [etc_apt / "sources.list", *sorted((etc_apt / "sources.list.d").glob("*"))]
    for f in files:
        if not f.is_file():
            continue
        text = f.read_text(errors="replace")
        uris = re.findall(r"^\s*deb\s+(?:\[[^]]*\]\s+)?(\S+)", text, re.M)
        uris += [u for line in re.findall(r"^URIs:\s*(.+)$", text, re.M) for u in line.split()]
        for uri in uris:
            if uri.rstrip("/").endswith("/debian") and "security" not in uri:
                return uri.rstrip("/")
    return None


def run_tool(cmd: list[str], what: str) -> None:
    """Run a build step; ClusterError with the last lines of its output when it fails."""
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-5:]
        raise ClusterError(f"{what} failed (exit {proc.returncode}): {' | '.join(tail)}")
