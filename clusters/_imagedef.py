"""What an image is made of, and the content hash that names it.

An ``ImageDef`` is a Dockerfile plus the few files it copies, kept beside a target's code
(``clusters/<target>/Dockerfile``). Its tag is a hash of those files and of the base image's
tag, so editing a definition (or the base recipe) yields a new tag and thus a rebuild, while
an unchanged one is found in the engine or the cache and reused. An image of another Debian
release (``clusters.releases``) is the same definition on that release's base, with the
release's build arguments hashed in too.
"""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPOSITORY = "harness"
"""Images are tagged ``harness/<name>:<hash>``."""


@dataclass(frozen=True, slots=True)
class ImageDef:
    """A per-target image: ``directory/Dockerfile`` built ``FROM`` the base image.

    The Dockerfile starts with ``ARG BASE`` / ``FROM ${BASE}``; ``files`` are the other files
    of ``directory`` sent as the build context (only these are hashed, so editing the
    target's Python code does not rebuild its image).
    """

    name: str
    directory: Path
    description: str
    files: tuple[str, ...] = ()

    def context_files(self) -> dict[str, bytes]:
        """The build context: Dockerfile and ``files``, by name."""
        names = ("Dockerfile", *self.files)
        return {n: (self.directory / n).read_bytes() for n in names}

    def tag(self, base_tag: str, build_args: Mapping[str, str] | None = None) -> str:
        """``harness/<name>:<hash>`` for this definition built on ``base_tag`` with
        ``build_args`` (none: the tag the definition always had)."""
        args = [f"{k}={v}".encode() for k, v in sorted((build_args or {}).items())]
        return image_tag(self.name, content_hash([base_tag.encode(), *_items(self), *args]))


def _items(defn: ImageDef) -> list[bytes]:
    out = []
    for name, data in sorted(defn.context_files().items()):
        out += [name.encode(), data]
    return out


def content_hash(parts: list[bytes]) -> str:
    """A short, stable hash of ``parts`` (length-prefixed so boundaries count)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "big"))
        h.update(p)
    return h.hexdigest()[:16]


def image_tag(name: str, digest: str) -> str:
    """The full reference of image ``name`` with content hash ``digest``."""
    return f"{REPOSITORY}/{name}:{digest}"


def load_imagedef(name: str) -> ImageDef:
    """The definition in ``clusters/<name>/image.py`` (attribute ``IMAGE``), or in the
    module ``name`` when it is dotted (the tests' own images, ``tests.support``)."""
    module = importlib.import_module(name if "." in name else f"clusters.{name}.image")
    defn = module.IMAGE
    assert isinstance(defn, ImageDef)
    return defn
