"""Fixtures for the provider tests: the loopback provider server and card helpers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
_TESTS = str(_HERE.parent)
# Make ``support`` (and the ``provider_bodies`` helper next to these tests) importable whatever the
# import mode.
for _path in (_TESTS, str(_HERE)):
    if _path not in sys.path:
        sys.path.insert(0, _path)

from chatkeep.providers import Card  # noqa: E402
from support.provider_server import ProviderServer, provider_server  # noqa: E402, F401


@pytest.fixture
def make_card(provider_server: ProviderServer):  # noqa: F811
    """Build a :class:`Card` pointing at the loopback server."""

    def make(style: str = "chat", **overrides) -> Card:
        fields = {
            "name": "loop",
            "style": style,
            "base_url": provider_server.url("/v1"),
            "model": "test-model",
            "api_key": "sk-test-key",
        }
        fields.update(overrides)
        return Card(**fields)

    return make
