"""The local web panel (SPEC §11): the "side panel" of chatkeep, served on localhost.

Public API::

    create_app(store, *, token, port=None, hosts=(), summarize=True) -> starlette.Starlette
    PanelServer(store, *, host="127.0.0.1", port=8765, token=None, summarize=True)
        .url / .start() / .serve() / .stop()
    render_markdown(text, *, video_url=None, collapse_thoughts=True) -> str   # sanitized HTML
    video_time_url(url, seconds) -> str

A single page (``templates/index.html`` + plain ES modules in ``static/``, loaded from
``main.js``, and ``static/panel.css``; no build step) over a JSON API. Security (see :mod:`.security`): loopback by default, a random token
per launch required on every call, Host and Origin checked, stored text reaching the page only
through ``textContent`` or as server-sanitized Markdown (code highlighted by Pygments). The
first page load reads only ``get_all()`` and the live history (SPEC §9); after a turn the page
fetches only the entries that changed.

Importing this package loads Starlette and Jinja2 (uvicorn when it serves), which the base
install brings; the rest of chatkeep never imports it (``chatkeep serve`` starts the server).
"""

from __future__ import annotations

from .app import create_app
from .markdown import render_markdown, video_time_url
from .server import PanelServer

__all__ = ["PanelServer", "create_app", "render_markdown", "video_time_url"]
