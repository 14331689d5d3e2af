"""Installing a target's packages on a host, and purging exactly what was installed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clusters.remote.base import CommandResult
from clusters.ssh.packages import (
    POLICY_RC,
    Installed,
    InstallFailed,
    PackageInstaller,
    to_purge,
    with_candidate,
)
from core.cluster import ClusterError
from tests.support.fake import FakeRemote


class DebianHost(FakeRemote):
    """A fake host whose dpkg database changes when packages are installed or purged."""

    def __init__(
        self,
        installed: set[str],
        mirror: bool = False,
        own_policy: bool = False,
        systemd: bool = False,
        sources: tuple[str, ...] = ("etcd-server", "etcd-client"),
    ) -> None:
        super().__init__("root@h1:22")
        self.installed = set(installed)
        self.on(
            "dpkg-query",
            respond=lambda _: CommandResult(
                0, "".join(f"ii  {p}\n" for p in sorted(self.installed)), ""
            ),
        )
        self.on(r"apt-get .* update", exit=0 if mirror else 100, stderr="Temporary failure\n")
        self.on(
            r"^apt-cache policy",
            stdout="".join(f"{p}:\n  Installed: (none)\n  Candidate: 1.0-1\n" for p in sources),
        )
        self.on(r"apt-get .* install", respond=self._apt_install)
        self.on(r"dpkg -i", respond=self._dpkg_install)
        self.on(r"purge", respond=self._purge)
        self.on(rf"^test -e {POLICY_RC}$", exit=0 if own_policy else 1)
        self.on(r"systemctl", exit=0 if systemd else 1)
        self.on(r"^\. /etc/os-release", stdout="debian trixie\namd64\n")

    def _apt_install(self, text: str) -> CommandResult:
        self.installed |= {w for w in text.split() if w.startswith("etcd")} | {"adduser"}
        return CommandResult(0, "", "")

    def _dpkg_install(self, text: str) -> CommandResult:
        self.installed |= {Path(p).name.split("_")[0] for p in self.files if p.endswith(".deb")}
        return CommandResult(0, "", "")

    def _purge(self, text: str) -> CommandResult:
        self.installed -= set(text.split("purge -y ")[1].split(" ||")[0].split())
        return CommandResult(0, "", "")


@pytest.fixture
def deb_dir(tmp_path: Path) -> Path:
    for name in (
        "adduser_3.152_all.deb",
        "etcd-server_3.5.16-4_amd64.deb",
        "etcd-client_3.5.16-4_amd64.deb",
    ):
        (tmp_path / name).write_bytes(b"!<arch>")
    return tmp_path


PKGS = ("etcd-server", "etcd-client")


def test_nothing_is_done_when_the_packages_are_there() -> None:
    host = DebianHost({"etcd-server", "etcd-client"})
    assert PackageInstaller(PKGS, ("etcd",)).install(host) == Installed()
    assert not host.ran("apt-get|dpkg -i")


def test_apt_is_used_when_the_host_reaches_a_mirror() -> None:
    host = DebianHost({"base-files"}, mirror=True)
    done = PackageInstaller(PKGS, ("etcd",)).install(host)
    assert done.how == "apt"
    assert done.packages == ["adduser", "etcd-client", "etcd-server"]
    assert host.ran(r"apt-get .* install -y --no-install-recommends etcd-server etcd-client")
    assert all(c.sudo for c in host.calls if "apt-get" in c.text)


def test_without_a_mirror_the_debs_are_uploaded_and_dpkg_installed(deb_dir: Path) -> None:
    host = DebianHost({"base-files"})
    done = PackageInstaller(PKGS, ("etcd",), deb_dir=deb_dir).install(host)
    assert done.how == "upload"
    assert done.packages == ["adduser", "etcd-client", "etcd-server"]
    staged = [p for p in host.files if p.endswith(".deb")]
    assert len(staged) == 3 and all(p.startswith("/var/cache/harness-debs-") for p in staged)
    assert host.ran(r"dpkg -i /var/cache/harness-debs-\w+/\*\.deb")
    assert host.ran(r"rm -rf /var/cache/harness-debs-"), "the uploaded files are removed"


def test_services_cannot_start_during_the_install_and_are_disabled_after(deb_dir: Path) -> None:
    host = DebianHost({"base-files"}, systemd=True)
    done = PackageInstaller(PKGS, ("etcd",), deb_dir=deb_dir).install(host)
    order = [c.text for c in host.calls]
    wrote = order.index(POLICY_RC)
    dpkg = next(i for i, t in enumerate(order) if t.startswith("DEBIAN_FRONTEND") and "dpkg" in t)
    removed = order.index(f"rm -f {POLICY_RC}")
    assert wrote < dpkg < removed
    assert host.files[POLICY_RC].endswith(b"exit 101\n") and host.modes[POLICY_RC] == 0o755
    assert done.disabled == ["etcd"]
    assert host.ran("systemctl disable --now etcd.service")


def test_a_host_s_own_policy_rc_d_is_left_alone(deb_dir: Path) -> None:
    host = DebianHost({"base-files"}, own_policy=True)
    PackageInstaller(PKGS, deb_dir=deb_dir).install(host)
    assert POLICY_RC not in host.files and not host.ran(f"rm -f {POLICY_RC}")


def test_apt_mode_refuses_a_host_without_mirror() -> None:
    with pytest.raises(ClusterError, match="use --ssh-install upload"):
        PackageInstaller(PKGS, mode="apt").install(DebianHost(set()))


def test_present_mode_installs_nothing() -> None:
    host = DebianHost({"etcd-server"})
    with pytest.raises(ClusterError, match="etcd-client not installed"):
        PackageInstaller(PKGS, mode="present").install(host)
    assert not host.ran("apt-get|dpkg -i")


def test_unknown_mode_or_empty_deb_dir(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="choose from auto, apt, upload, present"):
        PackageInstaller(PKGS, mode="yum")
    with pytest.raises(ClusterError, match=r"No \.deb files"):
        PackageInstaller(PKGS, deb_dir=tmp_path, mode="upload").install(DebianHost(set()))


def test_remove_purges_exactly_what_was_installed(deb_dir: Path) -> None:
    host = DebianHost({"base-files", "curl"})
    installer = PackageInstaller(PKGS, deb_dir=deb_dir)
    done = installer.install(host)
    installer.remove(host, done)
    assert host.installed == {"base-files", "curl"}
    installer.remove(host, Installed())
    assert len([c for c in host.commands() if "purge" in c]) == 1


def test_a_failed_install_reports_what_it_left_so_it_can_be_purged(deb_dir: Path) -> None:
    host = DebianHost({"base-files"})

    def half(_: str) -> CommandResult:
        host.installed.add("adduser")
        host.on("dpkg-query", stdout="ii  base-files\nii  adduser\niU  etcd-server\n")
        return CommandResult(1, "", "dpkg: dependency problems prevent configuration")

    host.on(r"dpkg -i", respond=half)
    with pytest.raises(InstallFailed) as e:
        PackageInstaller(PKGS, deb_dir=deb_dir).install(host)
    assert "dpkg -i of 3 uploaded packages failed" in str(e.value)
    assert e.value.partial.packages == ["adduser", "etcd-server"]


# -- packages the host's release lacks, commands already on the PATH --------------------------


def test_policy_output_says_which_packages_have_a_candidate() -> None:
    policy = (
        "etcd-server:\n  Installed: (none)\n  Candidate: 3.5.16-4\n  Version table:\n"
        "consul:\n  Installed: (none)\n  Candidate: (none)\n"
        "libc6:amd64:\n  Installed: 2.41\n  Candidate: 2.41\n"
    )
    assert with_candidate(policy) == {"etcd-server", "libc6"}


def test_auto_uploads_what_the_host_s_sources_lack(tmp_path: Path) -> None:
    (tmp_path / "consul_1.8.7+dfsg1-2+b3_amd64.deb").write_bytes(b"!<arch>")
    host = DebianHost({"base-files"}, mirror=True)  # a mirror, but trixie has no consul
    done = PackageInstaller(["consul"], ("consul",), deb_dir=tmp_path).install(host)
    assert done.how == "upload" and done.packages == ["consul"]
    assert host.ran(r"^apt-cache policy consul$") and not host.ran(r"apt-get .* install")


def test_apt_mode_names_where_debian_has_a_package_its_sources_lack() -> None:
    host = DebianHost({"base-files"}, mirror=True)
    with pytest.raises(ClusterError) as e:
        PackageInstaller(["consul"], mode="apt").install(host)
    assert str(e.value) == (
        "root@h1:22: its apt sources have no consul (Debian has consul "
        "only in bullseye); use --ssh-install upload (or --ssh-debs DIR)"
    )


def test_a_command_on_the_path_counts_as_its_package() -> None:
    host = DebianHost({"base-files"}).on(r"^command -v consul", exit=0)
    installer = PackageInstaller(["consul"], mode="present", commands={"consul": "consul"})
    assert installer.install(host) == Installed()
    assert host.calls[-1].sudo, "root's PATH (sudo's secure_path) is the one that counts"
    with pytest.raises(ClusterError, match="consul not installed"):
        installer.install(DebianHost({"base-files"}).on(r"^command -v consul", exit=1))


# -- the install record on the host, for cleaning up after a killed harness -------------------

RECORD = "/var/lib/harness/r1/packages.json"


def record_of(host: DebianHost) -> dict[str, object]:
    data: dict[str, object] = json.loads(host.files[RECORD])
    return data


def test_the_record_says_what_was_before_then_what_was_installed(deb_dir: Path) -> None:
    host = DebianHost({"base-files"})
    seen: list[dict[str, object]] = []

    def dpkg(text: str) -> CommandResult:
        seen.append(record_of(host))
        return host._dpkg_install(text)

    host.on(r"dpkg -i", respond=dpkg)
    done = PackageInstaller(PKGS, deb_dir=deb_dir).install(host, RECORD)
    assert seen == [{"installing": ["etcd-server", "etcd-client"], "before": ["base-files"]}]
    assert record_of(host) == {"installed": done.packages, "how": "upload", "disabled": []}
    assert host.modes[RECORD] == 0o600
    host.on(rf"^cat {RECORD}$", stdout=host.files[RECORD].decode())
    assert to_purge(host, RECORD) == ["adduser", "etcd-client", "etcd-server"]


def test_an_install_cut_short_is_purged_from_the_packages_before_it(deb_dir: Path) -> None:
    host = DebianHost({"base-files", "curl"})
    host.on(
        rf"^cat {RECORD}$",
        stdout=json.dumps({"installing": ["etcd-server"], "before": ["base-files", "curl", "old"]}),
    )
    host.on(
        "dpkg-query", stdout="ii  base-files\nii  curl\nii  adduser\niU  etcd-server\nrc  old\n"
    )
    assert to_purge(host, RECORD) == ["adduser", "etcd-server"]
    assert to_purge(DebianHost(set()).on("^cat ", exit=1), RECORD) == [], "no record"
    with pytest.raises(ClusterError, match="not an install record"):
        to_purge(DebianHost(set()).on("^cat ", stdout="garbage"), RECORD)


def test_a_failed_install_records_what_it_left(deb_dir: Path) -> None:
    host = DebianHost({"base-files"})

    def half(_: str) -> CommandResult:
        host.installed.add("adduser")
        return CommandResult(1, "", "dpkg: error")

    host.on(r"dpkg -i", respond=half)
    with pytest.raises(InstallFailed):
        PackageInstaller(PKGS, deb_dir=deb_dir).install(host, RECORD)
    assert record_of(host) == {"installed": ["adduser"], "how": "failed", "disabled": []}
