"""The FUSE glue of the power-loss layer, and its control: run inside a node.

``serve BACKING MOUNT SOCKET`` mounts ``BACKING`` at ``MOUNT`` through a ``Disk``
(``clusters._powerfs.disk``: every change undoable until fsynced) with the kernel's
attribute and entry caches off, so what the server reads is what the ``Disk`` holds, and
answers on the Unix socket ``SOCKET``: ``cut`` (the power cut; the answer is the JSON
object of the bytes discarded per file), ``sync`` (everything so far taken as on disk) and
``pending`` (what a cut would discard now). ``ctl SOCKET COMMAND`` asks it and prints the
answer. Thin on purpose: each callback is one call of the ``Disk`` or of ``os``; the
bookkeeping is tested without FUSE.

No ``fsyncdir``: fuse-python (1.0.5 and 1.0.9, Debian's) crashes with a segmentation fault
when it is defined and called. Without it the kernel answers a directory's fsync itself
(ENOSYS from the layer, remembered, then success), and the entry changes before it become
durable with the next fsync of a file, as a journal's commit would make them. It needs
Debian's ``python3-fuse`` (fuse-python, libfuse 2) and, in a container, /dev/fuse and
CAP_SYS_ADMIN.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import socketserver
import sys
import threading
from pathlib import Path
from typing import Any

from clusters._powerfs.disk import Disk

COMMANDS = ("cut", "sync", "pending")
FUSE_OPTIONS = (
    "attr_timeout=0",
    "entry_timeout=0",
    "negative_timeout=0",
    "allow_other",
    "default_permissions",
)
"""No attribute or entry caching. No direct_io, which would refuse mmap (etcd's bbolt maps
its file): the kernel's page cache of a file is dropped when it is opened again (no
keep_cache), and a server restarted after a cut opens every file anew. Servers that run
as a user of their own (PostgreSQL's ``postgres``) may use the mount (``allow_other``),
the kernel checking their permissions by the files' owners and modes
(``default_permissions``); what they create is theirs (``PowerFs._own``)."""


class _Handle:
    """An open file of the layer: the backing descriptor."""

    def __init__(self, fd: int) -> None:
        self.fd = fd


def make_fs(disk: Disk, mountpoint: str) -> Any:
    """The fuse-python file system serving ``disk`` at ``mountpoint``."""
    import fuse  # Debian's python3-fuse, inside the node only

    fuse.fuse_python_api = (0, 2)

    class PowerFs(fuse.Fuse):
        """Passthrough to the backing directory; changes through ``disk``."""

        def getattr(self, path: str) -> os.stat_result:
            return os.lstat(disk.real(path))

        def readlink(self, path: str) -> str:
            return os.readlink(disk.real(path))

        def readdir(self, path: str, offset: int) -> Any:
            for name in (".", "..", *os.listdir(disk.real(path))):
                yield fuse.Direntry(name)

        def statfs(self) -> os.statvfs_result:
            return os.statvfs(disk.real("/"))

        def access(self, path: str, mode: int) -> int:
            return 0 if os.access(disk.real(path), mode) else -errno.EACCES

        def chmod(self, path: str, mode: int) -> None:
            os.chmod(disk.real(path), mode)

        def chown(self, path: str, uid: int, gid: int) -> None:
            os.lchown(disk.real(path), uid, gid)

        def utimens(self, path: str, atime: Any, mtime: Any) -> None:
            os.utime(disk.real(path), ns=(_ns(atime), _ns(mtime)), follow_symlinks=False)

        def _own(self, path: str) -> None:
            """Give a new entry to the user that made it (the layer runs as root)."""
            ctx = self.GetContext()
            if ctx.get("uid", 0) != 0 or ctx.get("gid", 0) != 0:
                os.lchown(disk.real(path), ctx["uid"], ctx["gid"])

        def mkdir(self, path: str, mode: int) -> None:
            disk.mkdir(path, mode)
            self._own(path)

        def rmdir(self, path: str) -> None:
            disk.rmdir(path)

        def unlink(self, path: str) -> None:
            disk.unlink(path)

        def symlink(self, target: str, path: str) -> None:
            disk.symlink(target, path)
            self._own(path)

        def link(self, existing: str, path: str) -> None:
            disk.link(existing, path)

        def rename(self, old: str, new: str) -> None:
            disk.rename(old, new)

        def truncate(self, path: str, length: int) -> None:
            fd = os.open(disk.real(path), os.O_WRONLY)
            try:
                disk.truncate(fd, path, length)
            finally:
                os.close(fd)

        def open(self, path: str, flags: int) -> _Handle:
            return _Handle(os.open(disk.real(path), flags & ~os.O_TRUNC))

        def create(self, path: str, flags: int, mode: int) -> _Handle:
            handle = _Handle(disk.create(path, flags, mode))
            self._own(path)
            return handle

        def read(self, path: str, size: int, offset: int, fh: _Handle) -> bytes:
            return os.pread(fh.fd, size, offset)

        def write(self, path: str, buf: bytes, offset: int, fh: _Handle) -> int:
            return disk.write(fh.fd, path, buf, offset)

        def ftruncate(self, path: str, length: int, fh: _Handle) -> None:
            disk.truncate(fh.fd, path, length)

        def fgetattr(self, path: str, fh: _Handle) -> os.stat_result:
            return os.fstat(fh.fd)

        def flush(self, path: str, fh: _Handle) -> None:
            return None

        def fsync(self, path: str, datasync: int, fh: _Handle) -> None:
            disk.fsync(fh.fd)

        def release(self, path: str, flags: int, fh: _Handle) -> None:
            os.close(fh.fd)

    # Multithreaded: fuse-python's single-threaded loop holds the GIL, which would starve
    # the control socket's thread; the Disk's lock orders the callbacks that change it.
    fs = PowerFs()
    fs.parse(["-f", "-o", ",".join(FUSE_OPTIONS), mountpoint], errex=1)
    return fs


def _ns(t: Any) -> int:
    return int(t.tv_sec) * 1_000_000_000 + int(t.tv_nsec)


def answer(disk: Disk, command: str) -> dict[str, Any]:
    """What the control socket answers ``command``."""
    if command == "cut":
        return {"discarded": disk.cut()}
    if command == "sync":
        disk.sync_all()
        return {"synced": True}
    if command == "pending":
        return {"pending": disk.pending()}
    return {"error": f"unknown command {command!r}; use one of {', '.join(COMMANDS)}"}


def serve_control(disk: Disk, sock: str) -> socketserver.UnixStreamServer:
    """The control socket, answering in a thread of its own."""

    class Control(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            command = self.rfile.readline().decode().strip()
            self.wfile.write(json.dumps(answer(disk, command)).encode() + b"\n")

    if os.path.exists(sock):
        os.unlink(sock)
    server = socketserver.UnixStreamServer(sock, Control)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def ask(sock: str, command: str, timeout: float = 30.0) -> str:
    """The control socket's answer to ``command`` (one JSON line)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(sock)
        s.sendall(command.encode() + b"\n")
        return s.makefile().readline().strip()


def main(argv: list[str]) -> int:
    """``serve BACKING MOUNT SOCKET`` or ``ctl SOCKET COMMAND`` (module doc)."""
    if len(argv) == 4 and argv[0] == "serve":
        backing, mountpoint, sock = argv[1:]
        disk = Disk(Path(backing), Path(backing + ".aside"))
        serve_control(disk, sock)
        make_fs(disk, mountpoint).main()
        return 0
    if len(argv) == 3 and argv[0] == "ctl":
        print(ask(argv[1], argv[2]))
        return 0
    print("usage: mount.py serve BACKING MOUNT SOCKET | ctl SOCKET cut|sync|pending")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
