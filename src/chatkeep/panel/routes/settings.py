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

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import InvalidValue, preview_request
from ..http import BadRequest, json_body, ok, threaded
from ..state import PanelState, public_settings

__all__ = ["ROUTES", "RULES", "SEND_SHORTCUTS", "check_settings"]

SEND_SHORTCUTS = ("Enter", "Ctrl+Enter")
MAX_PROMPT_CHARS = 100_000
MAX_NAME_CHARS = 60


def _int_range(low: int, high: int | None = None) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        ok_type = isinstance(v, int) and not isinstance(v, bool)
        return ok_type and v >= low and (high is None or v <= high)

    return check


def _string(
    limit: int, *, single_line: bool = False, non_empty: bool = False
) -> Callable[[Any], bool]:
    def check(v: Any) -> bool:
        if not isinstance(v, str) or len(v) > limit:
            return False
        if single_line and any(c in v for c in "\r\n\x00"):
            return False
        return bool(v.strip()) or not non_empty

    return check


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


#: ``key: (check, what a valid value is)`` for every settable key.
RULES: dict[str, tuple[Callable[[Any], bool], str]] = {
    "activeProvider": (_string(MAX_NAME_CHARS, single_line=True), "a provider card name or ''"),
    "activeModel": (_string(200, single_line=True), "a model id, or '' for the card's own"),
    "contextMode": (_string(40, single_line=True, non_empty=True), "a short mode name"),
    "maxTextChars": (_int_range(0), "an integer ≥ 0 (0 = 1,000,000)"),
    "autoSummarizeAttachments": (_bool, "true or false"),
    "summarizeThresholdChars": (_int_range(0), "an integer ≥ 0 (0 = 100,000)"),
    "systemPrompt": (_string(MAX_PROMPT_CHARS), f"text of at most {MAX_PROMPT_CHARS:,} chars"),
    "replyLanguage": (_string(100, single_line=True), "a language name, or ''"),
    "maxHistoryEntries": (_int_range(1), "an integer ≥ 1"),
    "maxHistoryChars": (_int_range(1), "an integer ≥ 1"),
    "maxSessions": (_int_range(0), "an integer ≥ 0 (0 = unlimited)"),
    "fontSize": (_int_range(10, 32), "an integer from 10 to 32"),
    "sendShortcut": (lambda v: v in SEND_SHORTCUTS, " or ".join(SEND_SHORTCUTS)),
    "thoughtAutoCollapse": (_bool, "true or false"),
}


def _panel(request: Request) -> PanelState:
    return request.app.state.panel


def check_settings(changes: dict[str, Any], providers: dict[str, Any]) -> None:
    """Raise ``InvalidValue`` naming the first key whose value is not allowed."""
    for key, value in changes.items():
        if key not in RULES:
            raise InvalidValue(
                f"{key!r} is not a setting the panel can change",
                hint="providers have their own endpoint; history and sessions are not settings",
            )
        check, what = RULES[key]
        if not check(value):
            raise InvalidValue(f"{key} must be {what}, got {value!r}", hint=f"give {what}")
    active = changes.get("activeProvider")
    if active and active not in providers:
        raise InvalidValue(
            f"no provider card named {active!r}", hint="add the card first, then select it"
        )


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
