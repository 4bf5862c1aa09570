"""Fixtures for the conversation tests: a store wired to the loopback provider server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The helpers module sits next to these tests; make it importable whatever the import mode.
sys.path.insert(0, str(Path(__file__).parent))

from conv_helpers import Sleeps, use_provider

from support.provider_server import provider_server  # noqa: F401


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def chat(store, provider_server, sleeps):  # noqa: F811
    """``store.chat`` on the parametrized store, talking to the loopback server."""
    use_provider(store, provider_server)
    engine = store.chat
    engine.sleep = sleeps
    return engine


@pytest.fixture
def sqlite_store(sqlite_spec):
    s = sqlite_spec.open()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def lite_chat(sqlite_store, provider_server, sleeps):  # noqa: F811
    """``store.chat`` on an SQLite store only (for tests that storage backends do not affect)."""
    use_provider(sqlite_store, provider_server)
    engine = sqlite_store.chat
    engine.sleep = sleeps
    return engine
