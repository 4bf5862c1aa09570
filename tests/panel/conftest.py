"""Fixtures for the panel tests: a real SQLite store, the app behind a TestClient, the provider
server, and a real uvicorn server on a random loopback port."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

# The helpers module sits next to these tests; make it importable whatever the import mode.
sys.path.insert(0, str(Path(__file__).parent))

from panel_helpers import ORIGIN, PORT, TOKEN  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

import chatkeep  # noqa: E402
from chatkeep.panel import PanelServer, create_app  # noqa: E402
from support.provider_server import provider_server  # noqa: E402, F401


@pytest.fixture
def pstore(tmp_path: Any) -> Iterator[chatkeep.Store]:
    """A fresh SQLite store file for one test."""
    s = chatkeep.open(str(tmp_path / "panel.db"))
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def client(pstore: chatkeep.Store) -> Iterator[TestClient]:
    """The panel app on ``pstore``; requests carry the token header and a loopback Host."""
    app = create_app(pstore, token=TOKEN, port=PORT, summarize=False)
    with TestClient(
        app, base_url=ORIGIN, headers={"X-Chatkeep-Token": TOKEN}, raise_server_exceptions=False
    ) as c:
        yield c


@pytest.fixture
def anon(pstore: chatkeep.Store) -> Iterator[TestClient]:
    """The same app without any token header."""
    app = create_app(pstore, token=TOKEN, port=PORT, summarize=False)
    with TestClient(app, base_url=ORIGIN, raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def live_server(pstore: chatkeep.Store) -> Iterator[PanelServer]:
    """The panel served by uvicorn on 127.0.0.1, any free port."""
    server = PanelServer(pstore, host="127.0.0.1", port=0, summarize=False)
    server.start()
    try:
        yield server
    finally:
        server.stop()
