"""What a ``--lock`` name that is none of a target's own recipes names, and its clients.

Three ways in, tried in this order: a library of ``workloads.libraries.library_registry`` (on the
targets it lists), a name in the ``coordination_harness.locks`` entry point group
(name -> ``module:attribute`` of a ``make``, which an installed package registers), or a
``module:attribute`` naming a ``make`` directly. A lock of one's own runs on any target
offering the lock workload (it is handed the target's endpoints); one that cannot be loaded
is refused in one line, with the targets it could run on. ``OWN_LOCKS`` is the lock
workload's ``workloads.workload.Variant.own``: it says whether a name is one
(``accepts``), installs a library before a run starts (``prepare``) and builds the run's
clients (a ``clusters.spec.ClientBuilder``).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Final

from core.client import ClientFactory
from core.cluster import Cluster
from core.option_checks import OptionError, safe_word
from core.options import RunOptions
from workloads.common.lock_options import LockOptions
from workloads.libraries.env import LibEnv, ensure
from workloads.libraries.library_registry import LIBRARIES, Library
from workloads.libraries.promises import Promises
from workloads.lock.own import load, own_lock_clients

GROUP: Final = "coordination_harness.locks"
"""The entry point group a package registers its lock in."""


@dataclass(frozen=True, slots=True)
class LockSource:
    """Where a lock named with ``--lock`` comes from."""

    name: str
    make: str
    """``module:attribute`` of its ``make``."""
    origin: str
    """``library``, ``entry point`` or ``module``."""
    library: Library | None = None


def source(name: str) -> LockSource | None:
    """The lock ``name`` names, None when it names none (a misspelt recipe)."""
    library = LIBRARIES.get(name)
    if library is not None:
        return LockSource(name, library.make, "library", library)
    for point in entry_points(group=GROUP):
        if point.name == name:
            return LockSource(name, point.value, "entry point")
    if ":" in name:
        return LockSource(name, name, "module")
    return None


class OwnLocks:
    """The lock workload's locks that are no recipe of a target's (module docstring)."""

    described: Final = (
        "any target: a lock of your own, module:attribute of its make or its name in "
        "the coordination_harness.locks entry point group (docs/own-lock.md)"
    )
    """What it takes, for ``--lock``'s reference."""

    def accepts(self, name: str, target: str, opts: RunOptions) -> bool:
        """Whether ``name`` is a lock of one's own (an entry point, a ``module:attribute``),
        which runs on any target; a library runs where its target lists it."""
        found = source(name)
        return found is not None and found.library is None

    def check(self, opts: RunOptions, offered: Mapping[str, Sequence[str]]) -> None:
        """OptionError (one line) for the run's lock: a library on a target that does not
        offer it, or with settings it cannot take; a lock of one's own that cannot be
        loaded; a ``--lib-version`` without a library. ``offered``: each target offering
        the lock workload -> its variants."""
        lock = opts.record(LockOptions)
        name = lock.impl or ""
        found = source(name)
        if lock.lib_version is not None and (found is None or found.library is None):
            raise OptionError(
                "--lib-version picks the version of a lock library (--lock "
                f"{', '.join(LIBRARIES)}): leave it out or name one with --lock"
            )
        if found is None:
            return
        if found.library is not None:
            where = [t for t, names in offered.items() if name in names]
            _check_library(found.library, opts, where)
            return
        try:
            load(found.make)
        except (ImportError, AttributeError, TypeError, ValueError) as e:
            said = f"entry point {name} = {found.make}" if found.origin == "entry point" else name
            raise OptionError(
                f"--lock {said} cannot be loaded ({type(e).__name__}: {e}); a lock of your "
                "own is a module:attribute naming its make, importable by the harness's "
                f"Python (docs/own-lock.md), and runs on {', '.join(offered)}"
            ) from None

    def prepare(self, opts: RunOptions) -> LibEnv | None:
        """Install the run's library into its environment, if it names one (InstallError,
        one line, when it cannot be: the run is not started)."""
        found = source(opts.record(LockOptions).impl or "")
        if found is None or found.library is None:
            return None
        lib = found.library
        return ensure(
            lib.package, opts.record(LockOptions).lib_version or lib.version, also=lib.requires
        )

    def __call__(self, opts: RunOptions, cluster: Cluster, resource: str | None) -> ClientFactory:
        name = opts.record(LockOptions).impl or ""
        found = source(name)
        if found is None:
            raise OptionError(f"--lock {name} names no lock")
        record: dict[str, Any] = {"name": name, "variant": safe_word(name)}
        record.update(origin=found.origin, make=found.make)
        env = self.prepare(opts)
        if env is None or found.library is None:
            declared = declared_promises(found.make)
            if declared is not None:
                record["promises"] = declared.record()
            return own_lock_clients(found.make, library=record)(opts, cluster, resource)
        lib = found.library
        record.update(env.record(), library=lib.name, offers=lib.offers)
        if lib.promises is not None:
            record["promises"] = lib.promises.record()
        build = own_lock_clients(lib.make, env.site_packages, env.interpreter, record, lib.spread)
        return build(opts, cluster, resource)


def declared_promises(make: str) -> Promises | None:
    """What a lock of one's own says its documentation promises: a ``PROMISES`` (a
    ``workloads.libraries.promises.Promises``) beside its ``make``, in the same module;
    None when it declares none (its violations are then attributed to no one)."""
    module = importlib.import_module(make.partition(":")[0])
    said = getattr(module, "PROMISES", None)
    return said if isinstance(said, Promises) else None


def _check_library(lib: Library, opts: RunOptions, where: Sequence[str]) -> None:
    """A library runs on the targets that offer it (``where``), with settings it takes."""
    if not where:
        raise OptionError(f"--lock {lib.name}: no target offers it yet; choose another --lock")
    if opts.target not in where:
        raise OptionError(
            f"--lock {lib.name} runs on {', '.join(where)}, not {opts.target}: use "
            f"--target {where[0]}"
        )
    if lib.whole_seconds:
        lock = opts.record(LockOptions)
        for flag, value in (("--lease-ttl", lock.lease_ttl), ("--acquire-wait", lock.acquire_wait)):
            if value != int(value) or value < 1:
                raise OptionError(
                    f"{lib.name} counts in whole seconds, not {flag} {value:g}; use "
                    f"{flag} {max(1, round(value))}"
                )


OWN_LOCKS: Final = OwnLocks()
