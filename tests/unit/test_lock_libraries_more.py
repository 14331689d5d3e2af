"""tooz's drivers, kazoo's ``Lock`` and etcd3gw's ``Lock`` as ``--lock`` variants (issue
32): offered on the targets they run on (refused in one line elsewhere:
``test_lock_sources``), and installed with the drivers tooz imports only when asked, in an
environment of their own."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from clusters.registry import TARGETS
from workloads.libraries.env import ensure
from workloads.libraries.registry import LIBRARIES, TOOZ_DRIVERS

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
