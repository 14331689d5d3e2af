"""The Docker targets' definitions, checked without Docker: registry, options, image tags,
the launcher each node runs, the mirror lookup. Fast; runs everywhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from clusters import _rootfs
from clusters._imagedef import ImageDef
from clusters.docker_cluster import DockerCluster
from clusters.images import image_names
from clusters.server import ClusterOptions, majority_vote
from clusters.target_registry import TARGETS
from core.cluster import Cluster, ClusterError, HasLeader, Killable, Pausable


def test_importing_the_registry_imports_no_docker() -> None:
    code = (
        "import sys, clusters, clusters.target_registry, core.cluster; "
        "assert 'docker' not in sys.modules, 'docker imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("name", ["etcd", "zookeeper", "consul", "redis", "redlock"])
def test_each_target_builds_a_cluster_with_its_abilities(name: str) -> None:
    spec = TARGETS[name]
    c = spec.build(ClusterOptions(run_id="r1"))
    assert isinstance(c, Cluster) and isinstance(c, Killable) and isinstance(c, Pausable)
    assert c.name == name
    assert len(c.nodes()) == spec.default_nodes
    assert isinstance(c, HasLeader) == (name in ("etcd", "zookeeper", "consul"))


def test_bad_options_are_one_clear_error() -> None:
    with pytest.raises(ClusterError, match="does not accept persistence"):
        TARGETS["etcd"].build(ClusterOptions(run_id="r1", persistence="aof-always"))
    with pytest.raises(ClusterError, match="odd number of nodes"):
        TARGETS["etcd"].build(ClusterOptions(run_id="r1", nodes=4))
    with pytest.raises(ClusterError, match="redlock"):
        TARGETS["redis"].build(ClusterOptions(run_id="r1", nodes=3))
    c = TARGETS["etcd"].build(ClusterOptions(run_id="r1", nodes=5))
    assert c.nodes() == ["n1", "n2", "n3", "n4", "n5"]


def test_image_names_map_targets_to_definitions() -> None:
    every = list(dict.fromkeys(t.image for t in TARGETS.values() if t.image is not None))
    assert image_names([]) == [(name, None) for name in every] and "redis" in every
    assert image_names(["redlock", "redis", "base"]) == [("redis", None), ("base", None)]
    with pytest.raises(ClusterError, match="Unknown target"):
        image_names(["mysql"])


def test_image_tag_follows_the_definition_files(tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text("ARG BASE\nFROM ${BASE}\n")
    (tmp_path / "extra.conf").write_text("a=1\n")
    (tmp_path / "cluster.py").write_text("# not part of the image\n")
    defn = ImageDef("x", tmp_path, "test", files=("extra.conf",))
    tag = defn.tag("harness/base:1")
    assert tag.startswith("harness/x:") and tag == defn.tag("harness/base:1")
    (tmp_path / "cluster.py").write_text("# edited\n")
    assert defn.tag("harness/base:1") == tag
    assert defn.tag("harness/base:2") != tag
    (tmp_path / "extra.conf").write_text("a=2\n")
    assert defn.tag("harness/base:1") != tag


def test_launcher_preloads_faketime_only_when_asked() -> None:
    with_ft = TARGETS["redis"].build(ClusterOptions(run_id="r1"))
    without = TARGETS["etcd"].build(ClusterOptions(run_id="r1"))
    assert isinstance(with_ft, DockerCluster) and isinstance(without, DockerCluster)
    script = with_ft.launcher(with_ft.layout("10.77.9.0/24")[0].name)
    assert "export LD_PRELOAD=" in script and "FAKETIME_DONT_FAKE_MONOTONIC=1" in script
    assert script.rstrip().endswith("exec redis-server /harness/redis.conf")
    nodes = without.layout("10.77.9.0/24")
    script = without.launcher(nodes[1].name)
    assert "LD_PRELOAD" not in script
    assert "--name n2" in script and "n3=http://10.77.9.13:2380" in script
    assert without.endpoints()["n1"] == "10.77.9.11:2379"


def test_redis_persistence_sets_the_append_only_file() -> None:
    def conf(persistence: str) -> str:
        c = TARGETS["redis"].build(ClusterOptions(run_id="r1", persistence=persistence))
        assert isinstance(c, DockerCluster)
        return "\n".join(c.launch(c.layout("10.77.9.0/24")[0].name).files.values())

    assert "appendonly no" in conf("none")
    assert "appendfsync everysec" in conf("aof-everysec")
    assert "appendfsync always" in conf("aof-always")


def test_majority_vote() -> None:
    assert majority_vote(["a", "a", None], 3) == "a"
    assert majority_vote(["a", "b", None], 3) is None
    assert majority_vote(["a", "a"], 5) is None


def test_mirror_is_read_from_apt_sources(tmp_path: Path) -> None:
    (tmp_path / "sources.list.d").mkdir()
    (tmp_path / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian-security\nSuites: x-security\n\n"
        "Types: deb\nURIs: http://mirror.example/debian/\nSuites: bookworm\n"
    )
    assert _rootfs._mirror_from_apt(tmp_path) == "http://mirror.example/debian"
    (tmp_path / "sources.list").write_text("deb [arch=amd64] http://other.example/debian x main\n")
    assert _rootfs._mirror_from_apt(tmp_path) == "http://other.example/debian"
