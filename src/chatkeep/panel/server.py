"""Running the panel: bind a socket, serve it with uvicorn, know the URL with its token.

``PanelServer(store, host="127.0.0.1", port=8765, token=None, summarize=True)``

* The socket is bound in the constructor, so ``port=0`` picks a free port and :attr:`url`
  (``http://HOST:PORT/?token=…``) is known before serving; a port in use raises
  :class:`~chatkeep.errors.ChatkeepError` with a hint.
* :meth:`serve` blocks until interrupted (``chatkeep serve``); :meth:`start` serves from a
  background thread and returns once the server accepts connections; :meth:`stop` shuts down.
* ``token`` defaults to a fresh random token per launch. ``host`` defaults to loopback; a
  wildcard (``0.0.0.0``, ``::``) still gets a loopback URL, and the Host check still only
  accepts loopback names plus ``host`` itself.
* Connections are served by :func:`~chatkeep.panel.connections.panel_protocol`: a header
  timeout, and connections without the token can never take the user's place.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
import threading
import time
from typing import TYPE_CHECKING, Any

from .. import ChatkeepError
from .app import create_app
from .connections import IDLE_TIMEOUT_S, MAX_HEADER_BYTES, panel_protocol
from .security import new_token

if TYPE_CHECKING:
    from .. import Store

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "PanelServer", "is_loopback"]

log = logging.getLogger(__name__)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _bind(host: str, port: int) -> socket.socket:
    bare = host.strip("[]")
    family = socket.AF_INET6 if ":" in bare else socket.AF_INET
    # IPPROTO_TCP named, not 0: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
    # sockets whose proto says TCP, and accepted sockets inherit it. With Nagle on, a response
    # written in two parts (headers, then body) waits for the client's delayed ACK (~40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((bare, port))
    except OSError as exc:
        sock.close()
        raise ChatkeepError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            hint="pick another port with --port (0 = any free port)",
        ) from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


class PanelServer:
    """One launch of the panel (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        *,
        host: str = DEFAULT_HOST,
        port: int = DEFAULT_PORT,
        token: str | None = None,
        summarize: bool = True,
    ) -> None:
        self.host = host
        self.token = token or new_token()
        self.socket = _bind(host, port)
        self.port = int(self.socket.getsockname()[1])
        self.app = create_app(
            store, token=self.token, port=self.port, hosts=(host,), summarize=summarize
        )
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def origin(self) -> str:
        bare = self.host.strip("[]")
        shown = DEFAULT_HOST if bare in ("", "0.0.0.0") else ("::1" if bare == "::" else bare)
        if ":" in shown:
            shown = f"[{shown}]"
        return f"http://{shown}:{self.port}"

    @property
    def url(self) -> str:
        return f"{self.origin}/?token={self.token}"

    def _make_server(self, log_level: str) -> Any:
        import uvicorn  # lazy: only a running panel needs the ASGI server

        config = uvicorn.Config(
            self.app,
            log_level=log_level,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=2,
            http=panel_protocol(self.token),
            ws="none",
            timeout_keep_alive=IDLE_TIMEOUT_S,
            h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        )
        self._server = uvicorn.Server(config)
        return self._server

    def warm_up(self) -> threading.Thread:
        """Do the page's first load once in a daemon thread (the image budget pass, the end
        of the live history rendered, the usage totals), so the first page load finds the
        Markdown parser, Pygments, those replies' HTML and a history it need not read again
        ready (a fresh process spends ~200 ms on them for 200 entries). Only a speed-up: a failure here shows again, with its
        error, on the page's own request."""

        def run() -> None:
            from .. import DEFAULT_UNSEEN_BUDGET
            from .markdown import code_block_html
            from .routes.page import tail_payload

            try:
                code_block_html("x = 1\n", "python")
                panel = self.app.state.panel
                # what the first load does: the image budget pass (§5.4), then the tail's views
                # and the usage totals, which stay known while the history does not change
                panel.store.bound_unseen_image_bytes(DEFAULT_UNSEEN_BUDGET)
                panel.store.history.read()
                tail_payload(panel)
            except Exception:  # the page's own request reports it
                log.debug("panel warm-up failed", exc_info=True)

        thread = threading.Thread(target=run, daemon=True, name="chatkeep-panel-warm-up")
        thread.start()
        return thread

    def serve(self, log_level: str = "warning") -> None:
        """Serve until interrupted (Ctrl-C)."""
        server = self._make_server(log_level)
        self.warm_up()
        try:
            server.run(sockets=[self.socket])
        finally:
            self.socket.close()

    def start(self, log_level: str = "warning", timeout: float = 10.0) -> PanelServer:
        """Serve from a daemon thread; returns when the server is up."""
        server = self._make_server(log_level)
        server.install_signal_handlers = lambda: None  # not the main thread
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self.socket]}, daemon=True, name="chatkeep-panel"
        )
        self._thread.start()
        self.warm_up()
        deadline = time.monotonic() + timeout
        while not server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise ChatkeepError("the panel server did not start", hint="see the log above")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.socket.close()

    def __enter__(self) -> PanelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
