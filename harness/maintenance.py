"""``harness images build`` and ``harness clusters heal|down``: the targets' images, and
what runs killed midway left in Docker or on SSH hosts. Docker's SDK and paramiko are
imported only by the command that needs them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console

from clusters.target_registry import TARGETS
from core.errors import HarnessError

if TYPE_CHECKING:
    from clusters.remote.hosts import HostSpec
    from clusters.ssh.factory import SshClusterOptions


def build_images(targets: list[str], console: Console) -> int:
    """Build (or reuse) the images of ``targets`` (every target with an image by default;
    ``TARGET@RELEASE``: its server from another Debian release, ``--server-version``)."""
    from clusters import images

    with_images = [name for name, t in TARGETS.items() if t.image is not None]
    names = targets or with_images
    unknown = [t for t in names if t.partition("@")[0] not in with_images]
    if unknown:
        raise HarnessError(
            f"no image for {', '.join(unknown)}: images exist for " + ", ".join(with_images)
        )
    images.build_images(names, progress=lambda msg: console.print(msg, highlight=False))
    return 0


def clusters_down(console: Console) -> int:
    """Remove the harness's containers and networks."""
    from clusters import cleanup

    removed: Any = cleanup.down()
    console.print(f"removed: {removed or 'nothing'}")
    return 0


def clusters_heal(console: Console) -> int:
    """Undo the faults a killed run left in Docker clusters."""
    from clusters import cleanup

    healed: Any = cleanup.heal()
    console.print(f"healed: {healed or 'nothing'}")
    return 0


def clean_ssh_hosts(
    action: str, hosts: Sequence[HostSpec], options: SshClusterOptions, console: Console
) -> int:
    """``harness clusters heal|down --ssh``: one line per host saying what was undone (and
    one per thing that could not be); 1 when something could not, else 0."""
    import logging

    from clusters.ssh.cleanup import clean_hosts
    from clusters.ssh.factory import ssh_remotes

    # A host out of reach is one line of its report; paramiko's own traceback of it (on
    # stderr, no logging being set up here) would only repeat that line.
    logging.getLogger("paramiko").setLevel(logging.CRITICAL)
    reports = clean_hosts(action, hosts, ssh_remotes(options))
    for report in reports:
        console.print(str(report), highlight=False, markup=False, soft_wrap=True)
    return 1 if any(r.problems for r in reports) else 0
