"""How a target runs its server, said once and without a transport: the ``ServerSpec``.

A target's ``server.py`` (``clusters/etcd/server.py`` is the shortest) subclasses
``ServerSpec``: the server's process name and ports, the packages or image that provide it,
and, per node given its peers and its ``Place`` (where a backend keeps configuration and
data), what to launch (``Launch``: argv, files, environment). Probes take addresses
(``Address``: ip and client port): whether a server is healthy, whether the whole cluster
serves, which node leads. The Docker backend
(``clusters.docker_cluster``) and the SSH backend (``clusters.ssh.cluster``) drive any spec;
neither knows a target by name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import NamedTuple

from clusters.releases import DEFAULT_SUITE, Release
from core.cluster import ClusterError


class Address(NamedTuple):
    """Where a node's server takes clients: its host's address and its client port (the
    spec's fixed ``port`` on its own host; a port of its own where nodes share one host,
    as local processes do). ``str()`` is ``"ip:port"``, an endpoint."""

    ip: str
    port: int

    def __str__(self) -> str:
        return f"{self.ip}:{self.port}"


@dataclass(frozen=True, slots=True)
class Peer:
    """One node as its server sees it: name (n1, n2...), 1-based index, address and
    client port (the spec's ``port`` unless its backend gives each node its own)."""

    name: str
    index: int
    ip: str
    port: int

    @property
    def address(self) -> Address:
        """Its (ip, client port)."""
        return Address(self.ip, self.port)


@dataclass(frozen=True, slots=True)
class Place:
    """Where a backend keeps a node's files, and where the server's binaries come from."""

    conf: str
    """The configuration directory."""
    data: str
    """The data directory (the launcher's working directory)."""
    image: bool
    """True in our Docker image; False on a host with the Debian packages ``packages``."""
    run_id: str = ""
    """The run's id, for what a cluster must be named by (etcd's cluster token)."""


@dataclass(frozen=True, slots=True)
class RunSettings:
    """What a run tells its servers beyond where their files go (``ServerSpec.for_run``):
    the run clock's origin, for a server that stamps its own events on the run's time
    line (``core.run_clock.RunClock``), the run's seed and the bugs ``--sim-bug`` asks it to
    inject. A server that needs none of them ignores them."""

    clock_origin: int
    seed: int | None = None
    bugs: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Launch:
    """What a backend writes and runs to start the server on one node."""

    argv: tuple[str, ...]
    files: Mapping[str, str] = field(default_factory=dict)
    """Absolute path -> content, written before the server first starts."""
    env: Mapping[str, str] = field(default_factory=dict)
    prelude: tuple[str, ...] = ()
    """Shell lines the launcher runs before the server (say, a file on a fresh tmpfs)."""


@dataclass(frozen=True)
class ServerSpec:
    """A target's server, transport-free (see the module docstring).

    Subclasses set the fields' defaults and override ``launch`` and ``healthy`` (plus
    ``ready``, ``leader``, ``check_size``, ``with_persistence`` when needed). A spec with a
    leader sets ``has_leader``: its clusters then implement ``HasLeader``.
    """

    name: str = "?"
    process: str = "?"
    """The server's process name (``pkill -x``, ``/proc/PID/comm``)."""
    port: int = 0
    """The client port endpoints() reports."""
    ports: tuple[int, ...] = ()
    """Every port the server listens on (must be free on a host)."""
    image: str = ""
    """The Docker image definition it runs (``clusters/<image>/``)."""
    packages: tuple[str, ...] = ()
    """Debian packages that provide it on a host."""
    deb_suites: Mapping[str, str] = field(default_factory=dict)
    """Its packages current Debian releases lack -> the older suite to take them from
    (on SSH hosts: ``clusters.ssh.debs``)."""
    services: tuple[str, ...] = ()
    """The packages' own systemd units, kept from starting (they would take the ports)."""
    commands: Mapping[str, str] = field(default_factory=dict)
    """Package -> command: the command on a host's PATH counts as the package installed."""
    default_nodes: int = 3
    faketime_default: bool = False
    """Preload libfaketime in Docker unless told otherwise (hosts move their own clocks)."""
    start_timeout: float = 60.0
    """Seconds from launching the servers to ready before a start gives up."""
    host_start_timeout: float | None = None
    """The same on hosts, when it differs."""
    start_grace: float = 1.0
    """Seconds a launched node may go without a server process before a start counts it
    as exited (a PostgreSQL replica copies its primary first)."""
    version_argv: tuple[str, ...] | None = None
    """The command whose first line of output names the server's version."""
    host_version_argv: tuple[str, ...] | None = None
    """The same on hosts, when it differs."""
    version_prefix: str = ""
    has_leader: bool = False
    releases: Mapping[str, Release] = field(default_factory=dict)
    """The Debian releases it can run from (``clusters.releases``): suite -> release; empty
    when it has one version only (the image installs it from one suite, whatever the base)."""
    missing: Mapping[str, str] = field(default_factory=dict)
    """Suites it is not offered from -> why (no package, or the package does not run)."""
    suite: str = DEFAULT_SUITE
    """The release this spec runs (``with_release``)."""
    local: bool = False
    """Run as processes of this machine (``clusters._local``) rather than in Docker or on
    SSH hosts: a server the harness ships itself (the sim), no image or package."""
    node_names: tuple[str, ...] = ()
    """Its nodes' names when they are not n1..nN (the sim's one node is ``sim``: its run
    directories, recorded faults and replays name it)."""
    fixed_version: str | None = None
    """The version of a server that has one, said without asking it (the sim's
    ``built-in``); None: ``version_argv`` asks."""
    service_log: str | None = None
    """Where the service's own event log (lease expiries, lock grants) lands, relative to
    the run directory (the sim's ``sim/events.jsonl``); None: it keeps none the checkers
    read."""

    @property
    def release(self) -> Release | None:
        """The release it runs, None for a server without ``releases``."""
        return self.releases.get(self.suite)

    def with_release(self, suite: str | None) -> ServerSpec:
        """This server from Debian ``suite`` (None: the default); ClusterError naming the
        releases it has for any other."""
        if suite is None or suite == self.suite:
            return self
        if suite not in self.releases:
            raise ClusterError(release_error(self.name, suite, self.releases, self.missing))
        fake = self.faketime_default and self.releases[suite].no_faketime is None
        return replace(self, suite=suite, faketime_default=fake)

    def for_run(self, run: RunSettings) -> ServerSpec:
        """This server as ``run`` sets it up (the clock origin, seed and bugs its
        ``launch`` needs); the default needs none of them."""
        return self

    def check_size(self, n: int, unit: str = "nodes") -> None:
        """Raise ClusterError when ``n`` nodes make no sense (default: odd, 1 to 7)."""
        check_odd(self.name, n, unit)

    def with_persistence(self, persistence: str | None) -> ServerSpec:
        """This server with ``persistence`` (None: its default); a spec without such an
        option ignores None (the registry refuses any other value first)."""
        return self

    def launch(self, node: Peer, peers: Sequence[Peer], place: Place) -> Launch:
        """What to run on ``node`` of a cluster of ``peers`` (``node`` among them)."""
        raise NotImplementedError

    def healthy(self, at: Address) -> bool:
        """Whether the server at ``at`` answers its probe now."""
        raise NotImplementedError

    def ready(self, ips: Mapping[str, Address]) -> bool:
        """Whether the cluster of ``ips`` (node -> address) serves (default: all healthy)."""
        return all(self.healthy(at) for at in ips.values())

    def leader(self, ips: Mapping[str, Address]) -> str | None:
        """The node that leads now, else None (only with ``has_leader``)."""
        return None

    def timeout(self, place: Place) -> float:
        """The start timeout at ``place``."""
        if not place.image and self.host_start_timeout is not None:
            return self.host_start_timeout
        return self.start_timeout

    def version_command(self, place: Place) -> tuple[str, ...] | None:
        """The version query at ``place``."""
        if not place.image and self.host_version_argv is not None:
            return self.host_version_argv
        return self.version_argv


def release_error(
    name: str, suite: str, releases: Mapping[str, Release], missing: Mapping[str, str]
) -> str:
    """The one line for a release ``name`` is not offered from: why, and the ones it has."""
    if not releases:
        return f"{name} has one version only: leave out --server-version"
    why = f" ({missing[suite]})" if suite in missing else ""
    return (
        f"{name} has no server version {suite!r}{why}; "
        f"choose from: {', '.join(r.label for r in releases.values())}"
    )


def check_odd(name: str, n: int, unit: str = "nodes") -> None:
    """ClusterError unless ``n`` is odd, from 1 to 7."""
    if n < 1 or n > 7 or n % 2 == 0:
        raise ClusterError(f"{name} needs an odd number of {unit} from 1 to 7, not {n}")


def majority_vote(claims: Iterable[str | None], size: int) -> str | None:
    """The claim (say, a leader) made by more than half of ``size`` nodes, else None."""
    counts = Counter(c for c in claims if c)
    for claim, count in counts.items():
        if count > size // 2:
            return claim
    return None


@dataclass(frozen=True, slots=True)
class ClusterOptions:
    """What a run may choose about its Docker cluster; None means the target's default."""

    run_id: str
    nodes: int | None = None
    image: str | None = None
    """A custom image tag to use instead of building ours (see clusters/README.md)."""
    persistence: str | None = None
    """One of the target's ``TargetSpec.persistence`` values."""
    faketime: bool | None = None
    """Preload libfaketime into the server (default on for redis, redlock and zookeeper)."""
    release: str | None = None
    """The Debian release the server comes from (``ServerSpec.releases``); None: the default."""
    power_loss: bool = False
    """Serve the data directory through the power-loss layer (``clusters._powerfs``), for
    the power-loss fault; off, the data directory is a plain tmpfs and costs nothing."""
