"""The panel's guard: launch token, Host and Origin checks, security headers (SPEC §11).

:class:`PanelGuard` is a plain ASGI middleware in front of every route. For each HTTP request:

1. **Host** — the ``Host`` header must name one of the allowed host names (``127.0.0.1``,
   ``localhost``, ``::1`` and the address the server is bound to, unless that is a wildcard)
   and, when the server knows its port, that port. Anything else — a DNS-rebinding name such as
   ``evil.example:8765`` or a missing Host — is refused with 403 ``BadHost``.
2. **Origin** — a request that carries ``Origin`` (browsers send it on cross-origin requests and
   on every POST) must come from exactly ``http://<Host>``; ``Origin: null`` and other origins get
   403 ``CrossOrigin``. ``Sec-Fetch-Site: cross-site`` is refused the same way.
3. **Token** — every path except ``/static/…`` needs the per-launch token, in the
   ``X-Chatkeep-Token`` header, an ``Authorization: Bearer …`` header (what MCP clients send)
   or the ``token`` query parameter (``<img>`` and the first page load cannot send headers).
   Missing → 401 ``TokenRequired``; wrong → 403 ``BadToken``. Compared in constant time.

Only ``http`` scopes are served (and ``lifespan`` passed through): a websocket is closed with
1008 and any other scope type is dropped, so nothing reaches a route around these checks.

Refusals are JSON errors (``{"error": {"type", "message", "hint"}}``), except for a browser
navigating to a page (``GET`` outside ``/api/`` whose ``Accept`` names ``text/html``): that gets
the same message and hint as a small HTML page (:func:`refusal_page`). Every response gets
``Content-Security-Policy`` (scripts, styles and connections from this origin only; images from
this origin, ``data:`` and ``blob:``), ``X-Content-Type-Options: nosniff``,
``Referrer-Policy: no-referrer`` (the token in the URL never leaks to a clicked link),
``X-Frame-Options: DENY``; API responses also get ``Cache-Control: no-store``.

The same guard, with its own refusal hints (``hints``), stands in front of ``chatkeep mcp
--http``: one rule for the token and the Host and Origin checks of every local server.
"""

from __future__ import annotations

import html
import json
import secrets
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = [
    "LOOPBACK_HOSTS",
    "TOKEN_HEADER",
    "TOKEN_PARAM",
    "PanelGuard",
    "carries_token",
    "new_token",
    "split_host",
]

TOKEN_HEADER = "x-chatkeep-token"
TOKEN_PARAM = "token"
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})
_WILDCARDS = frozenset({"", "0.0.0.0", "::"})
PUBLIC_PREFIXES = ("/static/", "/favicon.ico")

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
_SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def new_token() -> str:
    """A fresh random launch token (URL-safe, 192 bits)."""
    return secrets.token_urlsafe(24)


def split_host(value: str) -> tuple[str, int | None]:
    """``("host", port)`` of a Host header value (``[::1]:8765`` → ``("::1", 8765)``)."""
    value = (value or "").strip().lower()
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return "", None
        host, rest = value[1:end], value[end + 1 :]
        port_text = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        host, port_text = value.split(":", 1)
    else:
        host, port_text = value, ""
    if port_text:
        if not port_text.isdigit():
            return "", None
        return host, int(port_text)
    return host, None


def _error(status: int, kind: str, message: str, hint: str) -> tuple[int, bytes]:
    body = {"error": {"type": kind, "message": message, "hint": hint}}
    return status, json.dumps(body).encode()


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chatkeep — {title}</title>
<link rel="stylesheet" href="/static/panel.css"></head>
<body class="refusal"><main class="refusal-box">
<h1>{title}</h1><p>{message}</p><p class="hint">{hint}</p>
<p>Look in the terminal where <code>chatkeep serve</code> runs: it prints the address to open,
<code>http://127.0.0.1:PORT/?token=…</code>.</p>
</main></body></html>
"""


def refusal_page(body: bytes) -> bytes:
    """The HTML page for one JSON refusal body (message and hint escaped)."""
    err = json.loads(body)["error"]
    titles = {
        "TokenRequired": "This panel needs its launch address",
        "BadToken": "This address is from another launch",
    }
    return _PAGE.format(
        title=html.escape(titles.get(err["type"], "Request refused")),
        message=html.escape(err["message"]),
        hint=html.escape(err["hint"]),
    ).encode()


def _wants_page(scope: dict[str, Any]) -> bool:
    if scope.get("method") != "GET" or scope.get("path", "").startswith("/api/"):
        return False
    for key, value in scope.get("headers", []):
        if key.lower() == b"accept":
            return b"text/html" in value
    return False


def _given_token(headers: dict[str, str], query_string: bytes) -> str | None:
    given = headers.get(TOKEN_HEADER)
    if given is None:
        scheme, _, credentials = headers.get("authorization", "").strip().partition(" ")
        if scheme.lower() == "bearer" and credentials.strip():
            given = credentials.strip()
    if given is None:
        values = parse_qs(query_string.decode("latin-1")).get(TOKEN_PARAM)
        given = values[0] if values else None
    return given


def carries_token(scope: dict[str, Any], token: str) -> bool:
    """Whether an HTTP request scope carries the launch ``token`` (header or query)."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    given = _given_token(headers, scope.get("query_string", b""))
    return bool(given) and secrets.compare_digest(str(given).encode(), token.encode())


class PanelGuard:
    """ASGI middleware enforcing the checks of the module docstring. ``hints`` replaces the
    hint of a refusal by its type (``BadHost``, ``CrossOrigin``, ``TokenRequired``,
    ``BadToken``), for a server other than the panel."""

    def __init__(
        self,
        app: Any,
        *,
        token: str,
        port: int | None = None,
        hosts: Iterable[str] = (),
        hints: Mapping[str, str] | None = None,
    ) -> None:
        if not token:
            raise ValueError("the panel needs a non-empty launch token")
        self.app = app
        self.token = token
        self.port = port
        self.hints = dict(hints or {})
        self.hosts = set(LOOPBACK_HOSTS) | {
            h.strip("[]").lower() for h in hosts if h.strip("[]") not in _WILDCARDS
        }

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope.get("type")
        if kind == "lifespan":
            await self.app(scope, receive, send)
            return
        if kind != "http":
            # the panel speaks plain HTTP only: websockets and unknown scopes never reach it
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            return
        refusal = self._check(scope)
        if refusal is not None and self.hints:
            refusal = self._rehint(refusal)
        is_api = scope.get("path", "").startswith("/api/")

        async def send_with_headers(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = {k.lower() for k, _ in headers}
                headers += [(k, v) for k, v in _SECURITY_HEADERS if k not in present]
                if is_api and b"cache-control" not in present:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        if refusal is None:
            await self.app(scope, receive, send_with_headers)
            return
        status, body = refusal
        content_type = b"application/json"
        if _wants_page(scope):
            body, content_type = refusal_page(body), b"text/html; charset=utf-8"
        await send_with_headers(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", content_type),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})

    def _rehint(self, refusal: tuple[int, bytes]) -> tuple[int, bytes]:
        status, body = refusal
        err = json.loads(body)["error"]
        hint = self.hints.get(err["type"])
        return refusal if hint is None else _error(status, err["type"], err["message"], hint)

    # -- the checks -------------------------------------------------------------------------
    def _check(self, scope: dict[str, Any]) -> tuple[int, bytes] | None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        host_header = headers.get("host", "")
        host, port = split_host(host_header)
        if host not in self.hosts or (self.port is not None and port != self.port):
            return _error(
                403,
                "BadHost",
                f"requests for host {host_header!r} are not served here",
                "open the panel with the URL printed by `chatkeep serve`",
            )
        origin = headers.get("origin")
        if origin is not None and not self._same_origin(origin, host_header):
            return _error(
                403,
                "CrossOrigin",
                f"cross-origin request from {origin!r} refused",
                "the panel only answers pages it served itself",
            )
        if headers.get("sec-fetch-site", "").lower() == "cross-site":
            return _error(
                403,
                "CrossOrigin",
                "cross-site request refused",
                "the panel only answers pages it served itself",
            )
        path = scope.get("path", "")
        if path.startswith(PUBLIC_PREFIXES):
            return None
        given = _given_token(headers, scope.get("query_string", b""))
        if not given:
            return _error(
                401,
                "TokenRequired",
                "this panel needs its launch token",
                "open the full URL printed by `chatkeep serve` (it ends in ?token=…)",
            )
        if not secrets.compare_digest(given.encode(), self.token.encode()):
            return _error(
                403,
                "BadToken",
                "the token does not match this launch of the panel",
                "the token changes at every `chatkeep serve`; use the URL it printed last",
            )
        return None

    @staticmethod
    def _same_origin(origin: str, host_header: str) -> bool:
        try:
            parts = urlsplit(origin.strip())
        except ValueError:
            return False
        if parts.scheme != "http" or not parts.netloc or parts.path not in ("", "/"):
            return False
        o_host, o_port = split_host(parts.netloc)
        h_host, h_port = split_host(host_header)
        return o_host == h_host and (o_port or 80) == (h_port or 80)
