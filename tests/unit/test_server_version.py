"""``server_version``: the first line a node prints, or "unknown", never an exception."""

from __future__ import annotations

from core.cluster import ClusterError, server_version


class Node:
    """Answers every command with ``out``, or raises ``error``."""

    def __init__(self, out: str = "", error: Exception | None = None) -> None:
        self.out, self.error = out, error
        self.ran: list[list[str] | str] = []

    def nodes(self) -> list[str]:
        return ["n1", "n2"]

    def exec(self, node: str, cmd: list[str] | str) -> tuple[int, str]:
        assert node == "n1"
        self.ran.append(cmd)
        if self.error is not None:
            raise self.error
        return 0, self.out


def test_the_first_line_after_the_prefix() -> None:
    node = Node("3.9.3-1+deb13u1\n")
    assert server_version(node, ("dpkg-query", "-W"), "zookeeper ") == "zookeeper 3.9.3-1+deb13u1"
    assert node.ran == [["dpkg-query", "-W"]]
    assert (
        server_version(Node("etcd Version: 3.5.16\nGit SHA: Not provided\n"), ("etcd", "--version"))
        == "etcd Version: 3.5.16"
    )


def test_unknown_when_there_is_nothing_to_say() -> None:
    assert server_version(Node("anything"), None) == "unknown"
    assert server_version(Node("\n"), ("consul", "version")) == "unknown"
    assert server_version(Node(error=ClusterError("n1 is down")), ("consul", "version")) == (
        "unknown"
    )
