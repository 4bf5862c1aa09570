"""Connection handling of the running panel: header timeout, slots kept for the token's holder.

:func:`panel_protocol` is uvicorn's h11 protocol with three additions:

* **Header timeout.** A connection must finish sending a request's headers within
  :data:`HEADER_TIMEOUT_S` of opening (or of its last complete request); half-sent headers do
  not hold it open.
* **Unproven connections are bounded, the oldest goes first.** A connection counts as
  *unproven* until it sends a request carrying the launch token. At most
  :data:`MAX_UNPROVEN` unproven connections stay open: when another one arrives, the oldest
  unproven one is closed. So any number of connections that send nothing, or send no token,
  cannot keep the user's browser out: its connection is the newest, and it proves itself with
  its first request (the page's static files need no token; under such a flood one of them
  may be cut and load on the next try).
* **Requests in flight are bounded** at :data:`MAX_REQUESTS`; more get HTTP 503 with a JSON
  error body (uvicorn's own ``limit_concurrency``, which counts every open connection, is not
  used: it let idle connections without the token refuse the user).
"""

from __future__ import annotations

import json
from typing import Any

from .security import carries_token

__all__ = [
    "HEADER_TIMEOUT_S",
    "IDLE_TIMEOUT_S",
    "MAX_HEADER_BYTES",
    "MAX_REQUESTS",
    "MAX_UNPROVEN",
    "panel_protocol",
]

#: Seconds a connection has to complete a request's headers.
HEADER_TIMEOUT_S = 10.0
#: Seconds an idle keep-alive connection stays open between requests.
IDLE_TIMEOUT_S = 5
#: Connections kept open that have not yet sent a request with the token.
MAX_UNPROVEN = 32
#: Requests handled at once; more get HTTP 503.
MAX_REQUESTS = 100
MAX_HEADER_BYTES = 64 * 1024

_BUSY = json.dumps(
    {
        "error": {
            "type": "PanelBusy",
            "message": f"the panel is already handling {MAX_REQUESTS} requests",
            "hint": "try again in a few seconds",
        }
    }
).encode()


async def _busy(send: Any) -> None:
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_BUSY)).encode()),
        (b"retry-after", b"5"),
        (b"connection", b"close"),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": _BUSY})


def panel_protocol(token: str) -> type:
    """The protocol class for one server launch (see the module docstring); its bookkeeping of
    unproven connections is shared by that launch's connections only."""
    import h11  # lazy: only a running panel needs the HTTP protocol
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class PanelH11(H11Protocol):
        unproven: dict[Any, None] = {}  # insertion order = age; one dict per launch
        proven = False
        _header_timer: Any = None

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._inner = self.app
            self.app = self._admit

        async def _admit(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope.get("type") == "http" and not self.proven and carries_token(scope, token):
                self.proven = True
                self.unproven.pop(self, None)
            if len(self.tasks) > MAX_REQUESTS:
                await _busy(send)
                return
            await self._inner(scope, receive, send)

        # -- the header timer -------------------------------------------------------------
        def _arm(self) -> None:
            if self._header_timer is None:
                self._header_timer = self.loop.call_later(HEADER_TIMEOUT_S, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.close()

        # -- asyncio.Protocol -------------------------------------------------------------
        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()
            self.unproven[self] = None
            while len(self.unproven) > MAX_UNPROVEN:
                oldest = next(iter(self.unproven))
                del self.unproven[oldest]
                oldest.transport.close()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self._arm()  # headers still incomplete: the clock keeps running
            else:
                self._disarm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            self.unproven.pop(self, None)
            super().connection_lost(exc)

    return PanelH11
