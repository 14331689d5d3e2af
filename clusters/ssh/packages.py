"""Debian packages on a host: find what is missing, install it, and remove it again.

Three ways to install (``INSTALL_MODES``):

- ``apt``: the host's own ``apt-get`` (it must reach a mirror that has the packages);
- ``upload``: the control machine resolves and downloads the missing .debs for the host's
  release (``clusters.ssh.debs``), uploads them and runs ``dpkg -i``: the way for hosts
  off the internet, such as our test network;
- ``present``: install nothing; the packages must already be there;
- ``auto`` (default): ``apt`` when the host's ``apt-get update`` succeeds and its sources
  have every package, else ``upload`` (consul, say, which current Debian releases lack:
  ``clusters.ssh.debs.SUITE_OVERRIDES``).

A package also counts as present when its command is on the host's PATH (``commands``:
consul installed from HashiCorp's zip, say), so such a host needs nothing installed.

During the install a ``policy-rc.d`` (Debian's switch for "do not start services from
maintainer scripts") keeps a package's own service from starting, and the service is then
disabled, so a distribution unit (``etcd.service`` on localhost) never competes with the
harness's server for its ports. The policy file is only written when the host has none,
and always removed afterwards.

``Installed`` records what was newly installed (the difference of the host's installed
packages before and after, dependencies included), so ``remove`` purges exactly that. With
a ``record`` path, the same is written on the host as JSON (first the packages installed
before, while installing; then what was installed), so that ``harness clusters down --ssh``
can purge it after the harness itself died (``clusters.ssh.cleanup``, ``to_purge``).
"""

from __future__ import annotations

import json
import logging
import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from clusters.remote.base import Remote, RemoteError, get_text, must, put_text, tail
from clusters.ssh.debs import SUITE_OVERRIDES, AptSandbox, Platform, suite_pins
from core.cluster import ClusterError

log = logging.getLogger(__name__)

INSTALL_MODES = ("auto", "apt", "upload", "present")
POLICY_RC = "/usr/sbin/policy-rc.d"
DEB_STAGING = "/var/cache/harness-debs"
"""Uploaded .debs wait in ``DEB_STAGING-<random>`` on a host until ``dpkg -i``."""
POLICY_MARK = "# harness: installing packages"
"""The second line of the policy-rc.d the harness writes (so a leftover can be told apart)."""
APT_ENV = "DEBIAN_FRONTEND=noninteractive"
APT_OPTS = "-q -o Acquire::Retries=0 -o Acquire::http::Timeout=10 -o Dpkg::Use-Pty=0"
INSTALL_TIMEOUT = 600.0
LIST_INSTALLED = "dpkg-query -W -f '${db:Status-Abbrev} ${Package}\\n' 2>/dev/null; true"
PLATFORM = (
    '. /etc/os-release 2>/dev/null; echo "${ID:-unknown} ${VERSION_CODENAME:-unknown}"; '
    "dpkg --print-architecture"
)


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


def with_candidate(policy: str) -> set[str]:
    """The packages ``apt-cache policy`` output shows an installation candidate for."""
    found, name = set(), None
    for line in policy.splitlines():
        if line[:1].strip() and line.rstrip().endswith(":"):
            name = line.strip()[:-1].split(":")[0]
        elif name and line.strip().startswith("Candidate:") and "(none)" not in line:
            found.add(name)
    return found


def purge(remote: Remote, names: Sequence[str]) -> None:
    """Purge the packages ``names`` from the host (apt, else dpkg); RemoteError if neither
    could."""
    if not names:
        return
    text = " ".join(names)
    result = remote.run(
        f"{APT_ENV} apt-get {APT_OPTS} purge -y {text} || dpkg --purge {text}",
        sudo=True,
        timeout=INSTALL_TIMEOUT,
    )
    if not result.ok:
        raise RemoteError(f"{remote.host}: could not purge {text}: {tail(result.output)}")


def to_purge(remote: Remote, record: str) -> list[str]:
    """What the install record ``record`` on the host says the run installed: the packages
    it lists, or, for an install that never finished, everything installed since (even
    partly) that was not before. Nothing when the host has no such record."""
    found = remote.run(["cat", record], sudo=True, timeout=30)
    if not found.ok:
        return []
    try:
        data = json.loads(found.stdout)
    except ValueError:
        raise RemoteError(
            f"{remote.host}: {record} is not an install record (not JSON); "
            "look at it and purge by hand"
        ) from None
    if "installed" in data:
        return sorted(data["installed"])
    return sorted(installed_packages(remote, partly=True) - set(data.get("before", [])))


def host_platform(remote: Remote) -> Platform:
    """The host's distribution, release codename and dpkg architecture."""
    lines = remote.run(PLATFORM, timeout=30).stdout.split()
    if len(lines) != 3 or "unknown" in lines[:2]:
        raise ClusterError(
            f"{remote.host}: not a Debian or Ubuntu host (no /etc/os-release "
            "codename or no dpkg); the SSH targets need one"
        )
    return Platform(*lines)


class InstallFailed(ClusterError):
    """Installing failed part way; ``partial`` is what got installed anyway (to undo)."""

    def __init__(self, message: str, partial: Installed) -> None:
        super().__init__(message)
        self.partial = partial


class PackageInstaller:
    """Installs a target's packages on hosts, the way ``mode`` says."""

    def __init__(
        self,
        packages: Sequence[str],
        services: Sequence[str] = (),
        mode: str = "auto",
        deb_dir: Path | None = None,
        sandbox_root: Path | None = None,
        commands: Mapping[str, str] | None = None,
    ) -> None:
        if mode not in INSTALL_MODES:
            raise ClusterError(
                f"Unknown install mode {mode!r}; choose from {', '.join(INSTALL_MODES)}"
            )
        self.packages = list(packages)
        self.services = list(services)
        self.mode = mode
        self.deb_dir = deb_dir
        self.sandbox_root = sandbox_root
        self.commands = dict(commands or {})
        """Package -> a command whose presence on the PATH also counts as the package."""

    def install(self, remote: Remote, record: str | None = None) -> Installed:
        """Make the packages present on ``remote``; what it installed (maybe nothing).
        With ``record``, what it installs is also written to that file on the host.

        On failure it raises ``InstallFailed`` carrying what was installed anyway."""
        before = installed_packages(remote)
        missing = [p for p in self.packages if p not in before and not self._on_path(remote, p)]
        if not missing:
            return Installed()
        if self.mode == "present":
            raise InstallFailed(
                f"{remote.host}: {', '.join(missing)} not installed; install "
                "them, or let the harness do it (--ssh-install auto)",
                Installed(),
            )
        # Anything in dpkg's database, even half-installed or removed with its configuration
        # kept, was the host's own: never purged (though "installed" counts only fully).
        known = installed_packages(remote, partly=True)
        if record is not None:
            _write_record(remote, record, {"installing": missing, "before": sorted(known)})
        try:
            done = self._install(remote, before, missing)
        except InstallFailed as e:
            with suppress(ClusterError):
                _record_done(remote, record, e.partial)
            raise
        except ClusterError as e:
            try:
                partial = Installed(
                    sorted(installed_packages(remote, partly=True) - known), how="failed"
                )
            except ClusterError:  # the host is gone: its record still names what was before
                raise InstallFailed(str(e), Installed()) from None
            with suppress(ClusterError):
                _record_done(remote, record, partial)
            raise InstallFailed(str(e), partial) from None
        _record_done(remote, record, done)
        return done

    def _on_path(self, remote: Remote, package: str) -> bool:
        """Whether the command standing for ``package`` is on the host's PATH."""
        command = self.commands.get(package)
        return (
            command is not None
            and remote.run(f"command -v {command} >/dev/null", sudo=True, timeout=30).ok
        )

    def _install(self, remote: Remote, before: set[str], missing: list[str]) -> Installed:
        with services_held(remote):
            if self.mode in ("auto", "apt") and self._via_apt(remote, missing):
                how = "apt"
            else:
                how = "upload"
                self._upload_and_install(remote, missing)
        after = installed_packages(remote)
        done = Installed(sorted(after - before), how=how)
        done.disabled = self._disable_services(remote)
        still = [p for p in missing if p not in after]
        if still:
            raise InstallFailed(
                f"{remote.host}: {', '.join(still)} still not installed after "
                f"{how}; see the host's /var/log/dpkg.log",
                done,
            )
        return done

    def remove(self, remote: Remote, installed: Installed) -> None:
        """Purge what ``install`` installed (nothing else)."""
        purge(remote, installed.packages)

    def _via_apt(self, remote: Remote, missing: Sequence[str]) -> bool:
        """Install ``missing`` with the host's own apt; False when it cannot (no mirror in
        reach, or its sources lack one of them) and the mode lets them be uploaded."""
        update = remote.run(
            f"{APT_ENV} apt-get {APT_OPTS} update", sudo=True, timeout=INSTALL_TIMEOUT
        )
        why = ""
        if not update.ok:
            why = f"apt-get update failed, so its mirror is out of reach ({tail(update.output, 2)})"
        else:
            policy = remote.run(["apt-cache", "policy", *missing], timeout=60).stdout
            lacking = [p for p in missing if p not in with_candidate(policy)]
            if lacking:
                why = f"its apt sources have no {', '.join(lacking)}{_elsewhere(lacking)}"
        if why and self.mode == "apt":
            raise ClusterError(
                f"{remote.host}: {why}; use --ssh-install upload (or --ssh-debs DIR)"
            )
        if why:
            log.info("%s: %s; uploading the packages instead", remote.host, why)
            return False
        must(
            remote,
            f"{APT_ENV} apt-get {APT_OPTS} install -y --no-install-recommends {' '.join(missing)}",
            f"apt-get install {' '.join(missing)}",
            sudo=True,
            timeout=INSTALL_TIMEOUT,
        )
        return True

    def debs_for(self, remote: Remote, missing: Sequence[str]) -> list[Path]:
        """The .deb files to upload: from ``deb_dir`` when given, else downloaded here."""
        if self.deb_dir is not None:
            debs = sorted(self.deb_dir.glob("*.deb"))
            if not debs:
                raise ClusterError(f"No .deb files in {self.deb_dir}")
            return debs
        status = get_text(remote, "/var/lib/dpkg/status").encode()
        platform = host_platform(remote)
        sandbox = AptSandbox(platform, root=self.sandbox_root, pins=suite_pins(platform, missing))
        return sandbox.fetch(missing, status)

    def _upload_and_install(self, remote: Remote, missing: Sequence[str]) -> None:
        debs = self.debs_for(remote, missing)
        staging = f"{DEB_STAGING}-{secrets.token_hex(4)}"
        try:
            for deb in debs:
                remote.upload(deb, f"{staging}/{deb.name}")
            must(
                remote,
                f"{APT_ENV} dpkg -i {staging}/*.deb",
                f"dpkg -i of {len(debs)} uploaded packages",
                sudo=True,
                timeout=INSTALL_TIMEOUT,
            )
        finally:
            remote.run(["rm", "-rf", staging], sudo=True, timeout=60)

    def _disable_services(self, remote: Remote) -> list[str]:
        """Disable (and stop, if running) the packages' own units; the ones it disabled."""
        disabled = []
        for unit in self.services:
            result = remote.run(
                f"[ -d /run/systemd/system ] && "
                f"systemctl list-unit-files {unit}.service >/dev/null 2>&1 && "
                f"systemctl disable --now {unit}.service >/dev/null 2>&1",
                sudo=True,
                timeout=60,
            )
            if result.ok:
                disabled.append(unit)
        return disabled


@contextmanager
def services_held(remote: Remote) -> Iterator[None]:
    """While installing: a policy-rc.d that forbids starting services (when the host has
    none of its own), removed afterwards."""
    ours = not remote.run(["test", "-e", POLICY_RC], timeout=30).ok
    if ours:
        put_text(remote, POLICY_RC, f"#!/bin/sh\n{POLICY_MARK}\nexit 101\n", 0o755)
    try:
        yield
    finally:
        if ours:
            remote.run(["rm", "-f", POLICY_RC], sudo=True, timeout=30)


def _write_record(remote: Remote, path: str, data: dict[str, object]) -> None:
    put_text(remote, path, json.dumps(data, indent=1) + "\n", 0o600)


def _record_done(remote: Remote, path: str | None, done: Installed) -> None:
    """Record on the host what an install left (when there is a record to keep)."""
    if path is not None:
        _write_record(
            remote, path, {"installed": done.packages, "how": done.how, "disabled": done.disabled}
        )


def _elsewhere(names: Sequence[str]) -> str:
    """Where Debian has packages that the current releases lack, for a message."""
    known = [f"{n} only in {SUITE_OVERRIDES[n]}" for n in names if n in SUITE_OVERRIDES]
    return f" (Debian has {', '.join(known)})" if known else ""
