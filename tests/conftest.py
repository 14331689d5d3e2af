"""Shared pytest configuration.

Tests marked ``docker`` need a reachable Docker engine: they are skipped without one,
unless ``HARNESS_REQUIRE_DOCKER=1`` (CI sets it after starting dockerd), where they fail.
"""

from __future__ import annotations

import functools
import os

import pytest


@functools.cache
def _docker_unreachable_reason() -> str | None:
    """None when the engine answers a ping, else the one-line reason."""
    from clusters._docker import connect
    from clusters.base import ClusterError

    try:
        connect(timeout=10).close()
    except ClusterError as e:
        return str(e)
    return None


def _skip_or_fail_without_docker(item: pytest.Item) -> None:
    """Skip (or, with HARNESS_REQUIRE_DOCKER=1, fail) a ``docker`` test without an engine."""
    if item.get_closest_marker("docker") is None:
        return
    reason = _docker_unreachable_reason()
    if reason is None:
        return
    if os.environ.get("HARNESS_REQUIRE_DOCKER") == "1":
        pytest.fail(f"HARNESS_REQUIRE_DOCKER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Runs before any fixture of ``item`` (a module-scoped cluster included) is set up."""
    _skip_or_fail_without_docker(item)
