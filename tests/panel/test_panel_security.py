"""The panel's guard: launch token, Host and Origin checks, security headers, real HTTP."""

from __future__ import annotations

import http.client
import json

import pytest
from panel_helpers import ORIGIN, TOKEN
from starlette.testclient import TestClient

from chatkeep.panel import PanelServer, create_app
from chatkeep.panel.security import split_host

API_GETS = ["/api/state", "/api/history", "/api/sessions", "/api/settings", "/api/preview"]


@pytest.mark.parametrize("path", API_GETS)
def test_api_without_token_is_401_json(anon, path):
    """Every API call without the launch token is refused with 401 and a JSON error + hint."""
    r = anon.get(path)
    assert r.status_code == 401
    body = r.json()
    assert body["error"]["type"] == "TokenRequired"
    assert "chatkeep serve" in body["error"]["hint"]


def test_wrong_token_is_403_in_header_and_query(anon):
    """A wrong token, in the header or the query, is refused with 403."""
    assert anon.get("/api/state", headers={"X-Chatkeep-Token": "nope"}).status_code == 403
    r = anon.get("/api/state?token=nope")
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "BadToken"


def test_token_in_header_or_query_is_accepted(anon):
    """The right token works both as the X-Chatkeep-Token header and as ?token=."""
    assert anon.get("/api/state", headers={"X-Chatkeep-Token": TOKEN}).status_code == 200
    assert anon.get(f"/api/state?token={TOKEN}").status_code == 200


def test_token_as_a_bearer_header_is_accepted(anon):
    """`Authorization: Bearer TOKEN` (what MCP clients send) carries the token too; a wrong
    bearer or another scheme is refused."""
    assert anon.get("/api/state", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert anon.get("/api/state", headers={"Authorization": "Bearer nope"}).status_code == 403
    assert anon.get("/api/state", headers={"Authorization": f"Basic {TOKEN}"}).status_code == 401


def test_writes_need_the_token_too(anon, pstore):
    """A POST without the token changes nothing in the store."""
    pstore.history.append({"role": "user", "content": "keep me"})
    r = anon.post("/api/sessions/new")
    assert r.status_code == 401
    assert len(pstore.history.read()) == 1
    assert pstore.sessions.list() == []


def test_page_needs_token_static_does_not(anon):
    """The page itself needs the token; the static JS/CSS (no data) does not."""
    assert anon.get("/").status_code == 401
    page = anon.get(f"/?token={TOKEN}")
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    js = anon.get("/static/main.js")
    assert js.status_code == 200
    assert "javascript" in js.headers["content-type"]
    assert anon.get("/static/panel.css").status_code == 200


@pytest.mark.parametrize(
    "host",
    ["evil.example:8765", "evil.example", "127.0.0.1.nip.io:8765", "127.0.0.1:9999", "localhost:1"],
)
def test_foreign_or_rebinding_host_is_refused(client, host):
    """A Host that is not a loopback name on the panel's port (DNS rebinding) gets 403."""
    r = client.get("/api/state", headers={"Host": host})
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "BadHost"


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765"])
def test_loopback_hosts_are_served(client, host):
    """127.0.0.1, localhost and [::1] on the panel's port are served."""
    assert client.get("/api/state", headers={"Host": host}).status_code == 200


@pytest.mark.parametrize(
    "origin",
    ["http://evil.example", "null", "http://127.0.0.1:9999", "https://127.0.0.1:8765", "file://"],
)
def test_cross_origin_post_is_refused(client, pstore, origin):
    """A POST from another origin (or Origin: null) is refused and writes nothing."""
    pstore.history.append({"role": "user", "content": "keep me"})
    r = client.post("/api/sessions", json={"name": "x"}, headers={"Origin": origin})
    assert r.status_code == 403
    assert r.json()["error"]["type"] == "CrossOrigin"
    assert pstore.sessions.list() == []


def test_same_origin_post_is_served(client, pstore):
    """A POST whose Origin is the panel's own origin is served."""
    pstore.history.append({"role": "user", "content": "keep me"})
    r = client.post("/api/sessions", json={"name": "mine"}, headers={"Origin": ORIGIN})
    assert r.status_code == 200
    assert [s["name"] for s in pstore.sessions.list()] == ["mine"]


def test_cross_site_fetch_metadata_is_refused(client):
    """Sec-Fetch-Site: cross-site is refused even without an Origin header."""
    r = client.get("/api/state", headers={"Sec-Fetch-Site": "cross-site"})
    assert r.status_code == 403


def test_security_headers_on_page_and_api(client):
    """Page and API answers carry CSP, nosniff, no-referrer; API answers are not cached."""
    page = client.get("/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["x-content-type-options"] == "nosniff"
    api = client.get("/api/state")
    assert api.headers["cache-control"] == "no-store"
    refused = client.get("/api/state", headers={"Host": "evil.example:8765"})
    assert refused.headers["referrer-policy"] == "no-referrer"


def test_empty_token_is_rejected_at_creation(pstore):
    """An app cannot be created without a launch token."""
    app = create_app(pstore, token="", port=1)
    with pytest.raises(ValueError):
        with TestClient(app, base_url="http://127.0.0.1:1") as c:
            c.get("/")


def test_split_host_forms():
    """Host headers parse as host and port, IPv6 brackets included."""
    assert split_host("127.0.0.1:8765") == ("127.0.0.1", 8765)
    assert split_host("[::1]:80") == ("::1", 80)
    assert split_host("LOCALHOST") == ("localhost", None)
    assert split_host("a:b") == ("", None)


def _raw_get(port: int, path: str, host: str) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path, skip_host=True)
        conn.putheader("Host", host)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def test_real_server_binds_loopback_and_checks_token_and_host(live_server):
    """Over real HTTP: loopback bind, token in the printed URL, 401 without it, Host checked."""
    assert live_server.socket.getsockname()[0] == "127.0.0.1"
    assert live_server.url.startswith(f"http://127.0.0.1:{live_server.port}/?token=")
    token = live_server.url.split("token=", 1)[1]
    assert len(token) >= 24
    here = f"127.0.0.1:{live_server.port}"
    assert _raw_get(live_server.port, "/api/state", here)[0] == 401
    status, body = _raw_get(live_server.port, f"/api/state?token={token}", here)
    assert status == 200 and body["history"] == []
    status, body = _raw_get(live_server.port, f"/api/state?token={token}", "evil.example")
    assert status == 403 and body["error"]["type"] == "BadHost"


def test_each_launch_has_its_own_token(pstore):
    """Two launches get two different random tokens."""
    a = PanelServer(pstore, port=0)
    b = PanelServer(pstore, port=0)
    try:
        assert a.token != b.token
        assert a.port != b.port
    finally:
        a.socket.close()
        b.socket.close()


def test_port_in_use_is_a_clear_error(pstore):
    """Binding a port that is taken raises a chatkeep error with a hint."""
    from chatkeep.errors import ChatkeepError

    a = PanelServer(pstore, port=0)
    try:
        with pytest.raises(ChatkeepError) as info:
            PanelServer(pstore, port=a.port)
        assert "--port" in info.value.hint
    finally:
        a.socket.close()


def test_accepted_connections_send_without_nagle_delay(live_server):
    """The server's accepted sockets have TCP_NODELAY on, so a response written in parts (headers,
    then body) is not held back waiting for the browser's delayed ACK."""
    import socket
    import time

    protocol = live_server._server.config.http
    with socket.create_connection(("127.0.0.1", live_server.port)) as client:
        local = client.getsockname()
        deadline = time.monotonic() + 10
        mine = []
        while not mine and time.monotonic() < deadline:
            conns = list(protocol.unproven)
            mine = [c for c in conns if c.transport.get_extra_info("peername") == local]
            time.sleep(0.01)
        assert mine, "the server never saw the connection"
        sock = mine[0].transport.get_extra_info("socket")
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
