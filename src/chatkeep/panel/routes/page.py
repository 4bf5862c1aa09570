"""The page, the live history, images and attachments.

| route | does |
|---|---|
| ``GET /`` | the single-page panel (a static shell: it reads nothing from the store) |
| ``GET /api/state?tail=k`` | first load: thumbnails old unseen images (SPEC §5.4), then ``{"settings": public get_all(), "history": views, "start", "length", "usage", "archived": n}`` — only ``get_all()``, the live history and the archive's size are read (§9; the page asks for the session's name afterwards); with ``tail``, the views of the last ``k`` entries only (the page asks for earlier ones as they scroll into view); a ``Server-Timing`` header gives the server time |
| ``GET /api/history?from=i&to=j`` (or ``?tail=k``) | ``{"history": views of entries[i:j] (to the end without ``to``; the last ``k`` with ``tail``), "start", "length", "usage", "archived", "session"}`` (see :mod:`chatkeep.panel.views`): after a turn the page asks only for what changed, and for earlier pages as the user scrolls up |

``usage`` is :func:`~chatkeep.panel.views.usage_totals` of the whole live history (the session's
usage line).
| ``GET /api/archive?before=n&limit=k`` | ``{"entries": views, "start", "total"}``: the archive (SPEC §3.3), read-only, ``k`` (≤ 100) entries ending before position ``n`` (default: the end) |
| ``GET /api/image/{key}`` | the stored bytes of one image, by content key, with its own MIME type |
| ``POST /api/attach`` | ``{"url", "title"?, "mode"?}`` → a web page attachment |
| ``POST /api/attach/file?name=N`` | raw file bytes, streamed to a private temporary file (:mod:`chatkeep.panel.uploads`) → an HTML/Markdown/text/PDF/image attachment |
| ``POST /api/attach/video`` | ``{"url", "transcript", "title"?}`` (WebVTT/SRT text) → a video transcript attachment |
| ``DELETE /api/attachments/{attachId}`` | undo an attachment |

Attach routes answer ``{"attachment": AttachResult.as_dict(), "history", "start", "length",
"usage"}`` (:func:`tail_payload`: the views of the last 60 entries), undo ``{"removed", …}`` the
same; with the panel's ``summarize`` option on, long attachments are condensed in the
background (§7.5).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from ... import DEFAULT_UNSEEN_BUDGET, __version__, entry_text
from ..http import BadRequest, NotFound, json_body, ok, threaded
from ..markdown import TIMESTAMP_RE
from ..state import PanelState, public_settings
from ..uploads import upload_to_disk
from ..views import history_view, usage_totals, video_url

__all__ = [
    "FIRST_TAIL",
    "ROUTES",
    "current_session",
    "history_payload",
    "int_param",
    "tail_payload",
]

FIRST_TAIL = 60  # the entries the page asks for on its first load (conversation.js TAIL)

TEMPLATES = Jinja2Templates(directory=str(Path(__file__).resolve().parent.parent / "templates"))
_KEY_RE = re.compile(r"^[0-9a-f]{64}$")
_SAFE_NAME_RE = re.compile(r"[^A-Za-z0-9._ -]+")


def _panel(request: Request) -> PanelState:
    return request.app.state.panel


def history_payload(
    panel: PanelState,
    settings: dict[str, Any] | None = None,
    *,
    start: int = 0,
    entries: list[Any] | None = None,
    first: int = 0,
    video: str | None = None,
) -> list[Any]:
    """The live history as page views (reads ``get_all()`` only when not given); ``first`` and
    ``video`` as :func:`~chatkeep.panel.views.history_view` takes them."""
    settings = settings if settings is not None else panel.store.get_all()
    collapse = settings.get("thoughtAutoCollapse", True) is not False
    entries = entries if entries is not None else panel.store.history.read()
    return history_view(
        entries,
        images=panel.images,
        collapse_thoughts=collapse,
        start=start,
        first=first,
        video=video,
    )


def draft_key(store: Any) -> str:
    """Where the page keeps the composer's draft (``localStorage``): one key per store and
    profile, a digest so that no path or database address reaches the page."""
    return hashlib.sha256(f"{store.url}\0{store.profile}".encode()).hexdigest()[:24]


def usage_at(panel: PanelState, version: int) -> list[dict[str, Any]]:
    """The usage totals of the live history at write counter ``version``: kept while the
    history does not change, so opening a long conversation does not read all of it."""
    memo = panel.usage_memo
    if memo is not None and memo[0] == version:
        return memo[1]
    history = panel.store.history
    before = history.write_count()  # a write after it moves the counter: the memo never matches
    totals = usage_totals(history.read())
    panel.usage_memo = (before, totals)
    return totals


def tail_payload(
    panel: PanelState, tail: int = FIRST_TAIL, settings: dict[str, Any] | None = None
) -> dict[str, Any]:
    """``{"history", "start", "length", "usage"}``: the views of the last ``tail`` live
    entries, where they start, the history's length and its usage totals — what the page
    needs to show a new history (it fetches earlier entries as they scroll into view). Reads
    only those entries (``history.tail_window``) unless a reply among them needs the video of
    an earlier entry for its ``[mm:ss]`` pills."""
    window = panel.store.history.tail_window(tail)
    start, entries = window.start, window.entries
    if start and _needs_video_context(entries):
        entries, start = panel.store.history.read(), 0
        views = history_payload(panel, settings, start=window.start, entries=entries)
    else:
        views = history_payload(panel, settings, entries=entries, first=window.start)
    return {
        "history": views,
        "start": window.start,
        "length": window.length,
        "usage": usage_at(panel, window.version),
    }


def _needs_video_context(entries: list[Any]) -> bool:
    """Whether a reply among ``entries`` shows ``[mm:ss]`` markers before any video of its own
    or of the entries before it: only then does the video before them matter."""
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        if video_url(entry):
            return False
        if entry.get("role") == "assistant" and TIMESTAMP_RE.search(entry_text(entry)):
            return True
    return False


def current_session(panel: PanelState) -> dict[str, Any] | None:
    """``{id, name}`` of the session the live conversation belongs to, or ``None``."""
    active = panel.store.sessions.active_id()
    if not active:
        return None
    row = panel.store.sessions.row(active)
    return None if row is None else {"id": active, "name": row.get("name") or ""}


def int_param(request: Request, key: str, default: int | None) -> int | None:
    raw = request.query_params.get(key)
    if raw is None or raw == "":
        return default
    if not raw.isdigit() or len(raw) > 9:
        raise BadRequest(f"'{key}' must be a non-negative integer, got {raw[:20]!r}")
    return int(raw)


async def index(request: Request) -> Response:
    return TEMPLATES.TemplateResponse(request, "index.html", {"version": __version__})


async def state(request: Request) -> Response:
    panel = _panel(request)

    tail = int_param(request, "tail", None)

    def load() -> tuple[dict[str, Any], float]:
        began = time.perf_counter()
        panel.store.bound_unseen_image_bytes(DEFAULT_UNSEEN_BUDGET)
        settings = panel.store.get_all()
        if tail is None:
            entries = panel.store.history.read()
            shown = {
                "history": history_payload(panel, settings, entries=entries),
                "start": 0,
                "length": len(entries),
                "usage": usage_totals(entries),
            }
        else:  # the last `tail` entries: only their rows are read (see tail_payload)
            shown = tail_payload(panel, tail, settings)
        payload = {
            "settings": public_settings(settings),
            **shown,
            "archived": panel.store.history.archived_count(),
            "version": __version__,
            "draftKey": draft_key(panel.store),
        }
        return payload, (time.perf_counter() - began) * 1000

    payload, ms = await threaded(load)
    response = ok(payload)
    response.headers["Server-Timing"] = f"state;dur={ms:.1f}"
    return response


async def history(request: Request) -> Response:
    panel = _panel(request)
    start = int_param(request, "from", 0) or 0
    end = int_param(request, "to", None)
    tail = int_param(request, "tail", None)

    def run() -> dict[str, Any]:
        if tail is not None:  # only the last `tail` entries are read (see tail_payload)
            return {
                **tail_payload(panel, tail),
                "archived": panel.store.history.archived_count(),
                "session": current_session(panel),
            }
        entries = panel.store.history.read()
        start_at = min(start, len(entries))
        # the entries before `start_at` are read for the video context of [mm:ss] pills only
        upto = entries if end is None else entries[: max(end, start_at)]
        return {
            "history": history_payload(panel, start=start_at, entries=upto),
            "start": start_at,
            "length": len(entries),
            "usage": usage_totals(entries),
            "archived": panel.store.history.archived_count(),
            "session": current_session(panel),
        }

    return ok(await threaded(run))


MAX_ARCHIVE_PAGE = 100


async def archive(request: Request) -> Response:
    panel = _panel(request)
    before = int_param(request, "before", None)
    limit = min(int_param(request, "limit", 30) or 30, MAX_ARCHIVE_PAGE)

    def run() -> dict[str, Any]:
        # one page read from the archive's newest end, not the whole archive
        history = panel.store.history
        total, begin, entries = history.archived_page(before, limit)
        video = None
        if _needs_video_context(entries):  # a reply's [mm:ss] pills link to an earlier video
            found = history.archived_last_with("videoSrc", begin)
            video = video_url(found) if found is not None else None
        views = history_payload(panel, entries=entries, first=begin, video=video)
        return {"entries": views, "start": begin, "total": total}

    return ok(await threaded(run))


async def image(request: Request) -> Response:
    panel = _panel(request)
    key = request.path_params["key"]
    if not _KEY_RE.match(key):
        raise NotFound(f"no image {key!r}")

    def find() -> tuple[str, bytes] | None:
        found = panel.images.lookup(key)
        if found is None:
            found = panel.images.lookup(key, panel.store.history.read())
        return found

    found = await threaded(find)
    if found is None:
        raise NotFound("that image is no longer in the live history")
    mime, data = found
    # The key is the hash of the bytes' data URL, so the response never changes.
    headers = {"Cache-Control": "private, max-age=31536000, immutable"}
    return Response(data, media_type=mime, headers=headers)


def _summarizer(panel: PanelState) -> Any:
    if not panel.summarize:
        return None
    from ... import summarize_in_background  # lazy: only when attaching

    def start(store: Any, attach_id: str) -> None:
        summarize_in_background(store, attach_id)

    return start


async def _attached(panel: PanelState, result: Any) -> Response:
    shown = await threaded(tail_payload, panel)
    return ok({"attachment": result.as_dict(), **shown})


def _text(body: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = body.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise BadRequest(f"'{key}' is required", hint=f"give a non-empty '{key}'")
        return None
    if not isinstance(value, str):
        raise BadRequest(f"'{key}' must be a string")
    return value


async def attach(request: Request) -> Response:
    panel = _panel(request)
    body = await json_body(request)
    url = _text(body, "url", required=True)
    assert url is not None
    from ... import attach_url  # lazy: the attach layer loads HTTP libraries

    result = await threaded(
        attach_url,
        panel.store,
        url.strip(),
        title=_text(body, "title"),
        mode=_text(body, "mode"),
        summarize=_summarizer(panel),
    )
    return await _attached(panel, result)


def _upload_name(raw: str | None) -> str:
    name = os.path.basename((raw or "").replace("\\", "/")).strip()
    name = _SAFE_NAME_RE.sub("_", name)[:120].strip(" .")
    return name or "upload"


async def attach_file(request: Request) -> Response:
    panel = _panel(request)
    name = _upload_name(request.query_params.get("name"))
    from ... import attach_file as attach_path
    from ... import attach_image

    title = request.query_params.get("title") or None
    mode = request.query_params.get("mode") or None
    summarize = _summarizer(panel)
    is_image = request.headers.get("content-type", "").startswith("image/")
    budgets = panel.bodies
    async with upload_to_disk(request, budgets.uploads, name) as (path, size):
        if not size:
            raise BadRequest("the uploaded file is empty", hint="choose a file with some content")

        def run() -> Any:
            if is_image:  # as pasted bytes: the chip names the file, not the temporary path
                data = path.read_bytes()
                return attach_image(
                    panel.store, data, name=name, title=title, mode=mode, summarize=summarize
                )
            return attach_path(
                panel.store, path, title=title or name, mode=mode, summarize=summarize
            )

        async with budgets.attach_slots:  # the waiting uploads stay on disk
            result = await threaded(run)
    return await _attached(panel, result)


async def attach_video(request: Request) -> Response:
    panel = _panel(request)
    body = await json_body(request)
    url = _text(body, "url", required=True)
    transcript = _text(body, "transcript", required=True)
    assert url is not None and transcript is not None
    from ... import attach_video as attach_transcript

    name = _upload_name(body.get("name") if isinstance(body.get("name"), str) else None)
    if not name.lower().endswith((".vtt", ".srt")):
        name += ".vtt" if transcript.lstrip().startswith("WEBVTT") else ".srt"

    def run() -> Any:
        with tempfile.TemporaryDirectory(prefix="chatkeep-upload-") as tmp:
            path = Path(tmp) / name
            path.write_text(transcript, encoding="utf-8")
            return attach_transcript(
                panel.store,
                url.strip(),
                path,
                title=_text(body, "title"),
                summarize=_summarizer(panel),
            )

    result = await threaded(run)
    return await _attached(panel, result)


async def undo_attach(request: Request) -> Response:
    panel = _panel(request)
    attach_id = request.path_params["attach_id"]
    from ... import undo_attach as undo

    if not await threaded(undo, panel.store, attach_id):
        raise NotFound(f"no attachment {attach_id!r} in the live history")
    return ok({"removed": attach_id, **await threaded(tail_payload, panel)})


ROUTES = [
    Route("/", index, methods=["GET"]),
    Route("/api/state", state, methods=["GET"]),
    Route("/api/history", history, methods=["GET"]),
    Route("/api/archive", archive, methods=["GET"]),
    Route("/api/image/{key}", image, methods=["GET"]),
    Route("/api/attach", attach, methods=["POST"]),
    Route("/api/attach/file", attach_file, methods=["POST"]),
    Route("/api/attach/video", attach_video, methods=["POST"]),
    Route("/api/attachments/{attach_id}", undo_attach, methods=["DELETE"]),
]
