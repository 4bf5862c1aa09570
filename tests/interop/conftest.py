"""Fixtures for the interop tests: a fresh store file per test."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The helpers module sits next to these tests; make it importable whatever the import mode.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "store.db"
