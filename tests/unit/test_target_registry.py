"""clusters.target_registry: one TargetSpec per target, everything else reads it.

Every registered target is complete (a description, a cluster builder, clients for each
workload it lists); an unknown name is one line listing the registered ones; listing the
targets needs neither Docker's SDK nor paramiko; and no code outside a target's own
subpackage and the registry names it.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from clusters import target_registry
from clusters.server import ServerSpec
from clusters.spec import Lazy, LeaseTtl, TargetSpec
from clusters.target_registry import TARGETS, UnknownTarget, resolve
from core.option_checks import OptionError
from core.options import RunOptions
from harness.validate import check_target, decide
from nemesis.fault_registry import FAULTS
from tests.support.names import ROOT, product_strings, strings


@pytest.mark.parametrize("name", list(TARGETS))
def test_every_target_is_complete(name: str) -> None:
    spec = TARGETS[name]
    assert spec.name == name and spec.description and spec.default_nodes >= 1
    assert spec.server is not None, "every target runs a ServerSpec"
    assert spec.workload_names, "at least one workload"
    for workload in spec.workload_names:
        opts = RunOptions.of(target=name, workload=workload)
        spec.check_options(opts)
        assert callable(spec.client_builder(opts)), workload
    for name, offer in spec.offers.items():
        assert offer.offered == (offer.client is not None or bool(offer.variants)), name
        for variant in offer.variants:
            assert callable(Lazy(offer.variants[variant]).load()), (name, variant)
        assert set(offer.unfenced) <= set(offer.variants), name
    assert isinstance(Lazy(spec.server).load(), ServerSpec), "server names a ServerSpec"
    assert (spec.image is None) == spec.local, "a target run in Docker has an image"
    log = spec.service_log
    assert log is None or not (Path(log).is_absolute() or ".." in Path(log).parts), log


def test_images_ssh_and_packages_come_from_the_specs() -> None:
    from clusters.images import IMAGES
    from clusters.ssh.debs import SUITE_OVERRIDES

    assert set(IMAGES) == {t.image for t in TARGETS.values() if t.image}
    assert set(target_registry.ssh_targets()) == {n for n, t in TARGETS.items() if not t.local}
    assert SUITE_OVERRIDES == {"consul": "bullseye"}
    assert target_registry.DEFAULT_TARGET in TARGETS
    assert resolve("").name == target_registry.DEFAULT_TARGET


def test_an_unknown_target_is_one_line_listing_the_registered_ones() -> None:
    with pytest.raises(UnknownTarget) as e:
        resolve("mysql")
    assert "\n" not in str(e.value) and "unknown target 'mysql'" in str(e.value)
    assert all(name in str(e.value) for name in TARGETS)


def test_the_cli_refuses_an_unknown_target_with_254(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    with pytest.raises(SystemExit) as e:
        main(["run", "--target", "mysql"])
    assert e.value.code == 254
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and all(f"'{name}'" in err for name in TARGETS)


def test_the_option_reference_lists_every_target_with_its_description(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``harness docs options`` (issue 28: the per-target table left ``run --help``)."""
    from harness.cli import main

    assert main(["docs", "options", "run"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name, spec in TARGETS.items():
        assert f"{name}: {' '.join(spec.description.split())}" in out


def test_a_target_without_a_fault_names_the_targets_that_have_real_clusters() -> None:
    local = next(t for t in TARGETS.values() if t.local)
    real = [n for n, t in TARGETS.items() if not t.local]
    missing = next(f for f in FAULTS.values() if not f.needs <= local.abilities).name
    with pytest.raises(OptionError) as e:
        check_target(local, decide(RunOptions.of(target=local.name, nemesis=[missing])))
    assert f"(--target {', '.join(real)})" in str(e.value)


def test_listing_targets_needs_neither_docker_nor_paramiko() -> None:
    code = (
        "import sys\n"
        "sys.modules['docker'] = None\n"
        "sys.modules['paramiko'] = None\n"
        "from clusters.target_registry import TARGETS, DEFAULT_TARGET\n"
        "from harness.validate import check_run, targets_described\n"
        "from core.options import RunOptions\n"
        "assert targets_described()\n"
        "opts, spec = check_run(RunOptions.of())\n"
        "assert spec.name == DEFAULT_TARGET and spec.local\n"
        "assert spec.client_builder(opts)\n"
        "print(len(TARGETS))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(len(TARGETS))


# -- no target's name outside its subpackage and the registry ----------------------------------

EXEMPT: dict[str, set[str]] = {
    # "etcd" as a linearizability model (etcd's register, failed CAS may have happened) and
    # porcupine's etcd log format, not the target.
    "core/formats/__init__.py": {"etcd"},
    "checkers/linear/models/__init__.py": {"etcd"},
    "checkers/linear/models/register.py": {"etcd"},
    "checkers/linear/simulate.py": {"etcd"},
    "checkers/linear/stale.py": {"etcd"},
    # "redis" as the PyPI package of redis-py (a lock library), not the target.
    "workloads/libraries/library_registry.py": {"redis"},
    # "postgres" as PostgreSQL's own role and database that tooz's URL names, not the target.
    "workloads/libraries/tooz_lock.py": {"postgres"},
}


def _owners() -> dict[str, str]:
    """Target name -> the subpackage of clusters/ whose spec module defines it."""
    owners: dict[str, str] = {}
    for path in sorted((ROOT / "clusters").glob("*/spec.py")):
        module = __import__(f"clusters.{path.parent.name}.spec", fromlist=["_"])
        for value in vars(module).values():
            if isinstance(value, TargetSpec):
                owners[value.name] = path.parent.name
    return owners


def test_every_target_is_owned_by_one_subpackage() -> None:
    assert set(_owners()) == set(TARGETS)


def test_no_code_names_a_target_outside_its_subpackage_and_the_registry() -> None:
    owners = _owners()
    found = []
    for rel, node in product_strings():
        name = node.value
        if (
            rel == "clusters/target_registry.py"
            or name not in owners
            or name in EXEMPT.get(rel, set())
        ):
            continue
        if rel.startswith(f"clusters/{owners[name]}/"):
            continue
        found.append(f"{rel}:{node.lineno}: {name!r}")
    assert found == [], "target names outside their subpackage: " + "; ".join(found)


def test_every_exemption_is_still_needed() -> None:
    used = {(rel, node.value) for rel, node in product_strings()}
    stale = [(f, n) for f, names in EXEMPT.items() for n in names if (f, n) not in used]
    assert stale == [], f"exemptions no longer needed: {stale}"


def test_the_grep_reads_constants_not_docstrings() -> None:
    planted = ast.parse('"""A docstring naming etcd."""\nTARGET = "redlock"\n')
    assert [n.value for n in strings(planted)] == ["redlock"]


def lease_rules() -> dict[str, LeaseTtl]:
    """Each target's lease-TTL rule (among its own rules on the options)."""
    return {n: r for n, t in TARGETS.items() for r in t.checks if isinstance(r, LeaseTtl)}


@pytest.mark.parametrize("name", list(lease_rules()))
def test_a_lease_ttl_the_service_would_change_is_refused(name: str) -> None:
    spec = TARGETS[name]
    rule = lease_rules()[name]

    def lock(ttl: float) -> RunOptions:
        return RunOptions.of(target=name, workload="lock", lease_ttl=ttl, keepalive=ttl / 4)

    spec.check_options(lock(rule.low))
    with pytest.raises(OptionError, match=f"{name} grants lease TTLs from {rule.low:g} s"):
        spec.check_options(lock(rule.low / 2))
    if rule.high is not None:
        spec.check_options(lock(rule.high))
        with pytest.raises(OptionError, match="use --lease-ttl"):
            spec.check_options(lock(rule.high + 1))
    if rule.whole:
        with pytest.raises(OptionError, match="in whole seconds"):
            spec.check_options(lock(rule.low + 0.5))
    spec.check_options(RunOptions.of(target=name, workload="cas-register", lease_ttl=0.1))


def test_the_known_lease_rules() -> None:
    rules = lease_rules()
    assert rules["etcd"] == LeaseTtl(2, whole=True)  # etcd raises shorter leases silently
    assert rules["zookeeper"] == LeaseTtl(1.0, 60.0)  # minSessionTimeout, maxSessionTimeout
    assert rules["consul"] == LeaseTtl(1.0, 86400.0)  # session_ttl_min, Consul's 24 h
