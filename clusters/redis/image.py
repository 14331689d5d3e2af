"""The Redis image: Redis 8.0 compiled from Debian's source tarball with libc malloc."""

from pathlib import Path

from clusters._imagedef import ImageDef

IMAGE = ImageDef("redis", Path(__file__).parent, "redis 8.0.2 built with MALLOC=libc")
