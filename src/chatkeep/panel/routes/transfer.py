"""Export and import from the drawer (SPEC §11), through the library's own functions.

| route | does |
|---|---|
| ``GET /api/export?format=F&session=ID`` | ``chatkeep.export_lines(store, F, ID)`` streamed as a download (``Content-Disposition: attachment``): the whole profile (``json``, exact), or every session — one with ``session`` — as ``md``, ``jsonl``, ``sharegpt`` or ``html`` |
| ``POST /api/import?name=N&source=S`` | the raw file, streamed to a private temporary file (:mod:`chatkeep.panel.uploads`) → ``chatkeep.import_file(store, path, source=S)``: every conversation becomes a saved session; ``{"report": …, "sessions": the drawer's first page, "current"}`` |

An unknown format or session is refused before the first byte is sent. The import never
replaces the profile: a whole-profile export is refused with the library's error (replacing a
profile is the command line's ``import --replace``, which writes a backup first).
"""

from __future__ import annotations

import re
from typing import Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from ... import DRAWER_PAGE, export_lines, import_file
from ..http import ok, threaded
from ..state import PanelState
from ..uploads import upload_to_disk
from .page import current_session

__all__ = ["EXTENSIONS", "ROUTES"]

#: The file name's extension and media type of each export format.
EXTENSIONS = {
    "json": ("json", "application/json"),
    "md": ("md", "text/markdown; charset=utf-8"),
    "jsonl": ("jsonl", "application/x-ndjson"),
    "sharegpt": ("sharegpt.json", "application/json"),
    "html": ("html", "text/html; charset=utf-8"),
}
_NAME_RE = re.compile(r"[^A-Za-z0-9._-]+")


def _panel(request: Request) -> PanelState:
    return request.app.state.panel


async def export(request: Request) -> Response:
    panel = _panel(request)
    fmt = request.query_params.get("format") or "json"
    session = request.query_params.get("session") or None

    def first() -> tuple[Any, list[str]]:
        lines = export_lines(panel.store, fmt, session)
        return lines, [next(lines, "")]  # unknown format or session: raised here, not mid-body

    lines, head = await threaded(first)
    ext, media = EXTENSIONS.get(fmt, ("txt", "text/plain; charset=utf-8"))
    name = _NAME_RE.sub("_", f"chatkeep-{panel.store.profile}{'-' + session if session else ''}")

    def body() -> Any:
        for line in head:
            yield line + "\n"
        for line in lines:
            yield line + "\n"

    headers = {"Content-Disposition": f'attachment; filename="{name}.{ext}"'}
    return StreamingResponse(body(), media_type=media, headers=headers)


async def import_(request: Request) -> Response:
    panel = _panel(request)
    raw_name = request.query_params.get("name") or "import.json"
    name = _NAME_RE.sub("_", raw_name.replace("\\", "/").rsplit("/", 1)[-1])[:120] or "import"
    source = request.query_params.get("source") or "auto"
    async with upload_to_disk(request, panel.bodies.uploads, name) as (path, _size):
        report = await threaded(import_file, panel.store, str(path), source=source)

    def listing() -> dict[str, Any]:
        return {
            "sessions": panel.store.sessions.list(limit=DRAWER_PAGE),
            "current": current_session(panel),
        }

    return ok({"report": report, **await threaded(listing)})


ROUTES = [
    Route("/api/export", export, methods=["GET"]),
    Route("/api/import", import_, methods=["POST"]),
]
