"""The panel's Starlette application.

``create_app(store, *, token, port=None, hosts=(), summarize=True) -> Starlette``

* Routes come from :mod:`chatkeep.panel.routes` (page & history, chat, sessions, settings);
  ``/static`` serves the plain JS and CSS of the page from memory, with an ETag
  (:mod:`chatkeep.panel.assets`).
* Every request passes :class:`~chatkeep.panel.security.PanelGuard` first: the launch ``token``
  on every path but ``/static``, ``Host`` limited to loopback names (plus ``hosts``) and ``port``,
  same-origin ``Origin`` only, security headers on every answer.
* Errors are JSON with an HTTP status (:mod:`chatkeep.panel.http`); request bodies are read
  within the per-request and in-flight budgets of :mod:`chatkeep.panel.uploads`.
* The routes use the store only through its public API (``get_all``, ``history``, ``sessions``,
  ``local``, ``chat``, the attach functions); they write no SQL and build no request by hand.
* ``summarize`` starts the background auto-summary of long attachments (SPEC §7.5).

The app never opens or closes the store: its owner does.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount

from .assets import StaticAssets
from .http import exception_handlers
from .routes import all_routes
from .security import PanelGuard
from .state import PanelState

if TYPE_CHECKING:
    from .. import Store

__all__ = ["STATIC_DIR", "create_app"]

STATIC_DIR = Path(__file__).resolve().parent / "static"


def create_app(
    store: Store,
    *,
    token: str,
    port: int | None = None,
    hosts: Iterable[str] = (),
    summarize: bool = True,
) -> Starlette:
    """The panel for ``store`` (see the module docstring)."""
    routes = [*all_routes(), Mount("/static", StaticAssets(STATIC_DIR), name="static")]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(PanelGuard, token=token, port=port, hosts=tuple(hosts))],
        exception_handlers=exception_handlers,
    )
    app.state.panel = PanelState(store=store, summarize=summarize)
    return app
