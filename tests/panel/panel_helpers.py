"""Helpers shared by the panel tests: constants, a provider card, an SSE parser."""

from __future__ import annotations

import json
from typing import Any

import chatkeep

TOKEN = "test-token-0123456789"
PORT = 8765
ORIGIN = f"http://127.0.0.1:{PORT}"


def use_provider(store: chatkeep.Store, server: Any, name: str = "loop") -> None:
    """A chat-style provider card pointing at the loopback provider server, made active."""
    store.local.set(
        {
            "providers": {
                name: {
                    "style": "chat",
                    "baseUrl": server.base_url + "/v1",
                    "model": "loop-model",
                    "apiKey": "sk-test-key",
                }
            },
            "activeProvider": name,
        }
    )


def sse_events(text: str) -> list[tuple[str, Any]]:
    """Parse a ``text/event-stream`` body into ``[(event, data), …]``."""
    out = []
    for block in text.split("\n\n"):
        event, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].strip())
        if data:
            out.append((event, json.loads("\n".join(data))))
    return out


def open_panel(pg: Any, server: Any) -> None:
    """Navigate to the panel and wait until its first render is done."""
    pg.goto(server.url)
    pg.wait_for_selector("body[data-ready='1']")


def expected_console_errors(pg: Any, *fragments: str) -> None:
    """Drop console errors the test provokes on purpose (a refused request logs one)."""
    pg.problems[:] = [p for p in pg.problems if not any(f in p for f in fragments)]
