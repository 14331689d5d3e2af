"""The one place that talks to the Docker engine's connection and names our labels.

Every container, network and image the harness creates carries ``harness=1`` plus the labels
below, and the harness only ever removes things carrying them. ``connect`` turns an
unreachable engine into one ``ClusterError`` line that says what to do.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.cluster import ClusterError

if TYPE_CHECKING:
    import docker

LABEL = "harness"
"""Present (value "1") on everything the harness creates."""
LABEL_RUN = "harness.run"
"""The run id that created a container or network."""
LABEL_TARGET = "harness.target"
"""The target (etcd, zookeeper...) a container or network belongs to."""
LABEL_NODE = "harness.node"
"""The node name a container plays."""
LABEL_IMAGE = "harness.image"
"""On images: the image definition's name (base, etcd, ...)."""


def labels(run_id: str, target: str, node: str | None = None) -> dict[str, str]:
    """The labels for a container (with ``node``) or a network (without) of one run."""
    out = {LABEL: "1", LABEL_RUN: run_id, LABEL_TARGET: target}
    if node is not None:
        out[LABEL_NODE] = node
    return out


def connect(timeout: float = 120) -> docker.DockerClient:
    """A client for the local engine, checked with a ping; ClusterError when unreachable."""
    import docker
    from docker.errors import DockerException

    try:
        client = docker.from_env(timeout=int(timeout))
        client.ping()
    except DockerException as e:
        raise ClusterError(
            f"Docker is not reachable: {_first_line(e)}; install docker.io and start dockerd, "
            "or use --target sim"
        ) from None
    return client


def _first_line(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0]
