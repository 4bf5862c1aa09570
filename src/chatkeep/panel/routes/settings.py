"""Settings, provider cards, the request preview and store statistics.

| route | does |
|---|---|
| ``GET /api/settings`` | the public ``get_all()`` (history dropped, panel options defaulted, API keys hidden) |
| ``PUT /api/settings`` | ``{key: value, …}`` for keys of :data:`chatkeep.GET_ALL_KEYS` except ``providers``; every value is checked (:data:`RULES`) before one batched write |
| ``PUT /api/providers/{name}`` | a card ``{style, baseUrl, model, apiKeyEnv?, apiKey?, temperature?, maxTokens?, stream?}`` through ``store.cards.put`` (a card sent without ``apiKey`` keeps the stored key, ``"apiKey": ""`` removes it); ``?activate=1`` makes it active, and the first usable card becomes active by itself |
| ``DELETE /api/providers/{name}`` | ``store.cards.remove`` (the selection moves in the same transaction) |
| ``GET /api/preview?draft=`` | :func:`chatkeep.preview_request` — exactly what the next send sends |
| ``GET /api/stats`` | ``store.stats()`` |

Bad values are refused with 400 and nothing is written.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import SETTING_RULES, check_settings, preview_request
from ..http import BadRequest, json_body, ok, threaded
from ..state import PanelState, public_settings

__all__ = ["ROUTES", "RULES"]

MAX_NAME_CHARS = 60
#: The library's settings rules: one source for the CLI's `config` and the panel.
RULES = SETTING_RULES


def _panel(request: Request) -> PanelState:
    return request.app.state.panel


async def get_settings(request: Request) -> Response:
    panel = _panel(request)
    return ok(public_settings(await threaded(panel.store.get_all)))


async def put_settings(request: Request) -> Response:
    panel = _panel(request)
    changes = await json_body(request)

    def run() -> dict[str, Any]:
        current = panel.store.get_all()
        check_settings(changes, current.get("providers") or {})
        if changes:
            panel.store.local.set(changes)
        return public_settings(panel.store.get_all())

    return ok(await threaded(run))


def _card_name(request: Request) -> str:
    name = request.path_params["name"].strip()
    if not name or len(name) > MAX_NAME_CHARS or any(ord(c) < 32 for c in name):
        raise BadRequest(
            f"not a usable provider name: {name[:MAX_NAME_CHARS]!r}",
            hint=f"use a short single-line name (at most {MAX_NAME_CHARS} characters)",
        )
    return name


async def put_provider(request: Request) -> Response:
    panel = _panel(request)
    name = _card_name(request)
    card = await json_body(request)
    activate = True if request.query_params.get("activate") in ("1", "true") else None

    def run() -> dict[str, Any]:
        panel.store.cards.put(name, card, activate=activate, keep_key=True)
        return public_settings(panel.store.get_all())

    return ok(await threaded(run))


async def delete_provider(request: Request) -> Response:
    panel = _panel(request)
    name = _card_name(request)

    def run() -> dict[str, Any]:
        panel.store.cards.remove(name)
        return public_settings(panel.store.get_all())

    return ok(await threaded(run))


async def preview(request: Request) -> Response:
    panel = _panel(request)
    draft = request.query_params.get("draft", "")

    def run() -> dict[str, Any]:
        return preview_request(panel.store, draft)

    return ok(await threaded(run))


async def stats(request: Request) -> Response:
    panel = _panel(request)
    return ok(await threaded(panel.store.stats))


ROUTES = [
    Route("/api/settings", get_settings, methods=["GET"]),
    Route("/api/settings", put_settings, methods=["PUT"]),
    Route("/api/providers/{name}", put_provider, methods=["PUT"]),
    Route("/api/providers/{name}", delete_provider, methods=["DELETE"]),
    Route("/api/preview", preview, methods=["GET"]),
    Route("/api/stats", stats, methods=["GET"]),
]
