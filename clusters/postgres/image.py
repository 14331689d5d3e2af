"""The PostgreSQL image: postgresql 17 from Debian trixie, no cluster created."""

from pathlib import Path

from clusters._imagedef import ImageDef

IMAGE = ImageDef("postgres", Path(__file__).parent, "postgresql 17 from trixie")
