"""tooz's drivers, kazoo's ``Lock`` and etcd3gw's ``Lock`` as ``--lock`` variants (issue
32): offered on the targets they run on (refused in one line elsewhere:
``test_lock_sources``), and installed with the drivers tooz imports only when asked, in an
environment of their own."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

from clusters.target_registry import TARGETS
from core.options import RunOptions
from workloads.libraries.env import ensure
from workloads.libraries.library_registry import LIBRARIES, TOOZ_DRIVERS
from workloads.lock.own import own_lock_clients

LOCKS = ("tooz-zookeeper", "tooz-redis", "tooz-etcd3gw", "tooz-postgresql", "kazoo", "etcd3gw")
WHERE = dict(
    zip(LOCKS, ("zookeeper", "redis", "etcd", "postgres", "zookeeper", "etcd"), strict=True)
)
"""Each library, the one target it runs on."""


@pytest.mark.parametrize(("lock", "target"), sorted(WHERE.items()))
def test_each_is_offered_where_it_runs_and_nowhere_else(lock: str, target: str) -> None:
    offering = [t.name for t in TARGETS.values() if lock in t.offers["lock"].variants]
    assert offering == [target]
    assert lock in TARGETS[target].offers["lock"].unfenced  # none gives a fencing token


def test_tooz_is_installed_with_its_pinned_drivers_in_one_environment(tmp_path: Path) -> None:
    asked: list[list[str]] = []

    def pip(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        if "pip" in argv:
            asked.append(argv)
            return subprocess.CompletedProcess(argv, 0, "", "")
        if "-c" in argv:  # the metadata question, in the new environment
            return subprocess.CompletedProcess(argv, 0, "9.1.0\nlib/site-packages\n", "")
        return subprocess.run(argv, **kw)

    lib = LIBRARIES["tooz-redis"]
    assert lib.requires == TOOZ_DRIVERS and all("==" in r for r in TOOZ_DRIVERS)
    env = ensure(lib.package, lib.version, root=tmp_path, run=pip, also=lib.requires)
    assert len(asked) == 1 and asked[0][-5:] == ["tooz==9.1.0", *TOOZ_DRIVERS]
    assert env.asked == " ".join(["tooz==9.1.0", *TOOZ_DRIVERS])
    assert env.version == "9.1.0"
    # tooz without its drivers is another environment
    alone = ensure("tooz", "9.1.0", root=tmp_path, run=pip)
    assert len(asked) == 2 and alone.site_packages != env.site_packages
    again = ensure("tooz", "9.1.0", root=tmp_path, run=pip, also=TOOZ_DRIVERS)
    assert again == env and len(asked) == 2  # cached


class _Three:
    """A cluster of three nodes, as the connector reads one."""

    run_id = "t"

    def endpoints(self) -> dict[str, str]:
        return {"n1": "10.0.0.1:1", "n2": "10.0.0.2:1", "n3": "10.0.0.3:1"}


@pytest.mark.parametrize(("lock", "named"), [("kazoo", True), ("tooz-postgresql", False)])
def test_a_holder_talking_to_its_own_server_names_it(lock: str, named: bool) -> None:
    """A fault aimed at the holder's server finds it: a library that talks to the worker's
    own server first names it in its completions; one that talks to whichever server
    (libpq's primary among all) names none. (A holder-aimed partition of kazoo's lock was
    never applied: "no current holder whose node is known".)"""
    lib = LIBRARIES[lock]
    opts = RunOptions.from_mapping({"target": WHERE[lock], "lock": lock})
    build = own_lock_clients(lib.make, spread=lib.spread)
    factory = build(opts, cast(Any, _Three()), "127.0.0.1:9")
    nodes = [factory.connector.for_slot(slot)[1] for slot in range(3)]
    assert nodes == (["n1", "n2", "n3"] if named else [None, None, None])
