"""pytest imports test modules by basename (rootdir import mode, no packages under tests/unit
and tests/integration): two test files with one name stop the whole suite at collection."""

from __future__ import annotations

from collections import Counter
from pathlib import Path


def test_every_test_module_has_a_unique_basename() -> None:
    names = Counter(p.name for p in Path("tests").rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
