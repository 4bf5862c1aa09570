"""JSON responses, request bodies and error mapping shared by the panel's routes.

Every error leaves the panel as JSON ``{"error": {"type", "message", "hint"}}`` with an HTTP
status (:data:`STATUS`, first match wins): bad input 400, missing things 404, unreadable
attachments 422, a whole-profile import into a profile holding data 409, provider failures 502 (413 for a context overflow or a body over its limit), an
unusable store or a spent in-flight budget 503 (:mod:`chatkeep.panel.uploads`; with
``Retry-After``). A client that disconnects mid-request gets no answer and leaves no traceback.
:class:`~chatkeep.NotFound` and :class:`~chatkeep.BadRequest` come from the one
error tree, so they carry a hint like every other.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from .. import (
    AttachError,
    BadRequest,
    ChatkeepError,
    ContextOverflow,
    InvalidEntry,
    InvalidValue,
    NotFound,
    ProfileNotEmpty,
    ProviderConfigError,
    ProviderError,
    StoreError,
    parse_json,
)
from .uploads import RETRY_AFTER_S, BodyTooLarge, PanelBusy, json_bytes

__all__ = [
    "STATUS",
    "BadRequest",
    "NotFound",
    "error_body",
    "error_status",
    "exception_handlers",
    "json_body",
    "ok",
    "threaded",
]

log = logging.getLogger(__name__)

STATUS: list[tuple[type[ChatkeepError], int]] = [
    (NotFound, 404),
    (BodyTooLarge, 413),
    (PanelBusy, 503),
    (BadRequest, 400),
    (InvalidEntry, 400),
    (InvalidValue, 400),
    (ProviderConfigError, 400),
    (AttachError, 422),
    (ContextOverflow, 413),
    (ProviderError, 502),
    (ProfileNotEmpty, 409),
    (StoreError, 503),
    (ChatkeepError, 500),
]


def error_status(exc: ChatkeepError) -> int:
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 500


#: The library's hints name the terminal's commands; in the panel they name its own actions
#: (SPEC §11). First match wins; a command with no panel action stays as it is.
PANEL_ACTIONS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"`chatkeep regenerate`(?: \(the panel's Retry\))?"), "Retry"),
    (re.compile(r"`chatkeep provider add[^`]*`"), "Settings → Add provider"),
    (re.compile(r"`chatkeep provider (?:use|list)[^`]*`"), "the model picker (or Settings)"),
    (re.compile(r"`chatkeep provider[^`]*`"), "Settings → Providers"),
    (re.compile(r"`chatkeep config[^`]*`"), "Settings"),
    (re.compile(r"`chatkeep sessions save[^`]*`"), "Save in the sessions drawer"),
    (re.compile(r"`chatkeep sessions[^`]*`"), "the sessions drawer"),
    (re.compile(r"`chatkeep export[^`]*`"), "Export in the sessions drawer"),
    (
        re.compile(r"import into a new --profile, or pass --replace to overwrite this one"),
        "Import here adds sessions; replacing the whole profile from a backup is done from the "
        "command line, which writes a backup of this one first",
    ),
]


def panel_words(text: str | None) -> str | None:
    """``text`` with the CLI commands it names put as the panel's actions."""
    if not text:
        return text
    for pattern, action in PANEL_ACTIONS:
        text = pattern.sub(action, text)
    return text


def error_body(exc: BaseException) -> dict[str, Any]:
    """The JSON error object for any exception (chatkeep errors keep message and hint; the
    commands they name are put as the panel's actions)."""
    if isinstance(exc, ChatkeepError):
        body: dict[str, Any] = {
            "type": type(exc).__name__,
            "message": panel_words(exc.message),
            "hint": panel_words(exc.hint),
        }
        if isinstance(exc, ProviderError) and exc.status is not None:
            body["providerStatus"] = exc.status
        return {"error": body}
    return {
        "error": {
            "type": "InternalError",
            "message": f"{type(exc).__name__}: {exc}",
            "hint": "see the terminal running `chatkeep serve` for the traceback",
        }
    }


def ok(value: Any, status: int = 200) -> JSONResponse:
    return JSONResponse(value, status_code=status)


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (``{}`` for an empty body); anything else is a 400."""
    async with json_bytes(request, request.app.state.panel.bodies.json) as raw:
        return _parsed(raw)


def _parsed(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = parse_json(raw, "the request body")
    except InvalidValue as exc:
        raise BadRequest(exc.message, hint=exc.hint) from None
    if not isinstance(value, dict):
        raise BadRequest("the request body must be a JSON object")
    return value


async def threaded(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking store call off the event loop."""
    return await run_in_threadpool(fn, *args, **kwargs)


async def _chatkeep_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ChatkeepError)
    response = JSONResponse(error_body(exc), status_code=error_status(exc))
    if isinstance(exc, PanelBusy):
        response.headers["Retry-After"] = str(RETRY_AFTER_S)
    return response


async def _client_gone(request: Request, exc: Exception) -> Response:
    # The client went away mid-body: what it sent was dropped, and nobody reads this answer.
    log.debug("client left during %s %s", request.method, request.url.path)
    return Response(status_code=400)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HTTPException)
    kind = {404: "NotFound", 405: "MethodNotAllowed"}.get(exc.status_code, "HTTPError")
    body = {"error": {"type": kind, "message": str(exc.detail), "hint": ""}}
    return JSONResponse(body, status_code=exc.status_code)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.exception("panel request %s %s failed", request.method, request.url.path)
    return JSONResponse(error_body(exc), status_code=500)


exception_handlers: dict[Any, Any] = {
    ChatkeepError: _chatkeep_error,
    ClientDisconnect: _client_gone,
    HTTPException: _http_error,
    Exception: _unexpected,
}
