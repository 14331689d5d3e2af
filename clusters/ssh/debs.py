"""Debian packages for hosts that cannot reach a mirror, downloaded on the control machine.

Test networks (ours are internal Docker networks) and many labs keep hosts off the
internet. The control machine then resolves what a host lacks and fetches it with apt,
in a private apt state for the host's release and architecture (so a bookworm control
machine serves trixie hosts), and the cluster uploads the files:

1. ``apt-get update`` of the host's suite (``deb [arch=A] MIRROR SUITE main``, signed
   with Debian's archive keyring) into a private directory, refreshed every few hours;
2. ``apt-get -s install PACKAGES`` against the *host's* dpkg status file: exactly the
   packages (dependencies included, alternatives resolved) the host is missing;
3. ``apt-get download NAME=VERSION`` of each, kept in a cache so the next run reuses them.

A package a release no longer ships comes from the suite ``SUITE_OVERRIDES`` names for it
(consul from bullseye): that suite is added to the sandbox's sources, and apt is pinned so
that only the named package is taken from it, every dependency from the host's release.

Nothing here runs as a privileged operation on the control machine's own packages: its
dpkg status and lists are never read or written. Mirror: ``$HARNESS_DEBIAN_MIRROR``, else
the one the control machine's apt uses. Cache: ``$HARNESS_DEB_CACHE``, else
``~/.cache/harness/debs``.
"""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from clusters.target_registry import deb_suites
from core.cluster import ClusterError

KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
REFRESH_S = 6 * 3600
"""Package lists younger than this are reused without ``apt-get update``."""
_INST = re.compile(r"^Inst (\S+) (?:\[[^]]*\] )?\((\S+) ")

SUITE_OVERRIDES: dict[str, str] = deb_suites()
"""Packages that current Debian releases lack -> the older suite to take them from (each
target's ``ServerSpec.deb_suites``: consul from bullseye, see ``clusters.consul.server``)."""


@dataclass(frozen=True, slots=True)
class Platform:
    """What packages a host takes: its distribution, release codename and architecture."""

    distro: str
    suite: str
    arch: str

    def __str__(self) -> str:
        return f"{self.distro} {self.suite} {self.arch}"


def suite_pins(platform: Platform, packages: Sequence[str]) -> dict[str, str]:
    """Which of ``packages`` come from another suite than ``platform``'s (name -> suite)."""
    return {
        name: suite
        for name, suite in SUITE_OVERRIDES.items()
        if name in packages and suite != platform.suite
    }


def cache_root() -> Path:
    """Where package lists and downloaded .debs are kept between runs."""
    env = os.environ.get("HARNESS_DEB_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "harness" / "debs"


def parse_simulation(output: str) -> list[tuple[str, str]]:
    """(name, version) of each package ``apt-get -s install`` would unpack, in its order."""
    return [(m[1], m[2]) for m in map(_INST.match, output.splitlines()) if m]


def deb_name(name: str, version: str, arch: str) -> str:
    """The file name ``apt-get download`` gives a package (an epoch's colon as %3a)."""
    return f"{name}_{version.replace(':', '%3a')}_{arch}.deb"


class AptSandbox:
    """A private apt state for one Debian release and architecture on the control machine
    (plus, with ``pins``, the packages named there from the suite named for each)."""

    def __init__(
        self,
        platform: Platform,
        mirror: str | None = None,
        root: Path | None = None,
        pins: Mapping[str, str] | None = None,
    ) -> None:
        if platform.distro != "debian":
            raise ClusterError(
                f"Cannot download packages for {platform} hosts (only Debian's mirror is "
                "known here); let the hosts reach their own mirror (--ssh-install apt) or "
                "install the packages on them first (--ssh-install present)"
            )
        from clusters._rootfs import debian_mirror

        self.platform = platform
        self.mirror = (mirror or debian_mirror()).rstrip("/")
        self.pins = {name: suite for name, suite in (pins or {}).items() if suite != platform.suite}
        self.extra_suites = sorted(set(self.pins.values()))
        suites = "+".join([platform.suite, *self.extra_suites])
        self.dir = (root or cache_root()) / f"{suites}-{platform.arch}"
        self.debs = self.dir / "archives"

    def options(self, status: Path) -> list[str]:
        """apt's options that point every path at the sandbox (and ``status``)."""
        d = self.dir
        return [
            "-o",
            f"Dir::Etc::SourceList={d / 'sources.list'}",
            "-o",
            f"Dir::Etc::SourceParts={d / 'sources.list.d'}",
            "-o",
            f"Dir::Etc::Preferences={d / 'preferences'}",
            "-o",
            f"Dir::Etc::PreferencesParts={d / 'preferences.d'}",
            "-o",
            f"Dir::State={d / 'state'}",
            "-o",
            f"Dir::State::Lists={d / 'lists'}",
            "-o",
            f"Dir::State::status={status}",
            "-o",
            f"Dir::Cache={d / 'cache'}",
            "-o",
            f"APT::Architecture={self.platform.arch}",
            "-o",
            f"APT::Architectures={self.platform.arch}",
            "-o",
            "APT::Install-Recommends=false",
            "-o",
            "APT::Sandbox::User=root",
            "-o",
            "Debug::NoLocking=true",
            "-o",
            "Acquire::Languages=none",
        ]

    def prepare(self, force: bool = False) -> bool:
        """Write the sandbox's sources and refresh its package lists when stale (or with
        ``force``); whether it refreshed them."""
        d = self.dir
        for sub in (
            "sources.list.d",
            "preferences.d",
            "state",
            "lists/partial",
            "cache/archives/partial",
            "archives",
        ):
            (d / sub).mkdir(parents=True, exist_ok=True)
        sources = "".join(
            f"deb [arch={self.platform.arch} signed-by={KEYRING}] {self.mirror} {suite} main\n"
            for suite in [self.platform.suite, *self.extra_suites]
        )
        changed = not (d / "sources.list").is_file() or (d / "sources.list").read_text() != sources
        (d / "sources.list").write_text(sources)
        (d / "preferences").write_text(self.preferences())
        stamp = d / "lists" / ".updated"
        fresh = stamp.is_file() and time.time() - stamp.stat().st_mtime < REFRESH_S
        if not (changed or force or not fresh):
            return False
        stamp.unlink(missing_ok=True)
        with tempfile.NamedTemporaryFile() as empty:
            self._apt(["apt-get", "-q", "update"], Path(empty.name), "apt-get update", timeout=600)
        stamp.touch()
        return True

    def preferences(self) -> str:
        """apt pins: each pinned package from its suite, nothing else from those suites."""
        named = [
            f"Package: {name}\nPin: release n={suite}\nPin-Priority: 990\n"
            for name, suite in sorted(self.pins.items())
        ]
        others = [
            f"Package: *\nPin: release n={suite}\nPin-Priority: -1\n" for suite in self.extra_suites
        ]
        return "\n".join(named + others)

    def missing(self, packages: Sequence[str], host_status: bytes) -> list[tuple[str, str]]:
        """(name, version) of what a host with dpkg status ``host_status`` must unpack to
        have ``packages`` installed, dependencies included."""
        with tempfile.NamedTemporaryFile(prefix="dpkg-status-") as status:
            status.write(host_status)
            status.flush()
            out = self._apt(
                ["apt-get", "-s", "-q", "install", *packages],
                Path(status.name),
                f"resolving {' '.join(packages)} for {self.platform}",
            )
        return parse_simulation(out)

    def download(self, wanted: Sequence[tuple[str, str]]) -> list[Path]:
        """The .deb files of ``wanted`` (name, version), downloaded unless already cached."""
        arch = self.platform.arch
        paths = []
        todo = []
        for name, version in wanted:
            found = sorted(self.debs.glob(deb_name(name, version, "*")))
            if found:
                paths.append(found[0])
            else:
                todo.append(f"{name}={version}")
        if todo:
            with tempfile.NamedTemporaryFile() as empty:
                self._apt(
                    ["apt-get", "-q", "download", *todo],
                    Path(empty.name),
                    f"downloading {' '.join(todo)}",
                    cwd=self.debs,
                    timeout=600,
                )
            for name, version in wanted:
                found = sorted(self.debs.glob(deb_name(name, version, "*")))
                if not found:
                    raise ClusterError(
                        f"apt-get download left no {deb_name(name, version, arch)} in {self.debs}"
                    )
                if found[0] not in paths:
                    paths.append(found[0])
        return paths

    def fetch(self, packages: Sequence[str], host_status: bytes) -> list[Path]:
        """Everything a host with ``host_status`` lacks for ``packages``, as .deb files.

        One fetch at a time per sandbox (the hosts of a cluster are prepared in parallel,
        and apt's lists and archives must not be written by two apt-gets at once)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        with (self.dir / ".lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                updated = self.prepare()
                try:
                    wanted = self.missing(packages, host_status)
                except ClusterError:
                    if updated:
                        raise
                    self.prepare(force=True)  # lists damaged or out of date: once more
                    wanted = self.missing(packages, host_status)
                return self.download(wanted)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _apt(
        self,
        argv: list[str],
        status: Path,
        what: str,
        *,
        cwd: Path | None = None,
        timeout: float = 120,
    ) -> str:
        cmd = [argv[0], *self.options(status), *argv[1:]]
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                cwd=cwd,
                timeout=timeout,
                env={**os.environ, "LC_ALL": "C"},
            )
        except FileNotFoundError:
            raise ClusterError(
                "apt-get is missing on this machine, so it cannot download "
                "packages for the hosts; use --ssh-install apt or present, or "
                "run the harness from a Debian or Ubuntu machine"
            ) from None
        except subprocess.TimeoutExpired:
            raise ClusterError(
                f"{what} took over {timeout:g}s; check this machine's access to {self.mirror}"
            ) from None
        if proc.returncode != 0:
            lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines() if ln.strip()]
            raise ClusterError(
                f"{what} failed on this machine (exit {proc.returncode}): {' | '.join(lines[-4:])}"
            )
        return proc.stdout
