"""Fixtures for the panel tests: a real SQLite store, the app behind a TestClient, the provider
server, and a real uvicorn server on a random loopback port."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
pytest.importorskip("jinja2")

# The helpers module sits next to these tests; make it importable whatever the import mode.
sys.path.insert(0, str(Path(__file__).parent))

from panel_helpers import ORIGIN, PORT, TOKEN
from starlette.testclient import TestClient

import chatkeep
from chatkeep.panel import PanelServer, create_app
from support.provider_server import provider_server  # noqa: F401


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


try:
    from playwright import sync_api
except ImportError:  # reported by the browser fixture: a skip locally, a failure on CI
    sync_api = None

CHROMIUM = os.environ.get("CHATKEEP_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TIMEOUT_MS = 15_000


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    """One headless Chromium for the run (Debian's /usr/bin/chromium).

    Without Playwright or Chromium the browser tests are skipped, except when ``CI=true``: then
    they fail, like the PostgreSQL tests."""
    missing = None
    if sync_api is None:
        missing = "the playwright package is not installed (pip install playwright)"
    elif not shutil.which(CHROMIUM) and not os.path.exists(CHROMIUM):
        missing = f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser tests need a browser on CI: {missing}")
        pytest.skip(missing)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def make_page(browser: Any, live_server: PanelServer) -> Iterator[Callable[..., Any]]:
    """``make_page(width=1400, theme="light", height=900)``: a fresh browser context on the
    panel at that viewport and OS colour scheme. Any page error, console error or CSP report
    fails the test."""
    contexts: list[Any] = []
    pages: list[Any] = []

    def make(width: int = 1400, theme: str = "light", height: int = 900) -> Any:
        context = browser.new_context(
            viewport={"width": width, "height": height}, color_scheme=theme
        )
        context.grant_permissions(["clipboard-read", "clipboard-write"])
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        pg = context.new_page()
        problems: list[str] = []
        pg.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))
        pg.on(
            "console",
            lambda msg: problems.append(f"console: {msg.text}") if msg.type == "error" else None,
        )
        pg.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        pg.problems = problems
        pages.append(pg)
        return pg

    try:
        yield make
    finally:
        for context in contexts:
            context.close()
    for pg in pages:
        assert pg.problems == [], pg.problems


@pytest.fixture
def page(make_page: Callable[..., Any]) -> Any:
    """A 1400-px light page on the panel (see ``make_page``)."""
    return make_page()
