"""The page's static files (``/static/…``), served from memory.

``StaticAssets(directory)`` is an ASGI app for a ``Mount``: every file under ``directory`` is
read once, when the app is built (the page's JS, CSS, the vendored KaTeX: about 1 MB), with
its content type and an ``ETag`` (a digest of its bytes). A request is answered from memory —
no file system call, no worker thread — and a request whose ``If-None-Match`` names the ETag
gets ``304 Not Modified`` with no body. ``Cache-Control: no-cache`` makes the browser ask
again each time (a 304 costs a few hundred bytes), so an upgraded panel is never run against
stale modules. Only ``GET`` and ``HEAD`` are served; unknown paths are 404, other methods 405.
"""

from __future__ import annotations

import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

from starlette.types import Receive, Scope, Send

__all__ = ["Asset", "StaticAssets"]

# types the page needs whatever the platform's MIME table says (a module script must be JS)
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".woff2": "font/woff2",
    ".woff": "font/woff",
    ".ttf": "font/ttf",
}


@dataclass(frozen=True)
class Asset:
    """One file's bytes with the headers it is served with."""

    body: bytes
    content_type: str
    etag: str


def _load(directory: Path) -> dict[str, Asset]:
    assets = {}
    for path in sorted(directory.rglob("*")):
        if not path.is_file():
            continue
        body = path.read_bytes()
        kind = _TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0]
        etag = '"' + hashlib.sha256(body).hexdigest()[:20] + '"'
        rel = "/" + path.relative_to(directory).as_posix()
        assets[rel] = Asset(body, kind or "application/octet-stream", etag)
    return assets


def _matches(header: bytes, etag: str) -> bool:
    tags = {t.strip().removeprefix("W/") for t in header.decode("latin-1").split(",")}
    return etag in tags or "*" in tags


class StaticAssets:
    """Serves the files of ``directory`` from memory (see the module docstring)."""

    def __init__(self, directory: Path) -> None:
        self.assets = _load(directory)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        method = scope.get("method", "GET")
        path, root = scope.get("path", ""), scope.get("root_path", "")
        asset = self.assets.get(path[len(root) :] if root and path.startswith(root) else path)
        if method not in ("GET", "HEAD"):
            status, body, headers = 405, b"method not allowed", [(b"allow", b"GET, HEAD")]
        elif asset is None:
            status, body, headers = 404, b"not found", []
        else:
            headers = [
                (b"etag", asset.etag.encode()),
                (b"cache-control", b"no-cache"),
            ]
            request = dict(scope.get("headers") or [])
            if _matches(request.get(b"if-none-match", b""), asset.etag):
                status, body = 304, b""
            else:
                status, body = 200, asset.body
                headers.append((b"content-type", asset.content_type.encode()))
        if status >= 400:
            headers.append((b"content-type", b"text/plain; charset=utf-8"))
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": b"" if method == "HEAD" else body})
