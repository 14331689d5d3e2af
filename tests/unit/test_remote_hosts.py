"""Host specs, host lists and nodes files: what the user writes, and one-line refusals."""

from __future__ import annotations

from pathlib import Path

import pytest

from clusters.remote.hosts import HostSpec, hosts_from, parse_host, read_nodes_file
from core.cluster import ClusterError


@pytest.mark.parametrize(
    ("text", "spec"),
    [
        ("n1", HostSpec("n1")),
        ("10.0.0.5", HostSpec("10.0.0.5")),
        ("admin@n1.lab", HostSpec("n1.lab", "admin")),
        ("n1:2222", HostSpec("n1", None, 2222)),
        ("root@10.0.0.5:22", HostSpec("10.0.0.5", "root", 22)),
        ("[fe80::1]:2222", HostSpec("fe80::1", None, 2222)),
        ("ops@[::1]", HostSpec("::1", "ops")),
        ("::1", HostSpec("::1")),
        ("  n2  ", HostSpec("n2")),
    ],
)
def test_host_specs(text: str, spec: HostSpec) -> None:
    assert parse_host(text) == spec


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("a b", "spaces"),
        ("n1:0", "port '0'"),
        ("n1:70000", "port '70000'"),
        ("n1:ssh", "port 'ssh'"),
        ("[::1", "unbalanced"),
        ("bad user@n1", "spaces"),
        ("@n1", "user ''"),
        ("u@", "host ''"),
        ("n1/x", "host 'n1/x'"),
    ],
)
def test_bad_specs_are_refused_in_one_line_with_the_format(text: str, why: str) -> None:
    with pytest.raises(ClusterError) as e:
        parse_host(text)
    assert why in str(e.value)
    assert "user@host:port" in str(e.value) and "\n" not in str(e.value)


def test_a_spec_prints_as_written() -> None:
    assert str(HostSpec("n1", "root", 2222)) == "root@n1:2222"
    assert str(HostSpec("::1", None, 22)) == "[::1]:22"
    assert str(HostSpec("n1")) == "n1"


def test_nodes_file_skips_blank_lines_and_comments(tmp_path: Path) -> None:
    f = tmp_path / "nodes"
    f.write_text("# lab\nn1\n\nroot@n2:2222  # the second\n   n3\n")
    assert read_nodes_file(f) == [HostSpec("n1"), HostSpec("n2", "root", 2222), HostSpec("n3")]


def test_a_bad_line_is_named_by_its_number(tmp_path: Path) -> None:
    f = tmp_path / "nodes"
    f.write_text("n1\nn2:x\n")
    with pytest.raises(ClusterError, match=r"line 2 of .*nodes"):
        read_nodes_file(f)


def test_an_empty_or_missing_nodes_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").write_text("# nothing\n")
    with pytest.raises(ClusterError, match="names no host"):
        read_nodes_file(tmp_path / "empty")
    with pytest.raises(ClusterError, match="Cannot read nodes file"):
        read_nodes_file(tmp_path / "missing")


def test_hosts_come_from_the_list_then_the_file(tmp_path: Path) -> None:
    f = tmp_path / "nodes"
    f.write_text("n3\n")
    assert [h.host for h in hosts_from("n1, n2", f)] == ["n1", "n2", "n3"]
    assert [h.host for h in hosts_from(["n1"])] == ["n1"]


def test_no_host_or_a_host_named_twice_is_refused() -> None:
    with pytest.raises(ClusterError, match="No hosts given"):
        hosts_from("", None)
    with pytest.raises(ClusterError, match="named twice"):
        hosts_from("n1,root@N1")
    assert len(hosts_from("n1:22,n1:2222")) == 2  # two sshd ports: two machines, maybe
