"""Which images the Docker targets need (``TargetSpec.image``), built by
``clusters.image_build``: ``build_images`` makes sure those of a list of targets exist and
backs ``harness images build``; ``python -m clusters.images build --all`` is the same from a
shell (CI's ``.ci/docker-setup.sh`` uses it).

A custom image (``--image``) skips all this; see ``clusters/README.md`` for what it needs.
"""

from __future__ import annotations

import argparse
import sys

from clusters._docker import connect
from clusters.image_build import ImageResult, Progress, ensure, image_tag, quiet
from clusters.registry import TARGETS, images
from core.cluster import ClusterError

IMAGES = images()
"""Every image definition the targets run (``TargetSpec.image``); ``base`` underlies them all."""


def image_names(targets: list[str]) -> list[str]:
    """The image names behind ``targets`` (target names, or image names such as ``base``).

    An empty list means every image. Unknown names raise ClusterError listing the known ones.
    """
    if not targets:
        return list(IMAGES)
    out: list[str] = []
    for t in targets:
        if t in IMAGES or t == "base":
            name: str | None = t
        elif t in TARGETS:
            name = TARGETS[t].image
        else:
            known = ", ".join(sorted({*TARGETS, *IMAGES, "base"}))
            raise ClusterError(f"Unknown target or image {t!r}; choose from: {known}")
        if name is not None and name not in out:
            out.append(name)
    return out


def build_images(
    targets: list[str], progress: Progress = quiet, *, use_cache: bool = True
) -> list[ImageResult]:
    """Make sure the images of ``targets`` (all when empty) exist; report what each took.

    ``progress`` receives one line per build step, prefixed by the image name.
    ``use_cache=False`` ignores (but still refreshes) the archive cache.
    """
    client = connect()
    return [ensure(client, name, progress, use_cache) for name in image_names(targets)]


def main(argv: list[str] | None = None) -> int:
    """``python -m clusters.images build [--all | TARGET...] [--no-cache]``."""
    parser = argparse.ArgumentParser(
        prog="python -m clusters.images", description="Build or reload the Docker targets' images."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    build = sub.add_parser("build", help="make sure images exist (all by default)")
    build.add_argument("targets", nargs="*", help="targets or images (default: all)")
    build.add_argument("--all", action="store_true", help="every image (the default)")
    build.add_argument(
        "--no-cache",
        action="store_true",
        help="ignore the archive cache (builds from the Debian packages)",
    )
    sub.add_parser("tags", help="print the tag each image has for the current definitions")
    args = parser.parse_args(argv)
    try:
        if args.command == "tags":
            for name in ("base", *IMAGES):
                print(f"{name}\t{image_tag(name)}")
            return 0
        targets = [] if args.all else args.targets
        for r in build_images(
            targets, lambda line: print(line, flush=True), use_cache=not args.no_cache
        ):
            print(f"{r.name}: {r.tag} {r.how} in {r.seconds:.1f}s", flush=True)
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
