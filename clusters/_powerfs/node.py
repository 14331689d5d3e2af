"""The power-loss layer on a node, seen from the control machine: what a backend writes
into the node, the command that mounts the layer over the data directory, and the
questions it asks the layer (``clusters._powerfs.mount``'s control socket).

A node with the layer keeps its data on a tmpfs at ``BACKING`` (the "disk") and the
server sees it through FUSE at the data directory; the layer's own Python is copied in
from this package (the image only brings Debian's ``python3-fuse``), so editing it
rebuilds no image. A container needs /dev/fuse and CAP_SYS_ADMIN (``CONTAINER``).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Final, Protocol

from core.cluster import ClusterError

BACKING: Final = "/disk"
"""The tmpfs that holds what the disk holds (``BACKING/fs``) and what is set aside."""
HOME: Final = "/harness/powerfs"
"""Where the layer's modules are copied (as the package ``clusters._powerfs``)."""
SOCKET: Final = "/run/powerfs.sock"
LOG: Final = "/var/log/harness/powerfs.log"
MODULES: Final = ("__init__.py", "disk.py", "mount.py")
CONTAINER: Final[dict[str, Any]] = {
    "devices": ["/dev/fuse:/dev/fuse:rwm"],
    "cap_add": ["SYS_ADMIN"],
    "security_opt": ["apparmor:unconfined"],
}
"""What a container needs beyond the usual to mount FUSE inside."""


class Exec(Protocol):
    """Runs a command on a node: ``(exit code, output)``."""

    def __call__(self, node: str, cmd: list[str] | str) -> tuple[int, str]: ...


def files() -> dict[str, tuple[str, int]]:
    """The layer's modules, written into a node under ``HOME``: path -> (content, mode)."""
    here = Path(__file__).parent
    out = {f"{HOME}/clusters/__init__.py": ("", 0o644)}
    for name in MODULES:
        out[f"{HOME}/clusters/_powerfs/{name}"] = ((here / name).read_text(), 0o644)
    return out


def _python(*args: str) -> str:
    return f"env PYTHONPATH={HOME} python3 -m clusters._powerfs.mount " + shlex.join(args)


def mount_script(data_dir: str) -> str:
    """The shell line that mounts the layer at ``data_dir`` and waits (10 s at most) until
    it serves; it exits non-zero otherwise."""
    serve = _python("serve", f"{BACKING}/fs", data_dir, SOCKET)
    return (
        f"mkdir -p {BACKING}/fs {data_dir} $(dirname {LOG}) && "
        f"(nohup {serve} >>{LOG} 2>&1 &) && "
        f"for i in $(seq 100); do "
        f"grep -q ' {data_dir} fuse' /proc/mounts && [ -S {SOCKET} ] && exit 0; sleep 0.1; done; "
        "exit 1"
    )


def mount(run: Exec, node: str, data_dir: str) -> None:
    """Mount the layer over ``data_dir`` on ``node``; ClusterError with its log otherwise."""
    code, out = run(node, mount_script(data_dir))
    if code != 0:
        _, log = run(node, ["tail", "-n", "5", LOG])
        raise ClusterError(
            f"The power-loss layer did not mount on {node}: {(out + log).strip() or 'no output'}"
            "; the node needs /dev/fuse, CAP_SYS_ADMIN and python3-fuse in its image"
        )


def ask(run: Exec, node: str, command: str) -> dict[str, Any]:
    """The layer's answer to ``command`` (cut, sync, pending) on ``node``."""
    code, out = run(node, _python("ctl", SOCKET, command))
    try:
        answer = json.loads(out.strip().splitlines()[-1]) if code == 0 else None
    except (ValueError, IndexError):
        answer = None
    if not isinstance(answer, dict) or "error" in answer:
        raise ClusterError(f"The power-loss layer on {node} did not answer {command}: {out}")
    return answer


def cut(run: Exec, node: str) -> dict[str, int]:
    """The power cut on ``node`` (its server already killed): bytes discarded per file."""
    discarded = ask(run, node, "cut").get("discarded", {})
    return {str(k): int(v) for k, v in discarded.items()}
