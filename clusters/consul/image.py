"""The Consul image: consul 1.8.7 from Debian bullseye, on the trixie base."""

from pathlib import Path

from clusters._imagedef import ImageDef

IMAGE = ImageDef("consul", Path(__file__).parent, "consul 1.8.7 (bullseye) on trixie")
