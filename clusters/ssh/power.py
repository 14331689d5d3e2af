"""The power-loss layer on SSH hosts: the probe, the mount before the server starts, and
taking it down however the run ends.

How the layer gets onto a host: its three modules (``clusters/_powerfs``: ``disk.py``,
``mount.py`` and the package's ``__init__.py``, standard library and fuse-python only) are
uploaded into the run's directory (``<run dir>/powerfs``) at setup, as the Docker backend
writes them into a node, and removed with that directory. They are not packaged: the
layer is the harness's own code and must be the harness's version of it, and a .deb of
our own would be a second thing to build, version and purge. What the host must bring is
what Debian packages: ``python3-fuse`` (fuse-python on libfuse 2), like the iptables and
coreutils a host needs anyway (``clusters.ssh.cluster.TOOLS``); it is probed for, not
installed, so a run never changes what FUSE a host has.

At setup, before any package is installed, each host is probed (``PROBE``: the library,
a usable ``/dev/fuse``) and then the layer is mounted over the run's data directory,
which proves the last thing a probe cannot: the right to mount there (root with
CAP_SYS_ADMIN, no security profile refusing it). A host that fails either is refused in
one line: what is missing, what to do. The disk behind the layer is the run directory's
``disk/fs`` on the host's own file system; a power cut undoes there what the server had
not fsynced. Taking the layer down (``down``) unmounts it, lazily when a process still
holds a file there, and kills its process; ``SshCluster.stop`` does it before removing the
run's directory, and ``harness clusters down --ssh`` does it for every run directory of a
host (``DOWN_ALL``) when the harness could not.
"""

from __future__ import annotations

from typing import Final

from clusters._powerfs import node as powerfs
from clusters.remote.base import Remote, RemoteError, must, put_text
from clusters.ssh.process import ROOT, Layout
from core.cluster import ClusterError

PROBE: Final = (
    "python3 -c 'import fuse' >/dev/null 2>&1 || echo python3-fuse; "
    "{ [ -c /dev/fuse ] && : <>/dev/fuse; } 2>/dev/null || echo /dev/fuse; true"
)
"""Prints what the host lacks to run the layer, one word a line (nothing: it has all)."""
MISSING: Final = {
    "python3-fuse": "no python3-fuse, the FUSE library the layer runs on (apt-get install "
    "python3-fuse)",
    "/dev/fuse": "no usable /dev/fuse (modprobe fuse; in a container add --device /dev/fuse "
    "--cap-add SYS_ADMIN --security-opt apparmor:unconfined)",
}
"""What to say of each word ``PROBE`` prints: what is missing and what to do."""
NEEDS: Final = (
    "the host must let root mount FUSE (CAP_SYS_ADMIN; in a container --cap-add SYS_ADMIN "
    "--security-opt apparmor:unconfined), or run the target in Docker"
)
"""The end of the one line when the probe passed but the mount itself failed."""


def site(layout: Layout) -> powerfs.Site:
    """Where the layer lives on a host: all of it under the run's directory."""
    home = f"{layout.root}/powerfs"
    return powerfs.Site(
        home=home,
        backing=f"{layout.root}/disk",
        socket=f"{home}/layer.sock",
        log=f"{layout.log_dir}/powerfs.log",
        pidfile=f"{home}/layer.pid",
        needs=NEEDS,
    )


ANY_RUN: Final = Layout(f"{ROOT}/*")
"""Every run's directory on a host, as a shell pattern."""
DOWN_ALL: Final = (
    f"for m in $(awk '$2 ~ \"^{ROOT}/\" && $3 ~ /^fuse(\\.|$)/ {{print $2}}' /proc/mounts); do "
    'umount "$m" 2>/dev/null || umount -l "$m"; echo "$m"; done; '
    f'for f in {site(ANY_RUN).pidfile}; do [ -f "$f" ] || continue; pid=$(cat "$f"); '
    "case \"$pid\" in ''|*[!0-9]*) continue;; esac; "
    f"{powerfs.KILL_PID}; done; true"
)
"""Takes down every run's layer on a host, knowing nothing of the runs: unmounts each FUSE
mount under the runs' root (printing its path) and kills each layer a run's pidfile names."""


def probe(remote: Remote) -> None:
    """ClusterError (one line) naming what the host lacks to run the layer, if anything."""
    found = remote.run(PROBE, sudo=True, timeout=30).stdout.split()
    missing = [MISSING[w] for w in found if w in MISSING]
    if missing:
        raise ClusterError(
            f"{remote.host}: cannot cut the power here (--nemesis power-loss): "
            + ", ".join(missing)
            + "; or run the target in Docker"
        )


def mount(remote: Remote, run: powerfs.Exec, node: str, layout: Layout) -> None:
    """Probe ``node``'s host, upload the layer and mount it over the run's data directory;
    ClusterError (one line) when the host cannot (the module docstring)."""
    probe(remote)
    where = site(layout)
    for path, (text, mode) in powerfs.files(where).items():
        put_text(remote, path, text, mode)
    try:
        powerfs.mount(run, node, layout.data, where)
    except ClusterError as e:
        raise ClusterError(f"{remote.host}: {e}") from None


def down(remote: Remote, layout: Layout) -> None:
    """Unmount the layer from the run's data directory and end its process (nothing to do
    when it is not there); RemoteError when something stays mounted."""
    try:
        must(
            remote,
            powerfs.unmount_script(layout.data, site(layout)),
            f"unmounting the power-loss layer from {layout.data}",
            sudo=True,
            timeout=30,
        )
    except RemoteError as e:
        raise RemoteError(f"{e}; see `grep {layout.data} /proc/mounts`") from None
