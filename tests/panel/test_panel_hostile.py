"""Hostile requests to every panel route are answered with a 4xx (or a provider/store status)
and a chatkeep error body, never a 500; the guard serves only HTTP scopes; half-sent request
headers do not hold a connection open."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from typing import Any

import pytest
from panel_helpers import TOKEN

from chatkeep.panel import create_app

ROUTES = [
    ("POST", "/api/chat/send"),
    ("POST", "/api/chat/edit"),
    ("POST", "/api/chat/regenerate"),
    ("POST", "/api/chat/stop"),
    ("GET", "/api/state"),
    ("GET", "/api/history"),
    ("POST", "/api/attach"),
    ("POST", "/api/attach/video"),
    ("GET", "/api/sessions"),
    ("POST", "/api/sessions"),
    ("POST", "/api/sessions/new"),
    ("GET", "/api/settings"),
    ("PUT", "/api/settings"),
    ("PUT", "/api/providers/loop"),
    ("GET", "/api/preview"),
    ("GET", "/api/stats"),
]
KEYS = ["text", "name", "id", "url", "title", "mode", "index", "images", "pinned", "q",
        "systemPrompt", "settings", "transcript", "style", "baseUrl", "model"]  # fmt: skip
HOSTILE = ['"\\ud800"', "[" * 150 + "]" * 150, "1e999", "9" * 30, "null", "[1, {}]", '{"a": 1}',
           '"' + "x" * 300 + '"', "-1", "true"]  # fmt: skip
RAW_BODIES = [b"", b"[]", b"5", b'"x"', b"{", b"[" * 5000, b'{"k": NaN}', b"\xff\xfe", b"\x00"]


def _bodies() -> list[bytes]:
    out = list(RAW_BODIES)
    for key in KEYS:
        for value in HOSTILE:
            out.append(f'{{"{key}": {value}}}'.encode())
    out.append(json.dumps({k: "\ud800" for k in KEYS}, ensure_ascii=True).encode())
    return out


def _assert_answered(resp: Any, where: str) -> None:
    assert resp.status_code < 500 or resp.status_code in (502, 503), (where, resp.text[:300])
    if resp.status_code >= 400 and resp.headers.get("content-type", "").startswith(
        "application/json"
    ):
        body = resp.json()
        assert body["error"]["message"], (where, body)


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_route_answers_hostile_bodies_with_4xx(client: Any, method: str, path: str) -> None:
    """Each route answers every hostile body (bad JSON, deep, huge numbers, lone surrogates,
    wrong types) with a chatkeep error status, never a 500."""
    for body in _bodies():
        resp = client.request(
            method, path, content=body, headers={"content-type": "application/json"}
        )
        _assert_answered(resp, f"{method} {path} {body[:60]!r}")


@pytest.mark.parametrize(
    "ident", ["%ED%A0%80", "a%00b", "x" * 400, "..%2F..%2Fetc", "%F0%9F%98%80", "-1"]
)
def test_path_parameters_answer_4xx(client: Any, ident: str) -> None:
    """Session ids, image keys and attachment ids from the URL get a 4xx, never a 500."""
    for method, path in (
        ("POST", f"/api/sessions/{ident}/load"),
        ("PATCH", f"/api/sessions/{ident}"),
        ("DELETE", f"/api/sessions/{ident}"),
        ("GET", f"/api/image/{ident}"),
        ("DELETE", f"/api/attachments/{ident}"),
        ("GET", f"/api/sessions?q={ident}"),
        ("DELETE", f"/api/providers/{ident}"),
    ):
        resp = client.request(method, path, json={"name": "n", "pinned": True})
        _assert_answered(resp, f"{method} {path}")


def test_state_survives_a_poisoned_row(pstore: Any, client: Any) -> None:
    """A history row an older version accepted past the depth limit (holding a blob) still
    lets /api/state, /api/history and /api/stats answer."""
    deep: Any = "data:image/png;base64," + "A" * 400
    for _ in range(550):
        deep = [deep]
    text = json.dumps({"role": "user", "content": "old", "x": deep})
    backend = pstore._backend  # writing the row as an older version did: raw SQL
    with backend.transaction(pstore.profile) as tx:
        tx.history.insert(tx.history.next_pos(), 3, text, {})
        tx.history.set_state(1, 3)
    for path in ("/api/state", "/api/history", "/api/stats"):
        resp = client.get(path)
        assert resp.status_code == 200, (path, resp.text[:300])


def test_guard_rejects_websocket_and_unknown_scopes(pstore: Any) -> None:
    """A websocket is closed with 1008 before any route sees it; unknown scope types get
    nothing; lifespan still passes through."""
    app = create_app(pstore, token=TOKEN, summarize=False)
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    def call(scope: dict[str, Any]) -> None:
        # A thread of its own: the browser tests' driver may keep a loop running in this one.
        worker = threading.Thread(target=lambda: asyncio.run(app(scope, receive, send)))
        worker.start()
        worker.join(30)

    call({"type": "websocket", "path": "/api/state", "headers": [], "query_string": b""})
    assert sent == [{"type": "websocket.close", "code": 1008}]
    sent.clear()
    call({"type": "weird"})
    assert sent == []


def test_half_sent_headers_are_closed(live_server: Any) -> None:
    """A connection that sends part of a request's headers and stops is closed by the server
    instead of being kept open forever."""
    host, port = live_server.socket.getsockname()[:2]
    with socket.create_connection((host, port), timeout=60) as sock:
        sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        assert sock.recv(1024) == b""  # EOF: the server closed the connection
