"""tooz's drivers, kazoo's ``Lock`` and etcd3gw's ``Lock`` on the targets they run on
(issue 32), each at its pinned version in its own environment: etcd3gw's on etcd in CI
(one short run), every one under a client pause past its TTL nightly, whose verdict is
whatever the library earns: the run must end with one, the library recorded."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_lock_libraries import _harness, _ops, _recorded

from clusters.target_registry import TARGETS
from workloads.libraries.library_registry import LIBRARIES

pytestmark = [pytest.mark.docker, pytest.mark.slow]
SETTINGS = ("--recovery-time", "0", "--lease-ttl", "2", "--acquire-wait", "1")
LOCKS = ("tooz-zookeeper", "tooz-redis", "tooz-etcd3gw", "tooz-postgresql", "kazoo", "etcd3gw")
WHERE = {v: t.name for t in TARGETS.values() for v in t.offers["lock"].variants if v in LOCKS}
"""Each library, the one target that offers it."""
SHORT = ("--time-limit", "5", "--nemesis", "none")
PAUSED = ("--time-limit", "10", "--work-time", "0.1", "--nemesis", "client-pause")


def _ran(out: Path, lock: str) -> tuple[dict, dict]:
    """test.json and results.json of the run, its library recorded at its pinned version
    and every grant without a token (none of these gives one)."""
    test, results = _recorded(out)
    lib = test["lock_library"]
    assert (lib["library"], lib["version"]) == (lock, LIBRARIES[lock].version)
    assert Path(lib["interpreter"]).is_file() and test["versions"][f"{lock} library"]
    grants = [op for op in _ops(out) if op["f"] == "acquire" and op["type"] == "ok"]
    assert len(grants) >= 3 and all(op["value"]["token"] is None for op in grants)
    return test, results


def test_etcd3gw_holds_etcd_lock_from_its_own_environment(tmp_path: Path) -> None:
    out = tmp_path / "o"
    code, said = _harness(out, "--target", "etcd", "--lock", "etcd3gw", *SETTINGS, *SHORT)
    assert code == 0, said
    _, results = _ran(out, "etcd3gw")
    assert results["checkers"]["mutex"]["valid"] is True
    assert len([op for op in _ops(out) if op["f"] == "write" and op["type"] == "ok"]) >= 3


@pytest.mark.nightly
@pytest.mark.parametrize(("lock", "target"), sorted(WHERE.items()))
def test_each_library_under_a_client_pause_past_its_ttl(
    tmp_path: Path, lock: str, target: str
) -> None:
    out = tmp_path / "o"
    code, said = _harness(out, "--target", target, "--lock", lock, *SETTINGS, *PAUSED)
    assert code in (0, 1), said  # valid or invalid: what the library earned
    _, results = _ran(out, lock)
    assert results["checkers"]["faults"]["valid"] is True  # the pause took effect
    assert results["checkers"]["mutex"]["valid"] in (True, False)
