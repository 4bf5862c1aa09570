"""The panel's routes, one module per group: page and history, chat, sessions, settings, search,
export and import."""

from __future__ import annotations

from starlette.routing import BaseRoute

from . import chat, page, search, sessions, settings, transfer

__all__ = ["all_routes"]


def all_routes() -> list[BaseRoute]:
    return [
        *page.ROUTES,
        *chat.ROUTES,
        *sessions.ROUTES,
        *settings.ROUTES,
        *search.ROUTES,
        *transfer.ROUTES,
    ]
