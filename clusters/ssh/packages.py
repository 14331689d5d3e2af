"""Debian packages on a host: find what is missing, install it, and remove it again.

Three ways to install (``INSTALL_MODES``):

- ``apt``: the host's own ``apt-get`` (it must reach a mirror);
- ``upload``: the control machine resolves and downloads the missing .debs for the host's
  release (``clusters.ssh.debs``), uploads them and runs ``dpkg -i``: the way for hosts
  off the internet, such as our test network;
- ``present``: install nothing; the packages must already be there;
- ``auto`` (default): ``apt`` when the host's ``apt-get update`` succeeds, else ``upload``.

During the install a ``policy-rc.d`` (Debian's switch for "do not start services from
maintainer scripts") keeps a package's own service from starting, and the service is then
disabled, so a distribution unit (``etcd.service`` on localhost) never competes with the
harness's server for its ports. The policy file is only written when the host has none,
and always removed afterwards.

``Installed`` records what was newly installed (the difference of the host's installed
packages before and after, dependencies included), so ``remove`` purges exactly that.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from clusters.base import ClusterError
from clusters.remote.base import Remote, RemoteError, get_text, must, put_text, tail
from clusters.ssh.debs import AptSandbox, Platform

log = logging.getLogger(__name__)

INSTALL_MODES = ("auto", "apt", "upload", "present")
POLICY_RC = "/usr/sbin/policy-rc.d"
APT_ENV = "DEBIAN_FRONTEND=noninteractive"
APT_OPTS = "-q -o Acquire::Retries=0 -o Acquire::http::Timeout=10 -o Dpkg::Use-Pty=0"
INSTALL_TIMEOUT = 600.0
LIST_INSTALLED = "dpkg-query -W -f '${db:Status-Abbrev} ${Package}\\n' 2>/dev/null; true"
PLATFORM = ('. /etc/os-release 2>/dev/null; echo "${ID:-unknown} ${VERSION_CODENAME:-unknown}"; '
            "dpkg --print-architecture")


@dataclass
class Installed:
    """What the harness installed on one host (so it can be undone)."""

    packages: list[str] = field(default_factory=list)
    """Newly installed packages, dependencies included."""
    disabled: list[str] = field(default_factory=list)
    """Services the harness disabled (their packages' own units)."""
    how: str = "present"


def installed_packages(remote: Remote, partly: bool = False) -> set[str]:
    """The names of the packages installed on the host: fully (dpkg state ``ii``), or with
    ``partly`` in any state that leaves something to purge (unpacked, half-configured...)."""
    out = remote.run(LIST_INSTALLED, timeout=60).stdout
    found = set()
    for words in map(str.split, out.splitlines()):
        if len(words) != 2 or len(words[0]) < 2:
            continue
        if words[0][:2] == "ii" or (partly and words[0][1] != "n"):
            found.add(words[1].split(":")[0])
    return found


def host_platform(remote: Remote) -> Platform:
    """The host's distribution, release codename and dpkg architecture."""
    lines = remote.run(PLATFORM, timeout=30).stdout.split()
    if len(lines) != 3 or "unknown" in lines[:2]:
        raise ClusterError(f"{remote.host}: not a Debian or Ubuntu host (no /etc/os-release "
                           "codename or no dpkg); the SSH targets need one")
    return Platform(*lines)


class InstallFailed(ClusterError):
    """Installing failed part way; ``partial`` is what got installed anyway (to undo)."""

    def __init__(self, message: str, partial: Installed) -> None:
        super().__init__(message)
        self.partial = partial


class PackageInstaller:
    """Installs a target's packages on hosts, the way ``mode`` says."""

    def __init__(self, packages: Sequence[str], services: Sequence[str] = (),
                 mode: str = "auto", deb_dir: Path | None = None,
                 sandbox_root: Path | None = None) -> None:
        if mode not in INSTALL_MODES:
            raise ClusterError(f"Unknown install mode {mode!r}; choose from "
                               f"{', '.join(INSTALL_MODES)}")
        self.packages = list(packages)
        self.services = list(services)
        self.mode = mode
        self.deb_dir = deb_dir
        self.sandbox_root = sandbox_root

    def install(self, remote: Remote) -> Installed:
        """Make the packages present on ``remote``; what it installed (maybe nothing).

        On failure it raises ``InstallFailed`` carrying what was installed anyway."""
        before = installed_packages(remote)
        missing = [p for p in self.packages if p not in before]
        if not missing:
            return Installed()
        try:
            return self._install(remote, before, missing)
        except ClusterError as e:
            if isinstance(e, InstallFailed):
                raise
            try:
                partial = Installed(sorted(installed_packages(remote, partly=True) - before),
                                    how="failed")
            except ClusterError:
                partial = Installed()
            raise InstallFailed(str(e), partial) from None

    def _install(self, remote: Remote, before: set[str], missing: list[str]) -> Installed:
        if self.mode == "present":
            raise ClusterError(f"{remote.host}: {', '.join(missing)} not installed; install "
                               "them, or let the harness do it (--ssh-install auto)")
        how = self.mode
        with services_held(remote):
            if how in ("auto", "apt"):
                result = remote.run(f"{APT_ENV} apt-get {APT_OPTS} update", sudo=True,
                                    timeout=INSTALL_TIMEOUT)
                if result.ok:
                    how = "apt"
                    must(remote, f"{APT_ENV} apt-get {APT_OPTS} install -y "
                         f"--no-install-recommends {' '.join(missing)}",
                         f"apt-get install {' '.join(missing)}", sudo=True,
                         timeout=INSTALL_TIMEOUT)
                elif how == "apt":
                    raise ClusterError(f"{remote.host}: apt-get update failed, so its mirror "
                                       f"is out of reach ({tail(result.output, 2)}); use "
                                       "--ssh-install upload")
                else:
                    how = "upload"
                    log.info("%s: no mirror in reach, uploading packages", remote.host)
            if how == "upload":
                self._upload_and_install(remote, missing)
        after = installed_packages(remote)
        done = Installed(sorted(after - before), how=how)
        done.disabled = self._disable_services(remote)
        still = [p for p in self.packages if p not in after]
        if still:
            raise InstallFailed(f"{remote.host}: {', '.join(still)} still not installed after "
                                f"{how}; see the host's /var/log/dpkg.log", done)
        return done

    def remove(self, remote: Remote, installed: Installed) -> None:
        """Purge what ``install`` installed (nothing else)."""
        if not installed.packages:
            return
        names = " ".join(installed.packages)
        result = remote.run(f"{APT_ENV} apt-get {APT_OPTS} purge -y {names} || "
                            f"dpkg --purge {names}", sudo=True, timeout=INSTALL_TIMEOUT)
        if not result.ok:
            raise RemoteError(f"{remote.host}: could not purge {names}: {tail(result.output)}")

    def debs_for(self, remote: Remote, missing: Sequence[str]) -> list[Path]:
        """The .deb files to upload: from ``deb_dir`` when given, else downloaded here."""
        if self.deb_dir is not None:
            debs = sorted(self.deb_dir.glob("*.deb"))
            if not debs:
                raise ClusterError(f"No .deb files in {self.deb_dir}")
            return debs
        status = get_text(remote, "/var/lib/dpkg/status").encode()
        sandbox = AptSandbox(host_platform(remote), root=self.sandbox_root)
        return sandbox.fetch(missing, status)

    def _upload_and_install(self, remote: Remote, missing: Sequence[str]) -> None:
        debs = self.debs_for(remote, missing)
        staging = f"/var/cache/harness-debs-{secrets.token_hex(4)}"
        try:
            for deb in debs:
                remote.upload(deb, f"{staging}/{deb.name}")
            must(remote, f"{APT_ENV} dpkg -i {staging}/*.deb",
                 f"dpkg -i of {len(debs)} uploaded packages", sudo=True,
                 timeout=INSTALL_TIMEOUT)
        finally:
            remote.run(["rm", "-rf", staging], sudo=True, timeout=60)

    def _disable_services(self, remote: Remote) -> list[str]:
        """Disable (and stop, if running) the packages' own units; the ones it disabled."""
        disabled = []
        for unit in self.services:
            result = remote.run(
                f"[ -d /run/systemd/system ] && "
                f"systemctl list-unit-files {unit}.service >/dev/null 2>&1 && "
                f"systemctl disable --now {unit}.service >/dev/null 2>&1", sudo=True, timeout=60)
            if result.ok:
                disabled.append(unit)
        return disabled


@contextmanager
def services_held(remote: Remote) -> Iterator[None]:
    """While installing: a policy-rc.d that forbids starting services (when the host has
    none of its own), removed afterwards."""
    ours = not remote.run(["test", "-e", POLICY_RC], timeout=30).ok
    if ours:
        put_text(remote, POLICY_RC, "#!/bin/sh\n# harness: installing packages\nexit 101\n",
                 0o755)
    try:
        yield
    finally:
        if ours:
            remote.run(["rm", "-f", POLICY_RC], sudo=True, timeout=30)
