"""The etcd image: etcd-server and etcd-client 3.5 from Debian trixie."""

from pathlib import Path

from clusters._imagedef import ImageDef

IMAGE = ImageDef("etcd", Path(__file__).parent, "etcd 3.5 (etcd-server, etcd-client) from trixie")
