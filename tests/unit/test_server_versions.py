"""``--server-version``: the Debian releases each target's server comes from, listed in
``run --help``; a release a target lacks is one line naming the ones it has; the default
release keeps the images' tags; another release has its own base and image tags."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from test_cli import run
from test_cli_options import assert_one_line_254

from clusters import _rootfs, images
from clusters.etcd import server as etcd
from clusters.image_build import image_tag
from clusters.postgres import server as postgres
from clusters.redis import server as redis
from clusters.releases import DEFAULT_SUITE, SUITES, Release
from clusters.target_registry import server_versions
from clusters.zookeeper import server as zookeeper
from core.cluster import ClusterError

TABLES: dict[str, Mapping[str, Release]] = {
    "etcd": etcd.RELEASES,
    "zookeeper": zookeeper.RELEASES,
    "redis": redis.RELEASES,
    "postgres": postgres.RELEASES,
}


def test_run_help_lists_each_targets_versions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "run", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "--server-version RELEASE" in flat
    assert "etcd: bookworm 3.4.23, trixie 3.5.16" in flat
    assert "zookeeper: bullseye 3.4.13, bookworm 3.8.0" in flat
    assert "redis, redlock: bullseye 6.0.16, bookworm 7.0.15, trixie 8.0.2" in flat
    assert "postgres: bullseye 13.16" in flat
    assert "consul" not in server_versions() and "sim" not in server_versions()


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (
            ["--target", "etcd", "--server-version", "bullseye"],
            "etcd has no server version 'bullseye' (etcd 3.3.25 serves its JSON gateway "
            "under /v3beta, not the /v3 the clients use); choose from: bookworm "
            "(etcd-server 3.4.23-4+b4), trixie (etcd-server 3.5.16-4)",
        ),
        (
            ["--target", "zookeeper", "--server-version", "sid"],
            "zookeeper has no server version 'sid' (sid has no python3-fuse for the "
            "power-loss layer",
        ),
        (
            ["--target", "redis", "--server-version", "buster"],
            "redis has no server version 'buster'; choose from: bullseye (redis 6.0.16)",
        ),
        (["--server-version", "bookworm"], "sim has one version only: leave out"),
        (
            ["--target", "consul", "--server-version", "bookworm"],
            "consul has one version only: leave out --server-version",
        ),
        (
            ["--target", "etcd", "--server-version", "bookworm", "--persistence", "no-fsync"],
            "etcd 3.4.23-4+b4 (bookworm) has no --unsafe-no-fsync",
        ),
        (
            ["--target", "etcd", "--server-version", "bookworm", "--image", "x:y"],
            "--image names the image the nodes run, whatever its release",
        ),
        (
            ["--target", "zookeeper", "--server-version", "bullseye", "--nemesis", "clock"],
            "bullseye's libfaketime (0.9.8) makes the JVM's timed waits spin",
        ),
        (
            ["--target", "etcd", "--ssh", "--nodes", "10.9.9.1", "--server-version", "bookworm"],
            "--server-version chooses a Docker image; over SSH the hosts' packages are used",
        ),
    ],
)
def test_a_version_the_target_lacks_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], needle: str
) -> None:
    """Refused in one line before anything is written: a run that was not refused (as
    zookeeper sid once was not) writes in the test's own folder and fails here, not in
    a folder at the machine's root."""
    out_dir = tmp_path / "never-created"
    code, out, err = run(capsys, "run", *argv, "-o", str(out_dir))
    assert_one_line_254(code, out, err, needle)
    assert not out_dir.exists()


def test_every_table_has_the_default_and_only_known_suites() -> None:
    for name, table in TABLES.items():
        assert DEFAULT_SUITE in table, name
        assert list(table) == [s for s in SUITES if s in table], name
        assert not table[DEFAULT_SUITE].build_args, f"{name}: the default keeps its tag"


def test_the_default_release_keeps_the_tags_and_another_has_its_own() -> None:
    trixie, bookworm = etcd.RELEASES["trixie"], etcd.RELEASES["bookworm"]
    assert image_tag("etcd", trixie) == image_tag("etcd")
    assert image_tag("base", trixie) == image_tag("base") == _rootfs.base_tag()
    assert image_tag("base", bookworm) == _rootfs.base_tag("bookworm") != _rootfs.base_tag()
    assert image_tag("etcd", bookworm) not in (image_tag("etcd"), image_tag("base", bookworm))
    # Redis's releases differ in build arguments alone: each its own tag.
    tags = {image_tag("redis", r) for r in redis.RELEASES.values()}
    assert len(tags) == len(redis.RELEASES)


def test_images_take_target_at_release() -> None:
    assert images.image_names(["etcd@bookworm", "etcd"]) == [
        ("etcd", etcd.RELEASES["bookworm"]),
        ("etcd", None),
    ]
    with pytest.raises(ClusterError, match=r"^etcd has no server version 'sid' \(sid has no"):
        images.image_names(["etcd@sid"])
    with pytest.raises(ClusterError, match="sim has no server versions"):
        images.image_names(["sim@bookworm"])


def test_images_command_refuses_a_missing_release_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert images.main(["build", "redlock@sid"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: redlock has no server version 'sid'") and "\n" not in err


def test_zookeeper_3_4_gets_no_settings_it_does_not_know() -> None:
    old = zookeeper.zoo_cfg({1: "10.0.0.1"}, "/d", release=zookeeper.RELEASES["bullseye"])
    new = zookeeper.zoo_cfg({1: "10.0.0.1"}, "/d", release=zookeeper.RELEASES["bookworm"])
    assert "4lw.commands.whitelist=*" in new and "admin.enableServer=false" in new
    assert "4lw" not in old and "admin." not in old
    assert zookeeper.zoo_cfg({1: "10.0.0.1"}, "/d") == new
    spec = zookeeper.SERVER.with_release("bullseye")
    assert isinstance(spec, zookeeper.ZookeeperServer) and not spec.zk_release.settings_3_5


def test_a_docker_cluster_records_its_release_and_package_as_the_node_says() -> None:
    from clusters.docker_cluster import DockerCluster

    class Probed(DockerCluster):
        def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
            assert node == "n1" and list(cmd)[-1] == "etcd-server", cmd
            return 0, "etcd-server 3.4.23-4+b4\n"

    bookworm = Probed(etcd.SERVER.with_release("bookworm"), run_id="t1")
    assert bookworm.release() == {"release": "bookworm", "etcd package": "etcd-server 3.4.23-4+b4"}
    assert Probed(etcd.SERVER, run_id="t2", image="mine:1").release() == {}
    assert Probed(redis.REDIS.with_release("bullseye"), run_id="t3").release() == {
        "release": "bullseye"
    }


def _versioned_run(run_dir: Path, release: str, package: str) -> Path:
    """A checked etcd lock run whose test.json records the server its node said."""
    from harness.analysis import check_run
    from tests.support.synthetic import lock_run

    lock_run(run_dir, target="etcd")
    check_run(run_dir)
    test = json.loads((run_dir / "test.json").read_text())
    test["versions"].update(
        {"etcd": "etcd Version: x", "release": release, "etcd package": package}
    )
    (run_dir / "test.json").write_text(json.dumps(test))
    return run_dir


def test_compare_puts_two_versions_side_by_side(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    old = _versioned_run(tmp_path / "a" / "20260101T000000", "bookworm", "etcd-server 3.4.23-4+b4")
    new = _versioned_run(tmp_path / "b" / "20260101T000000", "trixie", "etcd-server 3.5.16-4")
    code, out, _ = run(capsys, "compare", str(old), str(new), "--json")
    assert code == 0
    cells = {c["row"]: c for c in json.loads(out)["cells"]}
    assert cells["etcd · lock · bookworm"]["servers"] == ["etcd-server 3.4.23-4+b4 (bookworm)"]
    assert cells["etcd · lock"]["servers"] == ["etcd-server 3.5.16-4 (trixie)"]
    code, out, _ = run(capsys, "compare", str(old), str(new))
    flat = " ".join(out.split())
    assert code == 0 and "etcd-server 3.4.23-4+b4" in flat and "etcd-server 3.5.16-4" in flat


def test_a_suite_run_with_a_list_of_versions_is_one_run_per_version(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    suite = tmp_path / "v.toml"
    suite.write_text(
        '[suite]\nname = "v"\n[defaults]\ntarget = "etcd"\ntime_limit = 20\n'
        '[[run]]\nname = "lock"\nserver_version = ["bookworm", "trixie"]\n'
        '[[run]]\nname = "plain"\n'
    )
    code, out, err = run(capsys, "suite", "run", str(suite), "--list", "--json")
    assert code == 0, err
    listed = json.loads(out)
    runs = listed["runs"] if isinstance(listed, dict) else listed
    assert [r["name"] for r in runs] == ["lock-bookworm", "lock-trixie", "plain"]
    suite.write_text(suite.read_text().replace('["bookworm", "trixie"]', '["bookworm", "sid"]'))
    code, out, err = run(capsys, "suite", "run", str(suite), "--list")
    assert code == 254 and "run 'lock-sid': etcd has no server version 'sid'" in err, err


def test_images_build_takes_target_at_release(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "images", "build", "postgres@buster")
    assert_one_line_254(code, out, err, "postgres has no server version 'buster'; choose from")
    code, _, _ = run(capsys, "images", "--help")
    assert code == 0
    code, out, _ = run(capsys, "images", "build", "--help")
    assert code == 0 and "TARGET@RELEASE" in out


def test_zookeeper_3_4_runs_without_libfaketime_and_the_others_with_it() -> None:
    assert not zookeeper.SERVER.with_release("bullseye").faketime_default
    assert zookeeper.SERVER.with_release("bookworm").faketime_default
    assert zookeeper.SERVER.faketime_default


def test_only_sids_base_ignores_the_release_files_expiry(tmp_path: Path) -> None:
    for suite in ("sid", "trixie"):
        _rootfs.slim(tmp_path / suite, suite)
    conf = "etc/apt/apt.conf.d/harness-sid"
    assert "Check-Valid-Until" in (tmp_path / "sid" / conf).read_text()
    assert not (tmp_path / "trixie" / conf).exists()
    assert (tmp_path / "trixie" / "etc/apt/apt.conf.d/harness").is_file()
