"""Browser tests: the pages as a person sees them, in headless Chromium.

Every test here is marked ``browser`` and needs Debian's Chromium
(``apt-get install -y chromium``). Without it they are skipped, unless
``HARNESS_REQUIRE_BROWSER=1`` (set it in CI once Chromium is installed), where they fail.
Screenshots go to each test's tmp dir and to ``results/screenshots/``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.chromium import chromium_path

SCREENSHOTS = Path(__file__).resolve().parents[2] / "results" / "screenshots"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "browser: needs headless Chromium (fails, not skips, when HARNESS_REQUIRE_BROWSER=1)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).parent == here:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(autouse=True)
def _chromium() -> None:
    """Skip (or, with HARNESS_REQUIRE_BROWSER=1, fail) when Chromium is missing."""
    if chromium_path() is not None:
        return
    reason = "Chromium is not installed (apt-get install -y chromium)"
    if os.environ.get("HARNESS_REQUIRE_BROWSER") == "1":
        pytest.fail(f"HARNESS_REQUIRE_BROWSER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture
def save_screenshot(tmp_path: Path) -> Callable[[str, bytes], tuple[Path, Path]]:
    """Save PNG bytes as ``name.png`` in the test's tmp dir and in results/screenshots/;
    returns both paths."""

    def save(name: str, png: bytes) -> tuple[Path, Path]:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        local, shared = tmp_path / f"{name}.png", SCREENSHOTS / f"{name}.png"
        local.write_bytes(png)
        shared.write_bytes(png)
        return local, shared

    return save
