"""Which hosts a run drives: ``user@host:port`` specs, host lists and nodes files.

A run names its hosts explicitly (``--nodes a,b,c`` or ``--nodes-file F``, one host per
line, ``#`` comments); the harness never touches any other machine. A spec may carry its
own user and port; the SSH options supply the rest. Bad input is one ``ClusterError`` line
saying which spec is wrong and how to write it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from core.cluster import ClusterError

FORMAT = "write host, user@host, host:port or user@host:port ([v6addr]:port for IPv6)"
_HOST = re.compile(r"[A-Za-z0-9_.:%-]+")
_USER = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.-]*")


@dataclass(frozen=True, slots=True)
class HostSpec:
    """One host as named by the user; ``user``/``port`` None mean "the SSH default"."""

    host: str
    user: str | None = None
    port: int | None = None

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        user = f"{self.user}@" if self.user else ""
        port = f":{self.port}" if self.port else ""
        return f"{user}{host}{port}"


def parse_host(text: str, where: str = "") -> HostSpec:
    """``[user@]host[:port]`` (``[v6]:port`` for IPv6) as a HostSpec; ClusterError if bad."""
    spec = text.strip()

    def bad(why: str) -> ClusterError:
        return ClusterError(f"Bad host {text!r}{where}: {why}; {FORMAT}")

    if not spec or any(c.isspace() for c in spec):
        raise bad("empty or contains spaces")
    user: str | None = None
    if "@" in spec:
        user, _, spec = spec.rpartition("@")
        if not _USER.fullmatch(user):
            raise bad(f"user {user!r} is not a valid login name")
    port_text: str | None = None
    if spec.startswith("["):
        host, sep, rest = spec[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise bad("unbalanced brackets")
        port_text = rest[1:] if rest else None
    elif spec.count(":") == 1:
        host, _, port_text = spec.partition(":")
    else:
        host = spec  # a name, an IPv4 address, or a bare IPv6 address (no port)
    if not host or not _HOST.fullmatch(host):
        raise bad(f"host {host!r} is not a host name or address")
    port: int | None = None
    if port_text is not None:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise bad(f"port {port_text!r} is not a number from 1 to 65535")
        port = int(port_text)
    return HostSpec(host, user, port)


def read_nodes_file(path: Path) -> list[HostSpec]:
    """The hosts of a nodes file: one spec per line; blank lines and ``#`` comments skipped."""
    try:
        text = path.read_text()
    except OSError as e:
        raise ClusterError(f"Cannot read nodes file {path}: {e.strerror or e}") from None
    hosts = []
    for i, line in enumerate(text.splitlines(), start=1):
        line = line.split("#", 1)[0].strip()
        if line:
            hosts.append(parse_host(line, f" (line {i} of {path})"))
    if not hosts:
        raise ClusterError(f"Nodes file {path} names no host; put one host per line")
    return hosts


def hosts_from(
    nodes: str | list[str] | None = None, nodes_file: str | Path | None = None
) -> list[HostSpec]:
    """The hosts of ``--nodes a,b,c`` (a string or a list) and/or ``--nodes-file F``.

    At least one host is required, and a host named twice is refused (two nodes on one
    machine would share its ports and its clock).
    """
    items = nodes.split(",") if isinstance(nodes, str) else list(nodes or [])
    hosts = [parse_host(h) for h in items if h.strip()]
    if nodes_file is not None:
        hosts += read_nodes_file(Path(nodes_file))
    if not hosts:
        raise ClusterError("No hosts given: pass --nodes host1,host2,host3 or --nodes-file F")
    seen: dict[tuple[str, int | None], HostSpec] = {}
    for h in hosts:
        key = (h.host.lower(), h.port)
        if key in seen:
            raise ClusterError(f"Host {h} is named twice ({seen[key]}); name each host once")
        seen[key] = h
    return hosts
