"""Resolving and downloading .debs for a host on the control machine (apt stubbed out)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from clusters.ssh import debs
from clusters.ssh.debs import AptSandbox, Platform, deb_name, parse_simulation, suite_pins
from core.cluster import ClusterError

SIMULATION = """NOTE: This is only a simulation!
Reading package lists...
Inst adduser (3.152 Debian:13.2/stable [all])
Inst etcd-server (3.5.16-4 Debian:13.2/stable [amd64])
Inst libfoo [1.0] (1:2.0-1 Debian:13.2/stable [amd64])
Conf adduser (3.152 Debian:13.2/stable [all])
"""


def test_the_simulation_says_what_to_unpack_in_order() -> None:
    assert parse_simulation(SIMULATION) == [
        ("adduser", "3.152"),
        ("etcd-server", "3.5.16-4"),
        ("libfoo", "1:2.0-1"),
    ]


def test_deb_file_names_encode_the_epoch() -> None:
    assert deb_name("libfoo", "1:2.0-1", "amd64") == "libfoo_1%3a2.0-1_amd64.deb"


def test_only_debian_hosts_can_be_served_from_here(tmp_path: Path) -> None:
    with pytest.raises(ClusterError, match="--ssh-install apt"):
        AptSandbox(Platform("ubuntu", "noble", "amd64"), "http://m", tmp_path)


def test_every_apt_path_points_into_the_sandbox(tmp_path: Path) -> None:
    sb = AptSandbox(Platform("debian", "trixie", "arm64"), "http://m/debian", tmp_path)
    opts = sb.options(tmp_path / "status")
    joined = " ".join(opts)
    assert f"Dir::State::status={tmp_path / 'status'}" in joined
    assert "APT::Architecture=arm64" in joined
    for key in ("SourceList", "SourceParts", "Dir::State::Lists", "Dir::Cache"):
        value = next(o for o in opts if key in o).split("=", 1)[1]
        assert value.startswith(str(tmp_path))


class FakeApt:
    """Stands in for subprocess.run of apt-get: records argv, fakes downloads."""

    def __init__(self, fail: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.fail = fail

    def __call__(self, cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        self.calls.append(cmd)
        verb = next(
            a
            for a in cmd[1:]
            if not a.startswith("-")
            and "=" not in a
            and not a.startswith("Dir")
            and not a.startswith("APT")
            and not a.startswith("Acquire")
            and not a.startswith("Debug")
        )
        if verb == self.fail:
            return subprocess.CompletedProcess(cmd, 100, "", "E: Unable to locate package x\n")
        if verb == "download":
            for spec in cmd[cmd.index("download") + 1 :]:
                name, version = spec.split("=")
                (kw["cwd"] / deb_name(name, version, "amd64")).write_bytes(b"deb")
        out = SIMULATION if verb == "install" else ""
        return subprocess.CompletedProcess(cmd, 0, out, "")


def test_fetch_updates_resolves_against_the_host_and_downloads_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = FakeApt()
    monkeypatch.setattr(debs.subprocess, "run", apt)
    sb = AptSandbox(Platform("debian", "trixie", "amd64"), "http://m/debian", tmp_path)
    paths = sb.fetch(["etcd-server"], b"Package: base-files\nStatus: install ok installed\n")
    assert [p.name for p in paths] == [
        "adduser_3.152_amd64.deb",
        "etcd-server_3.5.16-4_amd64.deb",
        "libfoo_1%3a2.0-1_amd64.deb",
    ]
    assert "update" in apt.calls[0]
    assert any("-s" in c and "install" in c for c in apt.calls)
    sources = (tmp_path / "trixie-amd64" / "sources.list").read_text()
    assert sources == (
        "deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]"
        " http://m/debian trixie main\n"
    )
    apt.calls.clear()
    sb.fetch(["etcd-server"], b"")
    assert not any("update" in c for c in apt.calls), "fresh lists are reused"
    assert not any("download" in c for c in apt.calls), "cached .debs are reused"


def test_apt_failures_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(debs.subprocess, "run", FakeApt(fail="install"))
    sb = AptSandbox(Platform("debian", "trixie", "amd64"), "http://m/debian", tmp_path)
    with pytest.raises(ClusterError) as e:
        sb.fetch(["x"], b"")
    assert "\n" not in str(e.value)
    assert "resolving x for debian trixie amd64 failed" in str(e.value)
    assert "Unable to locate package x" in str(e.value)


def test_hosts_prepared_in_parallel_fetch_one_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading
    import time

    inside, most = [0], [0]
    apt = FakeApt()

    def slow(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        inside[0] += 1
        most[0] = max(most[0], inside[0])
        time.sleep(0.02)
        inside[0] -= 1
        return apt(cmd, **kw)

    monkeypatch.setattr(debs.subprocess, "run", slow)
    sb = AptSandbox(Platform("debian", "trixie", "amd64"), "http://m/debian", tmp_path)
    threads = [threading.Thread(target=sb.fetch, args=(["etcd-server"], b"")) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1
    assert sum("update" in c for c in apt.calls) == 1


def test_stale_or_damaged_lists_are_refreshed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    apt = FakeApt()
    monkeypatch.setattr(debs.subprocess, "run", apt)
    sb = AptSandbox(Platform("debian", "trixie", "amd64"), "http://m/debian", tmp_path)
    sb.fetch(["etcd-server"], b"")  # lists now fresh
    apt.fail, apt.calls = "install", []

    def heal_on_update(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        if "update" in cmd:
            apt.fail = None
        return apt(cmd, **kw)

    monkeypatch.setattr(debs.subprocess, "run", heal_on_update)
    assert len(sb.fetch(["etcd-server"], b"")) == 3
    assert sum("update" in c for c in apt.calls) == 1


def test_a_package_the_host_s_release_lacks_comes_from_its_suite_and_only_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trixie = Platform("debian", "trixie", "amd64")
    assert suite_pins(trixie, ["consul", "etcd-server"]) == {"consul": "bullseye"}
    assert suite_pins(trixie, ["etcd-server"]) == {}
    assert suite_pins(Platform("debian", "bullseye", "amd64"), ["consul"]) == {}
    monkeypatch.setattr(debs.subprocess, "run", FakeApt())
    sb = AptSandbox(trixie, "http://m/debian", tmp_path, pins=suite_pins(trixie, ["consul"]))
    sb.fetch(["consul"], b"")
    assert sb.dir == tmp_path / "trixie+bullseye-amd64", "apart from the plain trixie lists"
    sources = (sb.dir / "sources.list").read_text().splitlines()
    assert [line.split()[-2] for line in sources] == ["trixie", "bullseye"]
    assert (sb.dir / "preferences").read_text() == (
        "Package: consul\nPin: release n=bullseye\nPin-Priority: 990\n\n"
        "Package: *\nPin: release n=bullseye\nPin-Priority: -1\n"
    )
    plain = AptSandbox(trixie, "http://m/debian", tmp_path)
    plain.prepare()
    assert (plain.dir / "preferences").read_text() == ""
