"""Chat routes: send, edit & resend, regenerate (streamed as Server-Sent Events), stop.

| route | body | engine call |
|---|---|---|
| ``POST /api/chat/send`` | ``{"text", "images"?: [data URL…]}`` | ``chat.prepare_send`` → ``run`` |
| ``POST /api/chat/edit`` | ``{"index", "text"}`` | ``chat.prepare_edit`` → ``run`` |
| ``POST /api/chat/regenerate`` | ``{}`` (also Retry) | ``chat.prepare_regenerate`` → ``run`` |
| ``POST /api/chat/stop`` | ``{"turn"?}`` | sets that turn's cancel event (all turns without one) |
| ``GET /api/versions`` | — | ``store.history.earlier_versions()``: ``{"turns": {"<i>": [[views…], …]}}``, the earlier versions of each live turn that has some, oldest first (read-only) |

The engine runs in a worker thread; its ``on_delta``/``on_notice`` callbacks feed the response
(``text/event-stream``), whose events are:

* ``start`` ``{"turn"}`` — the id the stop button sends;
* ``delta`` ``{"html", "chars"}`` — the reply so far as sanitized Markdown
  (:func:`~chatkeep.panel.markdown.render_markdown`), at most every :data:`RENDER_EVERY` s;
* ``notice`` ``{"message"}`` — retries, the overflow rescue, the image cap;
* ``thinking`` ``{"chars"}`` — how much reasoning the model has streamed so far (its text is
  kept on the reply and shown folded once the turn has landed);
* ``done`` ``{"interrupted", "warnings", "stats", "landed", "sessionId", "provider", "model",
  "rescued", "droppedImages"}`` — after which the page reloads ``/api/history``;
* ``error`` ``{"status", "error": {"type", "message", "hint"}}`` — a failed turn.

The engine's first phase checks the turn (empty message, bad image, no usable provider card,
an index that is not one of the user's messages) before the stream starts; what it refuses
comes back as a JSON error with an HTTP status, and nothing is written. The routes re-check
nothing themselves. A client that goes away mid-stream stops its turn (the
partial reply is kept with ``interrupted: true``, like the stop button).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ..http import BadRequest, error_body, error_status, json_body, ok, panel_words, threaded
from ..markdown import render_markdown
from ..state import PanelState
from .page import history_payload

__all__ = ["RENDER_EVERY", "ROUTES"]

RENDER_EVERY = 0.1
KEEPALIVE_EVERY = 15.0
_END = object()

Run = Callable[..., Any]


def _panel(request: Request) -> PanelState:
    return request.app.state.panel


def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"


def _context(panel: PanelState) -> tuple[str | None, bool]:
    """The video URL of the conversation and the thought-collapse option, for live rendering."""
    settings = panel.store.get_all()
    video = None
    for entry in panel.store.history.read():
        src = entry.get("videoSrc")
        if isinstance(src, dict) and isinstance(src.get("url"), str):
            video = src["url"]
    return video, settings.get("thoughtAutoCollapse", True) is not False


def _done_payload(reply: Any) -> dict[str, Any]:
    return {
        "interrupted": reply.interrupted,
        "warnings": [panel_words(w) for w in reply.warnings],
        "stats": reply.stats,
        "landed": reply.landed,
        "sessionId": reply.session_id,
        "provider": reply.provider,
        "model": reply.model,
        "rescued": reply.rescued,
        "droppedImages": reply.dropped_images,
        "chars": len(reply.text),
    }


async def _stream_turn(panel: PanelState, run: Run) -> Response:
    """Run ``run(on_delta=, on_notice=, cancel=)`` in a thread and stream its events."""
    video, collapse = await threaded(_context, panel)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    turn_id, cancel = panel.turns.start()

    def put(kind: str, data: Any) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

    def worker() -> None:
        try:
            reply = run(
                on_delta=lambda text: put("delta", text),
                on_notice=lambda message: put("notice", message),
                on_reasoning=lambda text: put("reasoning", len(text)),
                cancel=cancel,
            )
            put("done", reply)
        except BaseException as exc:  # every failure reaches the page
            put("error", exc)
        finally:
            panel.turns.finish(turn_id)

    thread = threading.Thread(target=worker, name=f"chatkeep-turn-{turn_id}", daemon=True)
    thread.start()

    async def events() -> AsyncIterator[str]:
        text = ""
        rendered_at = 0.0
        dirty = False
        thought, thought_at = 0, 0.0

        def render() -> str:
            nonlocal dirty, rendered_at
            dirty, rendered_at = False, time.monotonic()
            html = render_markdown(text, video_url=video, collapse_thoughts=collapse)
            return _sse("delta", {"html": html, "chars": len(text)})

        yield _sse("start", {"turn": turn_id})
        try:
            while True:
                wait = RENDER_EVERY if dirty else KEEPALIVE_EVERY
                try:
                    kind, data = await asyncio.wait_for(queue.get(), timeout=wait)
                except TimeoutError:
                    yield render() if dirty else ": keep-alive\n\n"
                    continue
                if kind == "reasoning":  # only its size: the page shows "thinking…"
                    thought += data
                    if time.monotonic() - thought_at >= RENDER_EVERY:
                        thought_at = time.monotonic()
                        yield _sse("thinking", {"chars": thought})
                    continue
                if kind == "delta":
                    text += data
                    dirty = True
                    if time.monotonic() - rendered_at >= RENDER_EVERY:
                        yield render()
                    continue
                if dirty:
                    yield render()
                if kind == "notice":
                    yield _sse("notice", {"message": panel_words(str(data))})
                elif kind == "done":
                    yield _sse("done", _done_payload(data))
                    break
                else:
                    status = error_status(data) if hasattr(data, "hint") else 500
                    yield _sse("error", {"status": status, **error_body(data)})
                    break
        finally:
            if thread.is_alive():
                cancel.set()  # the page went away (or stopped reading): stop the turn

    headers = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    return StreamingResponse(events(), media_type="text/event-stream", headers=headers)


def _images(body: dict[str, Any]) -> list[str]:
    images = body.get("images", [])
    if images is None:
        return []
    if not isinstance(images, list) or not all(isinstance(u, str) for u in images):
        raise BadRequest("'images' must be a list of data:image/… URLs")
    return images


def _text(body: dict[str, Any]) -> str:
    text = body.get("text", "")
    if not isinstance(text, str):
        raise BadRequest("'text' must be a string")
    return text


async def _prepared(panel: PanelState, prepare: Callable[[], Any]) -> Response:
    """Phase one in a worker thread (it raises before anything is written), then the stream."""
    turn = await threaded(prepare)
    chat = panel.store.chat
    return await _stream_turn(panel, lambda **kw: chat.run(turn, **kw))


async def send(request: Request) -> Response:
    panel = _panel(request)
    body = await json_body(request)
    text, images = _text(body), _images(body)
    return await _prepared(panel, lambda: panel.store.chat.prepare_send(text, images))


async def edit(request: Request) -> Response:
    panel = _panel(request)
    body = await json_body(request)
    text = _text(body)
    index = body.get("index")
    if isinstance(index, bool) or not isinstance(index, int):
        raise BadRequest("'index' must be the integer index of one of your messages")
    return await _prepared(panel, lambda: panel.store.chat.prepare_edit(index, text))


async def regenerate(request: Request) -> Response:
    panel = _panel(request)
    await json_body(request)
    return await _prepared(panel, lambda: panel.store.chat.prepare_regenerate())


async def stop(request: Request) -> Response:
    panel = _panel(request)
    body = await json_body(request)
    turn = body.get("turn")
    if turn is not None and not isinstance(turn, str):
        raise BadRequest("'turn' must be the id from the stream's start event")
    return ok({"stopped": panel.turns.stop(turn or None)})


async def versions(request: Request) -> Response:
    panel = _panel(request)

    def run() -> dict[str, Any]:
        found = panel.store.history.earlier_versions()
        return {
            "turns": {
                str(i): [history_payload(panel, entries=v, first=i) for v in versions]
                for i, versions in found.items()
            }
        }

    return ok(await threaded(run))


ROUTES = [
    Route("/api/versions", versions, methods=["GET"]),
    Route("/api/chat/send", send, methods=["POST"]),
    Route("/api/chat/edit", edit, methods=["POST"]),
    Route("/api/chat/regenerate", regenerate, methods=["POST"]),
    Route("/api/chat/stop", stop, methods=["POST"]),
]
