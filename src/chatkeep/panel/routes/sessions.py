"""The sessions drawer (SPEC §4): list and search, save, new, load, rename, pin, delete.

| route | does |
|---|---|
| ``GET /api/sessions?q=&offset=&limit=`` | ``{"sessions": one page of store.sessions.list(q), "more", "offset", "activeSessionId"}`` (pages of ``DRAWER_PAGE`` rows by default, ``more``: rows follow); with a query each row has ``contentMatch`` (the match is in the text, not the name) |
| ``GET /api/sessions/current`` | ``{"current": {id, name} or null}``: the loaded session, for the header |
| ``POST /api/sessions`` | ``{"name"?}`` → "Save as new": the live conversation as a new session (``{"session": row or null}``), which becomes the loaded one |
| ``POST /api/sessions/{id}/update`` | "Save": write the live conversation back into the loaded session ``id`` (``sessions.update``; name, pin and place kept; 404 when unknown) |
| ``POST /api/sessions/new`` | save (write-back to the active session) and clear the live history |
| ``POST /api/sessions/{id}/load`` | ``sessions.switch(id)``: the library writes the live conversation back first (into the loaded session, else as a new one, like ``new``), then replaces the live history by the session, in one transaction (404 when unknown): switching never hides work; ``savedBack`` is the row written back, ``evicted`` how many sessions that moved out of the drawer |
| ``PATCH /api/sessions/{id}`` | ``{"name"?, "pinned"?}`` → rename and/or pin |
| ``DELETE /api/sessions/{id}`` | delete the session and its body (the page asks twice first) |

Writes answer with the fresh drawer listing (its first page) and ``current`` (``{id, name}`` of the loaded
session, or null); ``load`` and ``new`` also with the end of the live history (``history``, ``start``, ``length``, ``usage``: see :func:`~chatkeep.panel.routes.page.tail_payload`) and the archive size.
Listing reads only the light index, never a session body.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ... import DRAWER_PAGE
from ..http import BadRequest, NotFound, json_body, ok, threaded
from ..state import PanelState
from .page import current_session, int_param, tail_payload

__all__ = ["ROUTES"]

MAX_QUERY_CHARS = 500
MAX_PAGE = 500  # rows one listing request may ask for


def _panel(request: Request) -> PanelState:
    return request.app.state.panel


def _listing(
    panel: PanelState, q: str = "", offset: int = 0, limit: int = DRAWER_PAGE
) -> dict[str, Any]:
    rows = panel.store.sessions.list(q, limit=limit + 1, offset=offset)
    return {
        "sessions": rows[:limit],
        "more": len(rows) > limit,
        "offset": offset,
        "activeSessionId": panel.store.sessions.active_id(),
        "current": current_session(panel),
    }


async def list_sessions(request: Request) -> Response:
    panel = _panel(request)
    q = request.query_params.get("q", "")[:MAX_QUERY_CHARS]
    offset = int_param(request, "offset", 0) or 0
    limit = min(int_param(request, "limit", DRAWER_PAGE) or DRAWER_PAGE, MAX_PAGE)
    return ok(await threaded(_listing, panel, q, offset, limit))


def _name(body: dict[str, Any], *, required: bool) -> str | None:
    name = body.get("name")
    if name is None and not required:
        return None
    if not isinstance(name, str) or not name.strip():
        raise BadRequest("'name' must be a non-empty string", hint="type a name for the session")
    return name


async def save(request: Request) -> Response:
    panel = _panel(request)
    name = _name(await json_body(request), required=False)

    def run() -> dict[str, Any]:
        row = panel.store.sessions.save(name)
        return {"session": row, **_listing(panel)}

    return ok(await threaded(run))


async def new(request: Request) -> Response:
    panel = _panel(request)
    await json_body(request)

    def run() -> dict[str, Any]:
        row = panel.store.sessions.new()
        return {
            "session": row,
            **tail_payload(panel),
            "archived": panel.store.history.archived_count(),
            **_listing(panel),
        }

    return ok(await threaded(run))


async def load(request: Request) -> Response:
    panel = _panel(request)
    session_id = request.path_params["session_id"]

    def run() -> dict[str, Any]:
        # the library writes the live conversation back and loads, in one transaction
        report = panel.store.sessions.switch(session_id)
        if report is None:
            raise NotFound(f"no saved session {session_id!r}")
        return {
            "count": report["count"],
            "savedBack": report["savedBack"],
            "evicted": report["evicted"],
            **tail_payload(panel),
            "archived": panel.store.history.archived_count(),
            **_listing(panel),
        }

    return ok(await threaded(run))


async def current(request: Request) -> Response:
    panel = _panel(request)
    return ok({"current": await threaded(current_session, panel)})


async def update(request: Request) -> Response:
    panel = _panel(request)
    session_id = request.path_params["session_id"]
    await json_body(request)

    def run() -> dict[str, Any]:
        if panel.store.sessions.get(session_id) is None:
            raise NotFound(f"no saved session {session_id!r}", hint="use Save as new")
        row = panel.store.sessions.update(session_id)
        return {"session": row, **_listing(panel)}

    return ok(await threaded(run))


async def edit(request: Request) -> Response:
    panel = _panel(request)
    session_id = request.path_params["session_id"]
    body = await json_body(request)
    name = _name(body, required=False)
    pinned = body.get("pinned")
    if pinned is not None and not isinstance(pinned, bool):
        raise BadRequest("'pinned' must be true or false")
    if name is None and pinned is None:
        raise BadRequest("nothing to change", hint="send 'name' and/or 'pinned'")

    def run() -> dict[str, Any]:
        sessions = panel.store.sessions
        found = True
        if name is not None:
            found = sessions.rename(session_id, name)
        if found and pinned is not None:
            found = sessions.pin(session_id, pinned)
        if not found:
            raise NotFound(f"no saved session {session_id!r}")
        return _listing(panel)

    return ok(await threaded(run))


async def delete(request: Request) -> Response:
    panel = _panel(request)
    session_id = request.path_params["session_id"]

    def run() -> dict[str, Any]:
        if not panel.store.sessions.delete(session_id):
            raise NotFound(f"no saved session {session_id!r}")
        return _listing(panel)

    return ok(await threaded(run))


ROUTES = [
    Route("/api/sessions", list_sessions, methods=["GET"]),
    Route("/api/sessions/current", current, methods=["GET"]),
    Route("/api/sessions", save, methods=["POST"]),
    Route("/api/sessions/new", new, methods=["POST"]),
    Route("/api/sessions/{session_id}/load", load, methods=["POST"]),
    Route("/api/sessions/{session_id}/update", update, methods=["POST"]),
    Route("/api/sessions/{session_id}", edit, methods=["PATCH"]),
    Route("/api/sessions/{session_id}", delete, methods=["DELETE"]),
]
