"""Message search in the drawer (SPEC §16): hits under the session matches, opened at the hit.

| route | does |
|---|---|
| ``GET /api/search?q=&offset=&limit=`` | ``{"hits", "more", "offset"}``: one page (``limit`` ≤ ``MAX_PAGE``, ``PAGE`` by default) of ``store.search(q, mode="text")`` — text mode, so typing never waits on embeddings; each hit also has ``parts``, its snippet as ``[text, marked]`` pairs (:func:`chatkeep.split_snippet`), for the page to build from text nodes |
| ``GET /api/search/locate?session=&index=`` | where entry ``index`` of the loaded session ``session`` is now in the live conversation: ``{"live": i}``, or ``{"archive": j}`` when the live window moved it to the archive on load (400 when that session is not the loaded one) |
| ``GET /api/search/entry?where=&index=&session=`` | ``{"entry": view}``: one entry of the archive (``where=archive``) or of a saved or evicted session's body, as the page's read-only view |

The page opens a session hit with the drawer's own load (``POST /api/sessions/{id}/load``: the
live conversation is written back first, as always), then asks ``locate``.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import chatkeep

from ..http import BadRequest, NotFound, ok, threaded
from ..state import PanelState
from .page import history_payload, int_param

__all__ = ["ROUTES"]

MAX_QUERY_CHARS = 500
PAGE = 10  # hits per page in the drawer
MAX_PAGE = 50
PLACES = ("archive", "session", "evicted")


def _panel(request: Request) -> PanelState:
    return request.app.state.panel


def _with_parts(hit: dict[str, Any]) -> dict[str, Any]:
    parts = [[text, marked] for text, marked in chatkeep.split_snippet(hit.get("snippet", ""))]
    return {**hit, "parts": parts}


async def search(request: Request) -> Response:
    panel = _panel(request)
    q = request.query_params.get("q", "")[:MAX_QUERY_CHARS]
    offset = int_param(request, "offset", 0) or 0
    limit = min(int_param(request, "limit", PAGE) or PAGE, MAX_PAGE)
    if not q.strip():
        return ok({"hits": [], "more": False, "offset": offset})

    def run() -> dict[str, Any]:
        hits = panel.store.search(q, limit=limit + 1, offset=offset, mode="text")
        return {
            "hits": [_with_parts(h) for h in hits[:limit]],
            "more": len(hits) > limit,
            "offset": offset,
        }

    return ok(await threaded(run))


def _index(request: Request) -> int:
    index = int_param(request, "index", None)
    if index is None:
        raise BadRequest("'index' is required", hint="the hit's index")
    return index


def _session_id(request: Request) -> str:
    session_id = request.query_params.get("session", "")
    if not session_id:
        raise BadRequest("'session' is required", hint="the hit's sessionId")
    return session_id


async def locate(request: Request) -> Response:
    panel = _panel(request)
    session_id = _session_id(request)
    index = _index(request)

    def run() -> dict[str, Any]:
        store = panel.store
        if store.sessions.active_id() != session_id:
            raise BadRequest(f"session {session_id!r} is not the loaded one", hint="load it first")
        found = store.sessions.get(session_id)
        if found is None:
            raise NotFound(f"no saved session {session_id!r}")
        live = len(store.history.read())
        # the loaded session is its body's first `head` entries (the window archived them on
        # load: the newest of the archive) and the live conversation
        head = max(0, len(found["history"]) - live)
        if index >= head:
            return {"live": min(index - head, max(0, live - 1))}
        archived = store.history.archived_count()
        return {"archive": max(0, archived - head + index)}

    return ok(await threaded(run))


async def entry(request: Request) -> Response:
    panel = _panel(request)
    where = request.query_params.get("where", "")
    if where not in PLACES:
        raise BadRequest(f"'where' must be one of {', '.join(PLACES)}, got {where[:20]!r}")
    index = _index(request)
    session_id = _session_id(request) if where != "archive" else ""

    def run() -> dict[str, Any]:
        store = panel.store
        if where == "archive":
            _total, begin, entries = store.history.archived_page(index + 1, 1)
            if not entries or begin != index:
                raise NotFound(f"no archived entry {index}")
        else:
            found = store.sessions.get(session_id)
            body = found["history"] if found is not None else []
            if index >= len(body):
                raise NotFound(f"no entry {index} in session {session_id!r}")
            entries, begin = [body[index]], index
        views = history_payload(panel, entries=entries, first=begin)
        return {"entry": views[0], "where": where}

    return ok(await threaded(run))


ROUTES = [
    Route("/api/search", search, methods=["GET"]),
    Route("/api/search/locate", locate, methods=["GET"]),
    Route("/api/search/entry", entry, methods=["GET"]),
]
