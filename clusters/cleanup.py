"""Recovering from a crashed run: remove, or heal, whatever the harness left in Docker.

``down`` backs ``harness clusters down``: it removes every container and network carrying
the harness label (optionally of one run only), and nothing else. ``heal`` backs
``harness clusters heal``: in every running harness node it resumes stopped processes,
drops the nemesis's firewall rules and queueing disciplines and resets the fake clock,
leaving the nodes up. ``remove_images`` deletes the harness's images (a build from scratch).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING

from clusters._docker import LABEL, LABEL_RUN, connect
from clusters.docker_cluster import FAKETIME_FILE

if TYPE_CHECKING:
    from docker.models.containers import Container

HEAL_SCRIPT = (
    "pkill -CONT -f . >/dev/null 2>&1; "
    "iptables -F; iptables -X; iptables -P INPUT ACCEPT; iptables -P OUTPUT ACCEPT; "
    "iptables -P FORWARD ACCEPT; "
    "for dev in $(ls /sys/class/net); do tc qdisc del dev $dev root 2>/dev/null; done; "
    f"echo +0 > {FAKETIME_FILE}"
)
"""Undo every fault a nemesis can leave in a node (run as root inside it)."""


@dataclass(frozen=True, slots=True)
class Removed:
    """Names of what ``down`` removed; false when nothing was."""

    containers: list[str]
    networks: list[str]

    def __bool__(self) -> bool:
        return bool(self.containers or self.networks)

    def __str__(self) -> str:
        if not (self.containers or self.networks):
            return ""
        return (
            f"{len(self.containers)} container(s) {', '.join(self.containers) or '-'}; "
            f"{len(self.networks)} network(s) {', '.join(self.networks) or '-'}"
        )


def _filters(run_id: str | None) -> dict[str, list[str]]:
    wanted = [f"{LABEL}=1"]
    if run_id is not None:
        wanted.append(f"{LABEL_RUN}={run_id}")
    return {"label": wanted}


def down(run_id: str | None = None) -> Removed:
    """Remove every harness container and network (of ``run_id`` only, when given)."""
    from docker.errors import NotFound

    client = connect()
    filters = _filters(run_id)
    containers = client.containers.list(all=True, filters=filters)

    def remove(c: Container) -> str:
        try:
            c.remove(force=True)
        except NotFound:
            pass
        return str(c.name)

    removed: list[str] = []
    if containers:
        with ThreadPoolExecutor(max_workers=min(8, len(containers))) as pool:
            removed = list(pool.map(remove, containers))
    networks = []
    for net in client.networks.list(filters=filters):
        try:
            net.remove()
        except NotFound:
            continue
        networks.append(str(net.name))
    return Removed(sorted(removed), sorted(networks))


def heal(run_id: str | None = None) -> list[str]:
    """Undo faults in every running harness node; returns the healed containers' names."""
    client = connect()
    healed = []
    for c in client.containers.list(filters=_filters(run_id)):
        c.exec_run(["sh", "-c", HEAL_SCRIPT])
        healed.append(str(c.name))
    return sorted(healed)


def remove_images() -> list[str]:
    """Delete every image labelled by the harness (tags and build stages); their ids."""
    from docker.errors import APIError

    client = connect()
    removed = []
    # Children first: per-target images before the base they are built on.
    images = sorted(
        client.images.list(all=True, filters={"label": f"{LABEL}=1"}),
        key=lambda i: -len(i.history()),
    )
    for image in images:
        try:
            client.images.remove(image.id, force=True)
        except APIError:
            continue
        removed.append(str(image.short_id))
    return removed


def main(argv: list[str] | None = None) -> int:
    """``python -m clusters.cleanup down|heal [--run RUN_ID]``: the same as the CLI's."""
    import argparse
    import sys

    from core.cluster import ClusterError

    parser = argparse.ArgumentParser(
        prog="python -m clusters.cleanup", description="Remove or heal what harness runs left."
    )
    parser.add_argument("action", choices=["down", "heal"])
    parser.add_argument("--run", help="only this run id")
    args = parser.parse_args(argv)
    try:
        if args.action == "down":
            print(f"removed: {down(args.run) or 'nothing'}")
        else:
            print(f"healed: {', '.join(heal(args.run)) or 'nothing'}")
    except ClusterError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
