"""The ZooKeeper image: zookeeper 3.9 from Debian trixie on a headless JRE."""

from pathlib import Path

from clusters._imagedef import ImageDef

IMAGE = ImageDef(
    "zookeeper",
    Path(__file__).parent,
    "zookeeper 3.9 (trixie) on default-jre-headless, logging via slf4j-simple",
    files=("default-jre.control",),
)
