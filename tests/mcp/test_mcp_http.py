"""`chatkeep mcp --http` on real loopback: the SDK's Streamable HTTP client with the token (as a
bearer header, or in the printed URL) lists and calls the tools; a missing or wrong token, a
foreign Host or a web page's Origin is refused before any tool runs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from clirun import run
from support.mcp_client import READ_TOOLS, HttpLaunch, payload
from support.mcp_store import fill
from support.stores import StoreSpec

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


@pytest.fixture
def launch(sqlite_spec: StoreSpec) -> Iterator[HttpLaunch]:
    with sqlite_spec.open() as store:
        fill(store)
    server = HttpLaunch(sqlite_spec)
    try:
        yield server
    finally:
        server.stop()


def _with_client(target: Any, scenario: Any) -> None:
    async def main() -> None:
        with anyio.fail_after(60):
            async with Client(target) as client:
                await scenario(client)

    anyio.run(main)


def test_the_client_with_the_token_uses_the_tools(launch: HttpLaunch) -> None:
    """With `Authorization: Bearer TOKEN` the SDK's HTTP client lists the read-only tools and
    calls one; the printed URL (token in its query) works as it is."""
    assert launch.endpoint.startswith("http://127.0.0.1:") and launch.endpoint.endswith("/mcp")
    assert len(launch.token) >= 16 and launch.url == f"{launch.endpoint}?token={launch.token}"

    async def scenario(client: Client) -> None:
        assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS
        tail = payload(await client.call_tool("recent", {"n": 2}))
        assert tail["entries"][-1]["text"] == "It said the harbours are busy."

    headers = {"Authorization": f"Bearer {launch.token}"}

    async def bearer() -> None:
        with anyio.fail_after(60):
            async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
                transport = streamable_http_client(launch.endpoint, http_client=http)
                async with Client(transport) as client:
                    await scenario(client)

    anyio.run(bearer)
    _with_client(launch.url, scenario)


def _post(launch: HttpLaunch, url: str, **headers: str) -> httpx2.Response:
    with httpx2.Client(timeout=10) as http:
        return http.post(url, json=INIT, headers={**ACCEPT, **headers})


def test_missing_or_wrong_token_is_refused(launch: HttpLaunch) -> None:
    """No token → 401 TokenRequired, a wrong one → 403 BadToken (header or query), each with a
    hint naming `chatkeep mcp --http`; the SDK's client cannot connect without it."""
    missing = _post(launch, launch.endpoint)
    assert missing.status_code == 401
    error = missing.json()["error"]
    assert error["type"] == "TokenRequired" and "chatkeep mcp --http" in error["hint"]
    other = "B" if launch.token.endswith("A") else "A"  # one character off, never the token
    for response in (
        _post(launch, launch.endpoint, authorization="Bearer " + "x" * 32),
        _post(launch, launch.endpoint + "?token=" + launch.token[:-1] + other),
        _post(launch, launch.endpoint, **{"x-chatkeep-token": "nope"}),
    ):
        assert response.status_code == 403
        assert response.json()["error"]["type"] == "BadToken"
    ok = _post(launch, launch.endpoint, authorization=f"Bearer {launch.token}")
    assert ok.status_code == 200

    async def scenario(client: Client) -> None:  # pragma: no cover - never connects
        raise AssertionError("connected without the token")

    with pytest.raises(Exception):  # noqa: B017 - the SDK's transport error, whatever its class
        _with_client(launch.endpoint, scenario)


def test_foreign_host_and_web_origin_are_refused(launch: HttpLaunch) -> None:
    """A DNS-rebinding Host or a web page's Origin is refused even with the right token."""
    token = {"authorization": f"Bearer {launch.token}"}
    rebinding = _post(launch, launch.endpoint, host="evil.example", **token)
    assert rebinding.status_code == 403 and rebinding.json()["error"]["type"] == "BadHost"
    page = _post(launch, launch.endpoint, origin="https://evil.example", **token)
    assert page.status_code == 403 and page.json()["error"]["type"] == "CrossOrigin"
    same = _post(launch, launch.endpoint, origin=launch.endpoint.rsplit("/", 1)[0], **token)
    assert same.status_code == 200 and '"name":"chatkeep"' in same.text  # its own origin: served


def test_a_short_token_is_refused(sqlite_spec: StoreSpec) -> None:
    """--token shorter than 16 characters is refused with a hint (exit 3); nothing is served."""
    proc = run(Path(sqlite_spec.url), "mcp", "--http", "--port", "0", "--token", "short", ok=False)
    assert proc.returncode == 3
    assert "at least 16" in proc.stderr and "hint:" in proc.stderr
    assert proc.stdout == ""
