"""A loopback HTTP server that speaks the real provider wire protocols, for tests.

It listens on ``127.0.0.1`` (random port) in a background thread (``ThreadingHTTPServer``, one
thread per connection, HTTP/1.1 keep-alive, SSE over chunked transfer encoding, flushed per
event) and answers:

* ``POST …/chat/completions`` — OpenAI Chat Completions, streamed (``chat.completion.chunk``
  events, ``data: [DONE]``; a final ``choices: []`` chunk with ``usage`` when the request asks
  ``stream_options.include_usage``) or not (one ``chat.completion`` object);
* ``POST …/responses`` — OpenAI Responses (``response.created``, ``response.in_progress``,
  ``response.output_item.added``, ``response.content_part.added``,
  ``response.output_text.delta``…, ``response.output_text.done``, ``response.content_part.done``,
  ``response.output_item.done``, ``response.completed`` with ``usage`` and the response ``id``);
* ``POST …/messages`` — Anthropic Messages (``message_start``, ``content_block_start``,
  ``ping``, ``content_block_delta``…, ``content_block_stop``, ``message_delta``,
  ``message_stop``, with usage).

Any other path (or, with ``server.require_prefix = "/v1/"``, any path outside that prefix) gets
OpenAI's 404 "Invalid URL" body. Every request is recorded
(:class:`RecordedRequest`: method, path, lower-cased headers, parsed JSON body, raw bytes) in
``server.requests``.

Scripting — each request consumes the next queued reply, or the default one when the queue is
empty::

    server.queue(Text("Hi there", delay=0.05), overflow("anthropic"), Drop(after_chunks=2))
    server.script(rate_limited())          # the default for every later request

Replies: :class:`Text` (reply text, chunking, per-chunk delay, reported token usage — set
``prompt_tokens`` low to emulate Ollama's silent truncation), :class:`HttpError` (any status and
body), :class:`Drop` (close the connection before answering, or after *n* streamed text chunks),
:class:`StreamFailure` (HTTP 200, then the style's own in-stream error event after *n* chunks),
:class:`Close` (HTTP 200, *n* text chunks, then a clean end of the body without the style's end
marker), :class:`Page` (an HTML web page, any status, where an API answer was expected).
Helpers build the providers' real error bodies: :func:`overflow` (``openai_chat``,
``openai_responses``, ``azure``, ``anthropic``, ``anthropic_413``, ``gemini``, ``vllm``,
``llamacpp``), :func:`rate_limited`, :func:`server_error`, :func:`unauthorized`,
:func:`not_found` (the last four answer in the Anthropic shape on ``/messages`` and in the OpenAI
shape elsewhere). :data:`ERROR_BODIES` holds the raw ``(status, body)`` pairs.

Use from pytest: the ``provider_server`` fixture (import it into a ``conftest.py``) yields a
fresh started server and closes it afterwards; outside pytest use ``with ProviderServer() as s:``.
``server.base_url`` is the root (``http://127.0.0.1:PORT``); ``server.url("/v1")`` the API root.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from .provider_errors import (
    ERROR_BODIES,
    OVERFLOW_FLAVORS,
    STYLED,
    not_found,
    overflow,
    rate_limited,
    server_error,
    unauthorized,
)
from .provider_wire import (
    FULL,
    STREAM,
    Close,
    Drop,
    HttpError,
    Page,
    Reply,
    StreamFailure,
    StyledError,
    Text,
    estimate_prompt_tokens,
    failure_event,
)

__all__ = [
    "ERROR_BODIES",
    "OVERFLOW_FLAVORS",
    "Close",
    "Drop",
    "HttpError",
    "Page",
    "ProviderServer",
    "RecordedRequest",
    "StreamFailure",
    "StyledError",
    "Text",
    "estimate_prompt_tokens",
    "not_found",
    "overflow",
    "provider_server",
    "rate_limited",
    "server_error",
    "unauthorized",
]

# --------------------------------------------------------------------------- recording


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes


# --------------------------------------------------------------------------- the server


class ProviderServer:
    """The loopback server; see the module docstring."""

    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self._queue: deque[Reply] = deque()
        self._default: Reply = Text()
        self._lock = threading.Lock()
        #: When set (e.g. ``"/v1/"``), paths not starting with it get the 404 "Invalid URL".
        self.require_prefix: str | None = None
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self.port: int = self._httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    # scripting
    def queue(self, *replies: Reply) -> ProviderServer:
        """Answer the next requests with ``replies``, in order."""
        with self._lock:
            self._queue.extend(replies)
        return self

    def script(self, reply: Reply) -> ProviderServer:
        """Answer every request with ``reply`` once the queue is empty."""
        with self._lock:
            self._default = reply
        return self

    def reset(self) -> None:
        """Forget recorded requests and scripted replies."""
        with self._lock:
            self._queue.clear()
            self._default = Text()
            self.requests.clear()

    def url(self, path: str = "/v1") -> str:
        return self.base_url + path

    def paths(self) -> list[str]:
        return [r.path for r in self.requests]

    def _next(self, request: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(request)
            return self._queue.popleft() if self._queue else self._default

    # lifetime
    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ProviderServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: ProviderServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up mid-stream (cancel tests) are expected


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._read_and_answer()

    def do_POST(self) -> None:
        self._read_and_answer()

    # ---- request side
    def _read_and_answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = RecordedRequest(
            method=self.command,
            path=self.path,
            headers={k.lower(): v for k, v in self.headers.items()},
            body=body,
            raw=raw,
        )
        reply = self.server.owner._next(request)
        path = self.path.split("?", 1)[0]
        prefix = self.server.owner.require_prefix
        style = _style_of(path) if prefix is None or path.startswith(prefix) else None
        try:
            if style is None:
                self._json(404, _unknown_url(self.command, self.path))
            else:
                self._answer(style, request, reply)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _answer(self, style: str, request: RecordedRequest, reply: Reply) -> None:
        if isinstance(reply, StyledError):
            status, body = ERROR_BODIES[
                ("anthropic_" if style == "messages" else "openai_") + STYLED[reply.kind]
            ]
            reply = HttpError(status, body)
        if isinstance(reply, HttpError):
            self._json(reply.status, reply.body, reply.headers)
            return
        if isinstance(reply, Page):
            self._json(reply.status, reply.html, {}, "text/html; charset=utf-8")
            return
        if isinstance(reply, Drop) and reply.after_chunks is None:
            self._drop()
            return
        body = request.body if isinstance(request.body, Mapping) else {}
        streamed = bool(body.get("stream"))
        if isinstance(reply, Text) and reply.force_stream is not None:
            streamed = reply.force_stream
        if not streamed:
            if isinstance(reply, Drop | StreamFailure | Close):
                self._drop()
                return
            self._json(200, FULL[style](body, reply))
            return
        self._start_stream(style)
        events = list(STREAM[style](body, reply if isinstance(reply, Text) else reply.text))
        limit = None if isinstance(reply, Text) else reply.after_chunks
        delay = reply.delay if isinstance(reply, Text) else reply.text.delay
        left = sum(1 for is_text, _ in events if is_text)
        sent = 0
        for is_text, event in events:
            if isinstance(reply, Close) and sent and (sent >= (limit or 0) or not left):
                break  # a clean end after the text chunks: none of the closing events
            if is_text:
                if limit is not None and sent >= limit:
                    break
                if delay:
                    time.sleep(delay)
                sent += 1
                left -= 1
            self._chunk(event)
        if isinstance(reply, Drop):
            self._drop()
            return
        if isinstance(reply, StreamFailure):
            self._chunk(failure_event(style, reply.body))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # ---- response side
    def _json(
        self,
        status: int,
        body: Any,
        headers: Mapping[str, str] | None = None,
        content_type: str = "application/json",
    ) -> None:
        if isinstance(body, bytes):
            data = body
        elif isinstance(body, str):
            data = body.encode()
        else:
            data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:24])
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _start_stream(self, style: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("x-request-id", "req_" + uuid.uuid4().hex[:24])
        self.end_headers()
        self.wfile.flush()

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _drop(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def _style_of(path: str) -> str | None:
    for suffix, style in (
        ("/chat/completions", "chat"),
        ("/responses", "responses"),
        ("/messages", "messages"),
    ):
        if path.rstrip("/").endswith(suffix):
            return style
    return None


def _unknown_url(method: str, path: str) -> dict[str, Any]:
    return {
        "error": {
            "message": f"Invalid URL ({method} {path})",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }


# --------------------------------------------------------------------------- pytest


@pytest.fixture
def provider_server() -> Iterator[ProviderServer]:
    """A started :class:`ProviderServer`, closed after the test."""
    server = ProviderServer()
    try:
        yield server
    finally:
        server.close()
