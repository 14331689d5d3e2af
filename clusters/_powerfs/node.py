"""The power-loss layer on a node, seen from the control machine: what a backend writes
into the node, the command that mounts the layer over the data directory, the questions it
asks the layer (``clusters._powerfs.mount``'s control socket) and the command that takes it
down again.

Where the layer keeps its things on a node is a ``Site``. In a container (``IN_CONTAINER``)
the node keeps its data on a tmpfs at ``BACKING`` (the "disk") and the server sees it
through FUSE at the data directory; on an SSH host (``clusters.ssh.power``) all of it is
under the run's directory. The layer's own Python is copied in from this package (the
image or host only brings Debian's ``python3-fuse``), so editing it rebuilds no image. A
container needs /dev/fuse and CAP_SYS_ADMIN (``CONTAINER``).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

from core.cluster import ClusterError

BACKING: Final = "/disk"
"""The tmpfs that holds what the disk holds (``BACKING/fs``) and what is set aside."""
HOME: Final = "/harness/powerfs"
"""Where the layer's modules are copied (as the package ``clusters._powerfs``)."""
SOCKET: Final = "/run/powerfs.sock"
LOG: Final = "/var/log/harness/powerfs.log"
PIDFILE: Final = "/run/powerfs.pid"
MODULES: Final = ("__init__.py", "disk.py", "mount.py")
CONTAINER: Final[dict[str, Any]] = {
    "devices": ["/dev/fuse:/dev/fuse:rwm"],
    "cap_add": ["SYS_ADMIN"],
    "security_opt": ["apparmor:unconfined"],
}
"""What a container needs beyond the usual to mount FUSE inside."""


@dataclass(frozen=True, slots=True)
class Site:
    """Where the layer lives on a node, and what to tell a user whose node cannot mount it."""

    home: str
    """Where the layer's modules are copied (as the package ``clusters._powerfs``)."""
    backing: str
    """What the disk holds (``backing/fs``) and what waits aside (``backing/fs.aside``)."""
    socket: str
    log: str
    pidfile: str
    """The layer's process id, for taking it down (``unmount_script``)."""
    needs: str
    """The end of the one line a failed mount raises: what the node needs."""


IN_CONTAINER: Final = Site(
    HOME,
    BACKING,
    SOCKET,
    LOG,
    PIDFILE,
    "the node needs /dev/fuse, CAP_SYS_ADMIN and python3-fuse in its image",
)
"""The layer in a Docker node (its container removed at the end takes it down)."""


KILL_PID: Final = (
    "tr '\\0' ' ' < /proc/$pid/cmdline 2>/dev/null | grep -qF clusters._powerfs.mount "
    '&& kill -9 "$pid"'
)
"""Shell: kill -9 the process ``$pid`` if it is the layer (its command line says so), so a
pid reused since the layer ended is never signalled."""


class Exec(Protocol):
    """Runs a command on a node: ``(exit code, output)``."""

    def __call__(self, node: str, cmd: list[str] | str) -> tuple[int, str]: ...


def files(site: Site = IN_CONTAINER) -> dict[str, tuple[str, int]]:
    """The layer's modules, written into a node under ``site.home``: path -> (content,
    mode)."""
    here = Path(__file__).parent
    out = {f"{site.home}/clusters/__init__.py": ("", 0o644)}
    for name in MODULES:
        out[f"{site.home}/clusters/_powerfs/{name}"] = ((here / name).read_text(), 0o644)
    return out


def _python(site: Site, *args: str) -> str:
    return f"env PYTHONPATH={site.home} python3 -m clusters._powerfs.mount " + shlex.join(args)


def mount_script(data_dir: str, site: Site = IN_CONTAINER) -> str:
    """The shell line that mounts the layer at ``data_dir`` and waits (10 s at most) until
    it serves; it exits non-zero otherwise. The layer runs in a session of its own with
    every descriptor redirected (``setsid``), so it outlives the command that started it
    (an SSH session, a ``docker exec``), and its pid is kept in ``site.pidfile``."""
    serve = _python(site, "serve", f"{site.backing}/fs", data_dir, site.socket)
    return (
        f"mkdir -p {site.backing}/fs {data_dir} $(dirname {site.log}) && "
        f"{{ setsid nohup {serve} </dev/null >>{site.log} 2>&1 & echo $! >{site.pidfile}; }} && "
        f"for i in $(seq 100); do "
        f"grep -q ' {data_dir} fuse' /proc/mounts && [ -S {site.socket} ] && exit 0; "
        "sleep 0.1; done; exit 1"
    )


def unmount_script(data_dir: str, site: Site) -> str:
    """The shell line that takes the layer at ``data_dir`` down: unmounted (lazily when a
    process still holds a file there), its process killed (the pidfile's pid, while its
    command line is still the layer's); it exits non-zero while something is still
    mounted at ``data_dir``. Nothing mounted: nothing to do."""
    mounted = f"grep -q ' {data_dir} fuse' /proc/mounts"
    return (
        f"if {mounted}; then umount {data_dir} 2>/dev/null || umount -l {data_dir}; fi; "
        f"pid=$(cat {site.pidfile} 2>/dev/null); {KILL_PID}; ! {mounted}"
    )


def mount(run: Exec, node: str, data_dir: str, site: Site = IN_CONTAINER) -> None:
    """Mount the layer over ``data_dir`` on ``node``; ClusterError with its log otherwise."""
    code, out = run(node, mount_script(data_dir, site))
    if code != 0:
        _, log = run(node, ["tail", "-n", "20", site.log])
        said = " | ".join(why(out + log))
        raise ClusterError(
            f"The power-loss layer did not mount on {node}: {said or 'no output'}; {site.needs}"
        )


def why(log: str) -> list[str]:
    """What a failed mount's output says of why: libfuse's and fuse-python's own lines
    (``fusermount: mount failed: ...``, ``fuse.FuseError: ...``), else its last line, not
    the traceback between them."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return [line for line in lines if line.startswith("fuse")] or lines[-1:]


def ask(run: Exec, node: str, command: str, site: Site = IN_CONTAINER) -> dict[str, Any]:
    """The layer's answer to ``command`` (cut, sync, pending) on ``node``."""
    code, out = run(node, _python(site, "ctl", site.socket, command))
    try:
        answer = json.loads(out.strip().splitlines()[-1]) if code == 0 else None
    except (ValueError, IndexError):
        answer = None
    if not isinstance(answer, dict) or "error" in answer:
        raise ClusterError(f"The power-loss layer on {node} did not answer {command}: {out}")
    return answer


def cut(run: Exec, node: str, site: Site = IN_CONTAINER) -> dict[str, int]:
    """The power cut on ``node`` (its server already killed): bytes discarded per file."""
    discarded = ask(run, node, "cut", site).get("discarded", {})
    return {str(k): int(v) for k, v in discarded.items()}
