"""The targets, one line each: what the run, the CLI, suites, images and SSH read.

Each target's ``TargetSpec`` is written in its own subpackage (``clusters/<t>/spec.py``);
adding a target is that subpackage plus its line here (and its import). Importing this module needs
neither Docker's SDK nor paramiko (clusters and clients are imported when used).
"""

from __future__ import annotations

from clusters.consul.spec import SPEC as CONSUL
from clusters.etcd.spec import SPEC as ETCD
from clusters.postgres.spec import SPEC as POSTGRES
from clusters.redis.spec import REDIS, REDLOCK
from clusters.server import ServerSpec
from clusters.sim.spec import SPEC as SIM
from clusters.spec import Lazy, TargetSpec
from clusters.zookeeper.spec import SPEC as ZOOKEEPER
from core.errors import HarnessError
from core.option_checks import nearest

SPECS: tuple[TargetSpec, ...] = (
    SIM,
    ETCD,
    ZOOKEEPER,
    CONSUL,
    REDIS,
    REDLOCK,
    POSTGRES,
)
"""Every target, in the order help texts list them; the first is the default target."""

TARGETS: dict[str, TargetSpec] = {t.name: t for t in SPECS}

DEFAULT_TARGET = next(iter(TARGETS))


class UnknownTarget(HarnessError):
    """A target name the registry does not have (one line listing those it has)."""


def resolve(name: str) -> TargetSpec:
    """The spec of target ``name`` (empty: the default target); UnknownTarget (one line)
    for a name not registered."""
    spec = TARGETS.get(name or DEFAULT_TARGET)
    if spec is None:
        near = nearest(name, list(TARGETS))
        raise UnknownTarget(
            f"unknown target {name!r}; did you mean {near!r}?"
            if near
            else f"unknown target {name!r}: choose one of {', '.join(TARGETS)}"
        )
    return spec


def images() -> tuple[str, ...]:
    """The image definitions the targets run, each once, in the registry's order."""
    return tuple(dict.fromkeys(t.image for t in TARGETS.values() if t.image is not None))


def ssh_targets() -> tuple[str, ...]:
    """The targets that can run on SSH hosts (not one run as local processes)."""
    return tuple(name for name, t in TARGETS.items() if t.server is not None and not t.local)


def server_spec(name: str) -> ServerSpec | None:
    """The ``ServerSpec`` of target ``name`` (None: it has none)."""
    path = TARGETS[name].server
    return None if path is None else Lazy(path).load()


def deb_suites() -> dict[str, str]:
    """Packages current Debian releases lack -> the older suite to take them from."""
    servers = [s for s in map(server_spec, TARGETS) if s is not None]
    return {pkg: suite for s in servers for pkg, suite in s.deb_suites.items()}


def server_versions() -> dict[str, tuple[str, ...]]:
    """Target -> the Debian releases its server can come from (``--server-version``),
    for the targets that offer a choice."""
    out = {}
    for name in TARGETS:
        server = server_spec(name)
        if server is not None and server.releases:
            out[name] = tuple(r.short for r in server.releases.values())
    return out
