"""Which images the Docker targets need (``TargetSpec.image``), built by
``clusters.image_build``: ``build_images`` makes sure those of a list of targets exist and
backs ``harness images build``; ``python -m clusters.images build --all`` is the same from a
shell (CI's ``.ci/docker-setup.sh`` uses it). ``TARGET@RELEASE`` names a target's image
from another Debian release (``--server-version``), e.g. ``etcd@bookworm``.

A custom image (``--image``) skips all this; see ``clusters/README.md`` for what it needs.
"""

from __future__ import annotations

import argparse
import sys

from clusters._docker import connect
from clusters.image_build import ImageResult, Progress, ensure, image_tag, quiet
from clusters.releases import Release
from clusters.server import release_error
from clusters.target_registry import TARGETS, images, server_spec
from core.cluster import ClusterError

IMAGES = images()
"""Every image definition the targets run (``TargetSpec.image``); ``base`` underlies them all."""


def image_names(targets: list[str]) -> list[tuple[str, Release | None]]:
    """The images behind ``targets`` (target names, image names such as ``base``, or
    ``TARGET@RELEASE``), each with its release (None: the default).

    An empty list means every image. Unknown names raise ClusterError listing the known ones.
    """
    if not targets:
        return [(name, None) for name in IMAGES]
    out: list[tuple[str, Release | None]] = []
    for t in targets:
        target, _, suite = t.partition("@")
        release = _release(target, suite) if suite else None
        if target in IMAGES or target == "base":
            name: str | None = target
        elif target in TARGETS:
            name = TARGETS[target].image
        else:
            known = ", ".join(sorted({*TARGETS, *IMAGES, "base"}))
            raise ClusterError(f"Unknown target or image {t!r}; choose from: {known}")
        if name is not None and (name, release) not in out:
            out.append((name, release))
    return out


def _release(target: str, suite: str) -> Release:
    """The release ``suite`` of ``target``'s server; ClusterError naming the ones it has."""
    server = server_spec(target) if target in TARGETS else None
    if server is None or server.local:
        raise ClusterError(f"{target} has no server versions: name a Docker target before @")
    if suite not in server.releases:
        raise ClusterError(release_error(target, suite, server.releases, server.missing))
    return server.releases[suite]


def build_images(
    targets: list[str], progress: Progress = quiet, *, use_cache: bool = True
) -> list[ImageResult]:
    """Make sure the images of ``targets`` (all when empty) exist; report what each took.

    ``progress`` receives one line per build step, prefixed by the image name.
    ``use_cache=False`` ignores (but still refreshes) the archive cache.
    """
    wanted = image_names(targets)  # a bad name is refused before Docker is asked
    client = connect()
    return [ensure(client, name, progress, use_cache, release) for name, release in wanted]


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
