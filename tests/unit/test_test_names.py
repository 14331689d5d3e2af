"""pytest imports test files by their basename (the test folders are not packages): two
files with one name in different folders stop the whole run at collection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_file_has_its_own_name() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, count in names.items() if count > 1] == []
