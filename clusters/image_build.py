"""Docker images built locally from Debian's packages: ``ensure_image(name)`` returns the
tag of an image, reusing it when the engine has it, else loading it from the archive cache
(``clusters._imagecache``), else building it: the base image by debootstrap
(``clusters._rootfs``), the others from their definition in ``clusters/<name>/``
(``clusters._imagedef``). A server from another Debian release (``clusters.releases``)
has its image on that release's base, built the same way the first time a run asks for it.
Which images the targets need is ``clusters.images``'s business.
"""

from __future__ import annotations

import fcntl
import io
import tarfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple

from clusters import _imagecache, _rootfs
from clusters._docker import LABEL, LABEL_IMAGE, connect
from clusters._imagedef import ImageDef, load_imagedef
from clusters.releases import Release
from core.cluster import ClusterError

if TYPE_CHECKING:
    import docker

Progress = Callable[[str], None]


class ImageResult(NamedTuple):
    """What ``build_images`` did for one image: ``how`` is present, cached or built."""

    name: str
    tag: str
    how: str
    seconds: float


def quiet(_: str) -> None:
    pass


def image_tag(name: str, release: Release | None = None) -> str:
    """The tag ``name`` has for the current definitions (whether built or not), from
    ``release`` (None: the default one)."""
    if release is None:
        base = _rootfs.base_tag()
        return base if name == "base" else load_imagedef(name).tag(base)
    base = _rootfs.base_tag(release.suite)
    return base if name == "base" else load_imagedef(name).tag(base, release.build_args)


def ensure_image(
    name: str,
    progress: Progress = quiet,
    *,
    use_cache: bool = True,
    client: docker.DockerClient | None = None,
    release: Release | None = None,
) -> str:
    """The tag of image ``name`` (from ``release``), loaded or built first when the engine
    lacks it."""
    return ensure(client or connect(), name, progress, use_cache, release).tag


def ensure(
    client: docker.DockerClient,
    name: str,
    progress: Progress,
    use_cache: bool,
    release: Release | None = None,
) -> ImageResult:
    started = time.monotonic()
    tag = image_tag(name, release)
    label = name if release is None else f"{name}@{release.suite}"
    if _exists(client, tag):  # the common case: no need to wait for another build
        return ImageResult(label, tag, "present", time.monotonic() - started)
    with _build_lock():
        tag, how = _make(client, name, progress, use_cache, release)
    return ImageResult(label, tag, how, time.monotonic() - started)


def _make(
    client: docker.DockerClient,
    name: str,
    progress: Progress,
    use_cache: bool,
    release: Release | None = None,
) -> tuple[str, str]:
    """Tag of ``name`` (from ``release``) and how it came to exist: present, cached
    (loaded) or built."""
    tag = image_tag(name, release)
    if _exists(client, tag):
        return tag, "present"
    if use_cache and _imagecache.load(client, tag):
        progress(f"{name}: loaded {tag} from {_imagecache.cache_dir()}")
        return tag, "cached"
    if name == "base":
        suite = _rootfs.SUITE if release is None else release.suite
        _rootfs.build_base(client, tag, _imagecache.cache_dir(), progress, suite)
    else:
        base, _ = _make(client, "base", progress, use_cache, release)
        args = {} if release is None else dict(release.build_args)
        _build(client, load_imagedef(name), tag, base, progress, args)
        # A multi-stage build (redis) leaves its build stage behind, untagged: hundreds of
        # MB of compilers. Only our own (labelled) dangling images are removed.
        client.images.prune(filters={"dangling": True, "label": f"{LABEL}=1"})
    saved = _imagecache.save(client, tag)
    if saved is not None:
        progress(f"{name}: saved {saved}")
    return tag, "built"


def _exists(client: docker.DockerClient, tag: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    return True


def _build(
    client: docker.DockerClient,
    defn: ImageDef,
    tag: str,
    base: str,
    progress: Progress,
    build_args: dict[str, str],
) -> None:
    """``docker build`` the definition's context on top of ``base`` with ``build_args``."""
    context = io.BytesIO()
    with tarfile.open(fileobj=context, mode="w") as tar:
        for fname, data in defn.context_files().items():
            info = tarfile.TarInfo(fname)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    context.seek(0)
    progress(f"{defn.name}: building {tag}")
    tail: list[str] = []
    stream = client.api.build(
        fileobj=context,
        custom_context=True,
        tag=tag,
        rm=True,
        forcerm=True,
        pull=False,
        decode=True,
        buildargs={**build_args, "BASE": base},
        labels={LABEL: "1", LABEL_IMAGE: defn.name},
    )
    for chunk in stream:
        if "error" in chunk:
            detail = " | ".join(line for line in tail[-8:] if line)
            raise ClusterError(
                f"Building image {defn.name} failed: {chunk['error'].strip()}"
                f" (last output: {detail})"
            )
        for line in str(chunk.get("stream", "")).splitlines():
            tail = [*tail[-20:], line.strip()]
            if line.startswith("Step "):
                progress(f"{defn.name}: {line.strip()}")


@contextmanager
def _build_lock() -> Iterator[None]:
    """One build at a time across processes (two test sessions, CI and a shell)."""
    path = _imagecache.cache_dir() / ".lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
