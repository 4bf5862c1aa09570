"""JSON responses, request bodies and error mapping shared by the panel's routes.

Every error leaves the panel as JSON ``{"error": {"type", "message", "hint"}}`` with an HTTP
status (:data:`STATUS`, first match wins): bad input 400, missing things 404, unreadable
attachments 422, provider failures 502 (413 for a context overflow), an unusable store 503.
:class:`~chatkeep.NotFound` and :class:`~chatkeep.BadRequest` come from the one
error tree, so they carry a hint like every other.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from .. import (
    AttachError,
    BadRequest,
    ChatkeepError,
    ContextOverflow,
    InvalidEntry,
    InvalidValue,
    NotFound,
    ProviderConfigError,
    ProviderError,
    StoreError,
)

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

MAX_JSON_BYTES = 40 * 1024 * 1024


STATUS: list[tuple[type[ChatkeepError], int]] = [
    (NotFound, 404),
    (BadRequest, 400),
    (InvalidEntry, 400),
    (InvalidValue, 400),
    (ProviderConfigError, 400),
    (AttachError, 422),
    (ContextOverflow, 413),
    (ProviderError, 502),
    (StoreError, 503),
    (ChatkeepError, 500),
]


def error_status(exc: ChatkeepError) -> int:
    for cls, status in STATUS:
        if isinstance(exc, cls):
            return status
    return 500


def error_body(exc: BaseException) -> dict[str, Any]:
    """The JSON error object for any exception (chatkeep errors keep message and hint)."""
    if isinstance(exc, ChatkeepError):
        body: dict[str, Any] = {
            "type": type(exc).__name__,
            "message": exc.message,
            "hint": exc.hint,
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
    raw = await request.body()
    if len(raw) > MAX_JSON_BYTES:
        raise BadRequest(
            f"request body of {len(raw):,} bytes is over the {MAX_JSON_BYTES:,}-byte limit",
            hint="attach big files with the file picker, not pasted",
        )
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError as exc:
        raise BadRequest(f"the request body is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise BadRequest("the request body must be a JSON object")
    return value


async def threaded(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a blocking store call off the event loop."""
    return await run_in_threadpool(fn, *args, **kwargs)


async def _chatkeep_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ChatkeepError)
    return JSONResponse(error_body(exc), status_code=error_status(exc))


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
    HTTPException: _http_error,
    Exception: _unexpected,
}
