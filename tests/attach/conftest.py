"""Fixtures for the extraction tests: a real loopback HTTP server and fixture files."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# attach_pdfgen.py sits next to the tests; make it importable whatever the import mode.
sys.path.insert(0, str(Path(__file__).resolve().parent))


@dataclass
class Route:
    """One canned answer: status, headers and body (or a callable that writes the body)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    writer: Callable[[BaseHTTPRequestHandler], None] | None = None
    delay: float = 0.0  # seconds to wait before sending the status line


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 with a table of routes; unknown paths are 404."""

    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.stop = threading.Event()
        server_self = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass  # keep test output clean

            def do_GET(self) -> None:
                route = server_self.routes.get(self.path.split("?", 1)[0])
                if route is None:
                    body = b"<html><body><h1>Not Found</h1></body></html>"
                    route = Route(404, {"Content-Type": "text/html"}, body)
                if route.delay and server_self.stop.wait(route.delay):
                    return
                try:
                    self.send_response(route.status)
                    for k, v in route.headers.items():
                        self.send_header(k, v)
                    if route.writer is None:
                        self.send_header("Content-Length", str(len(route.body)))
                        self.end_headers()
                        self.wfile.write(route.body)
                    else:
                        self.end_headers()
                        route.writer(self)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on purpose (size limit, timeout)

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address) -> None:
                pass

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def add(self, path: str, route: Route) -> str:
        self.routes[path] = route
        return self.url(path)

    def add_file(self, path: str, filename: str, content_type: str) -> str:
        return self.add(
            path, Route(200, {"Content-Type": content_type}, (FIXTURES / filename).read_bytes())
        )


def _stream_forever_writer(chunk: bytes, total: int) -> Callable[[BaseHTTPRequestHandler], None]:
    """Writes ``total`` bytes without a Content-Length (connection closes at the end)."""

    def write(handler: BaseHTTPRequestHandler) -> None:
        sent = 0
        handler.close_connection = True
        while sent < total:
            handler.wfile.write(chunk)
            sent += len(chunk)

    return write


def _trickle_writer(handler: BaseHTTPRequestHandler) -> None:
    handler.close_connection = True
    for _ in range(40):
        handler.wfile.write(b"<p>still loading</p>\n")
        handler.wfile.flush()
        time.sleep(0.1)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """The directory holding the fixture files."""
    return FIXTURES


@pytest.fixture(scope="session")
def http_server() -> Iterator[LoopbackServer]:
    """A loopback server with the canned routes used by the web tests."""
    srv = LoopbackServer()
    srv.add_file("/news/night-trains", "article_news.html", "text/html; charset=utf-8")
    srv.add_file("/blog/2023/11/sqlite-profiling/", "article_blog.html", "text/html")
    srv.add_file("/zh/birds.html", "article_zh_gbk.html", "text/html")  # charset only in <meta>
    srv.add_file("/notes.txt", "notes.txt", "text/plain; charset=utf-8")
    srv.add_file("/guide.md", "guide.md", "text/markdown; charset=utf-8")
    srv.add_file("/spec.pdf", "real_shared-mime-info-spec.pdf", "application/pdf")
    srv.add_file("/download", "real_shared-mime-info-spec.pdf", "application/octet-stream")
    srv.add("/logo.png", Route(200, {"Content-Type": "image/png"}, _tiny_png()))
    srv.add("/data.json", Route(200, {"Content-Type": "application/json"}, b'{"a": 1}'))
    srv.add("/old-link", Route(301, {"Location": "/news/night-trains"}))
    srv.add("/gone", Route(410, {"Content-Type": "text/html"}, b"<h1>Gone</h1>"))
    srv.add("/broken", Route(500, {"Content-Type": "text/plain"}, b"boom"))
    srv.add(
        "/footer-only.html",
        Route(
            200,
            {"Content-Type": "text/html; charset=utf-8"},
            b"<html><head><title>Opening hours</title><script>var SCRIPT_MARKER=1;</script></head>"
            b"<body><footer><p>Monday to Friday, 9 to 17.</p><p>Closed on public holidays.</p>"
            b"</footer></body></html>",
        ),
    )
    srv.add(
        "/empty.html",
        Route(200, {"Content-Type": "text/html"}, b"<html><head></head><body></body></html>"),
    )
    srv.add(
        "/huge-declared",
        Route(
            200,
            {"Content-Type": "text/html", "Content-Length": str(50 * 1024 * 1024)},
            writer=lambda h: h.wfile.write(b"<html>" + b"x" * 4096),
        ),
    )
    srv.add(
        "/huge-streamed",
        Route(
            200,
            {"Content-Type": "text/html", "Connection": "close"},
            writer=_stream_forever_writer(b"<p>" + b"y" * 65533 + b"</p>", 3 * 1024 * 1024),
        ),
    )
    srv.add("/slow", Route(200, {"Content-Type": "text/html"}, b"<p>late</p>", delay=5.0))
    srv.add(
        "/trickle",
        Route(200, {"Content-Type": "text/html", "Connection": "close"}, writer=_trickle_writer),
    )
    srv.thread.start()
    try:
        yield srv
    finally:
        srv.stop.set()
        srv.httpd.shutdown()
        srv.httpd.server_close()


def _tiny_png() -> bytes:
    import io

    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (64, 64), (200, 30, 30)).save(buf, format="PNG")
    return buf.getvalue()


@pytest.fixture
def closed_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return f"http://127.0.0.1:{port}/page"
