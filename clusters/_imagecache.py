"""A directory of ``docker save | zstd`` archives, one per image tag, to reload in seconds.

Building every image from nothing takes minutes; loading them back from here takes
seconds, so CI keeps this directory between runs. The file name is the tag (which is a hash
of the definition), so a stale archive is simply never looked up again.

Where: ``$HARNESS_IMAGE_CACHE`` or ``~/.cache/harness/images``; ``HARNESS_IMAGE_CACHE=off``
disables it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

from core.cluster import ClusterError

if TYPE_CHECKING:
    import docker


def cache_dir() -> Path:
    """The directory for image archives and debootstrap's downloaded packages."""
    env = os.environ.get("HARNESS_IMAGE_CACHE", "")
    if env and env != "off":
        return Path(env)
    return Path.home() / ".cache" / "harness" / "images"


def enabled() -> bool:
    """False when ``HARNESS_IMAGE_CACHE=off`` or zstd is missing."""
    return os.environ.get("HARNESS_IMAGE_CACHE") != "off" and shutil.which("zstd") is not None


def archive_path(tag: str) -> Path:
    """Where the archive of ``tag`` lives (it may not exist)."""
    return cache_dir() / (tag.replace("/", "_").replace(":", "-") + ".tar.zst")


def load(client: docker.DockerClient, tag: str) -> bool:
    """Load ``tag`` from its archive; False when there is none (or it is unreadable)."""
    path = archive_path(tag)
    if not enabled() or not path.is_file():
        return False
    unzstd = subprocess.Popen(["zstd", "-dcq", str(path)], stdout=subprocess.PIPE)
    assert unzstd.stdout is not None
    try:
        for _ in client.api.load_image(unzstd.stdout):
            pass
    finally:
        unzstd.stdout.close()
        unzstd.wait()
    if unzstd.returncode != 0:
        path.unlink(missing_ok=True)
        return False
    return True


def save(client: docker.DockerClient, tag: str) -> Path | None:
    """Write the archive of ``tag`` (atomically); None when the cache is disabled."""
    if not enabled():
        return None
    path = archive_path(tag)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    with partial.open("wb") as out:
        zstd = subprocess.Popen(
            ["zstd", "-q", "-T0", "-3", "-c"], stdin=subprocess.PIPE, stdout=out
        )
        assert zstd.stdin is not None
        try:
            for chunk in client.api.get_image(tag):
                zstd.stdin.write(chunk)
        finally:
            zstd.stdin.close()
            zstd.wait()
    if zstd.returncode != 0:
        partial.unlink(missing_ok=True)
        raise ClusterError(f"zstd failed (exit {zstd.returncode}) writing {path}")
    partial.replace(path)
    return path
