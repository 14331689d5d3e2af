"""The Debian releases a server can come from: ``Release``, one row of a target's table.

Every image is built on a Debian root filesystem (``clusters._rootfs``) and installs its
server from that release's packages, so a server's version is a Debian release's:
``--server-version bookworm`` runs etcd 3.4 where the default (trixie) runs 3.5. A target's
``ServerSpec.releases`` says which releases it offers, each with the exact package version
Debian's mirror listed when the table was written (``Packages`` of
``dists/<suite>/main/binary-amd64``) and what the server's configuration needs there; a
release the target lacks or whose package does not run says why in ``missing``. What ran is
read from the node at the run (``TargetSpec.versions``), not from this table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, TypeVar

SUITES: Final = ("bullseye", "bookworm", "trixie", "sid")
"""The Debian releases the mirror serves (Debian 11, 12, 13 and unstable)."""
DEFAULT_SUITE: Final = "trixie"
"""The release every image is built from unless a run asks for another."""


@dataclass(frozen=True, slots=True)
class Release:
    """One Debian release of a server: its suite, the package whose version tells what
    runs, that version as the suite's Packages listed it, and the build arguments its
    image's Dockerfile takes for it (none for the default release, so its image keeps
    its tag). Targets subclass it for what their configuration needs per release."""

    suite: str
    package: str
    version: str
    build_args: Mapping[str, str] = field(default_factory=dict)
    dpkg: bool = True
    """Whether the image installs ``package`` with dpkg, so a node can say its version (a
    server built from Debian's source tarball, like Redis, says its own)."""
    no_faketime: str | None = None
    """Why libfaketime is not preloaded into this release's server (its clock cannot be
    moved: clock faults are refused with this reason); None: as the target does."""

    @property
    def query(self) -> tuple[str, ...]:
        """The command whose output is the installed package and its exact version."""
        return ("dpkg-query", "-W", "-f", "${Package} ${Version}\n", self.package)

    @property
    def label(self) -> str:
        """``bookworm (etcd-server 3.4.23-4+b4)``, for help and errors."""
        return f"{self.suite} ({self.package} {self.version})"

    @property
    def short(self) -> str:
        """``bookworm 3.4.23-4+b4``, for the lists of ``run --help``."""
        return f"{self.suite} {self.version}"


R = TypeVar("R", bound="Release")


def table(*releases: R) -> dict[str, R]:
    """Releases by suite, in ``SUITES``' order (the default among them)."""
    by_suite = {r.suite: r for r in releases}
    assert DEFAULT_SUITE in by_suite and set(by_suite) <= set(SUITES), by_suite
    return {s: by_suite[s] for s in SUITES if s in by_suite}
