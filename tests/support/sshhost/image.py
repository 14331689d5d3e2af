"""The sshhost image: a plain Debian trixie host with sshd and sudo (SSH target tests)."""

from pathlib import Path

from clusters._imagedef import ImageDef

IMAGE = ImageDef(
    "sshhost",
    Path(__file__).parent,
    "Debian trixie with openssh-server and sudo: a stand-in host for --ssh tests",
)
