"""Shared pytest configuration.

Tests marked ``docker`` need a reachable Docker engine: they are skipped without one,
unless ``HARNESS_REQUIRE_DOCKER=1`` (CI sets it after starting dockerd), where they fail.
Tests marked ``vm`` boot virtual machines (root and qemu: ``tests/support/vmhost``) and take
minutes: they run only with ``HARNESS_REQUIRE_VM=1``, and then fail when this machine
cannot boot VMs; otherwise they are skipped, saying why.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import pytest


@functools.cache
def _docker_unreachable_reason() -> str | None:
    """None when the engine answers a ping, else the one-line reason."""
    from clusters._docker import connect
    from core.cluster import ClusterError

    try:
        connect(timeout=10).close()
    except ClusterError as e:
        return str(e)
    return None


@functools.cache
def _vm_unavailable_reason() -> str | None:
    """None when VM tests are asked for (they take minutes) and guests can boot here, else
    the one-line reason."""
    from tests.support.vmhost.vm import unavailable

    reason = unavailable()
    if reason is None and os.environ.get("HARNESS_REQUIRE_VM") != "1":
        return (
            "VM tests are opt-in (they boot a VM and take minutes); HARNESS_REQUIRE_VM=1 runs them"
        )
    return reason


def _not_root_reason() -> str | None:
    """None when this process may mount a filesystem (a small tmpfs that fills up)."""
    return None if os.geteuid() == 0 else "needs root (it mounts a small tmpfs)"


NEEDS: dict[str, tuple[str, Callable[[], str | None]]] = {
    "docker": ("HARNESS_REQUIRE_DOCKER", _docker_unreachable_reason),
    "vm": ("HARNESS_REQUIRE_VM", _vm_unavailable_reason),
    "root": ("HARNESS_REQUIRE_ROOT", _not_root_reason),
}
"""marker -> (the variable that turns a skip into a failure, why the need is unmet)."""


def _skip_or_fail_without_needs(item: pytest.Item) -> None:
    """Skip (or, with its HARNESS_REQUIRE_* variable set to 1, fail) a test whose marker
    names something this machine lacks."""
    for marker, (variable, reason_of) in NEEDS.items():
        if item.get_closest_marker(marker) is None:
            continue
        reason = reason_of()
        if reason is None:
            continue
        if os.environ.get(variable) == "1":
            pytest.fail(f"{variable}=1 but {reason}", pytrace=False)
        pytest.skip(reason)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Runs before any fixture of ``item`` (a module-scoped cluster included) is set up."""
    _skip_or_fail_without_needs(item)


def _hypothesis_profiles() -> None:
    """In CI (``CI=true``) property tests draw the same examples every run: a verdict on a
    change must not depend on the luck of the draw (a rare slow example belongs in an
    issue and a test of its own). Elsewhere they draw afresh, to find new cases."""
    from hypothesis import settings

    settings.register_profile("ci", derandomize=True, database=None)
    if os.environ.get("CI") == "true":
        settings.load_profile("ci")


_hypothesis_profiles()
