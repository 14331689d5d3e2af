"""The one place that talks to the Docker engine's connection and names our labels.

Every container, network and image the harness creates carries ``harness=1`` plus the labels
below, and the harness only ever removes things carrying them. ``connect`` turns an
unreachable engine into one ``ClusterError`` line that says what to do; ``tar`` and
``extract`` carry files into and out of a container.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path
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


def tar(files: dict[str, tuple[str, int]]) -> bytes:
    """A tar of ``files`` (absolute path -> (content, mode)), with parent directories."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        dirs: set[str] = set()
        for path in files:
            parts = path.strip("/").split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        for d in sorted(dirs):
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if d == "tmp" else 0o755
            tar.addfile(info)
        for path, (text, mode) in files.items():
            data = text.encode()
            info = tarfile.TarInfo(path.strip("/"))
            info.size = len(data)
            info.mode = mode
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def extract(data: bytes, dest: Path) -> None:
    """Extract a ``get_archive`` tar into ``dest``, dropping its top directory."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        members = []
        for m in tar.getmembers():
            _, _, rest = m.name.partition("/")
            if not rest:
                continue
            m.name = rest
            members.append(m)
        tar.extractall(dest, members=members, filter="data")
