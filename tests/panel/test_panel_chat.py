"""Chat routes over the real engine and the loopback provider server: streamed send, errors,
stop, edit & resend, regenerate."""

from __future__ import annotations

import threading
import time

import pytest
from panel_helpers import sse_events, use_provider

from factories import assistant, attachment, png_data_url, user
from support.provider_server import Text, server_error


def _send(client, path, body):
    r = client.post(path, json=body)
    return r, sse_events(r.text) if r.status_code == 200 else []


def test_send_streams_sanitized_markdown_and_stores_one_turn(client, pstore, provider_server):
    """A send streams start/delta/done events and stores one user and one assistant entry."""
    use_provider(pstore, provider_server)
    provider_server.queue(Text("Hello **world** <script>alert(1)</script>"))
    r, events = _send(client, "/api/chat/send", {"text": "hi there"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/event-stream")
    kinds = [e for e, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "done" and "delta" in kinds
    last_html = [d["html"] for e, d in events if e == "delta"][-1]
    assert "<strong>world</strong>" in last_html
    assert "<script>" not in last_html and "&lt;script&gt;" in last_html
    done = events[-1][1]
    assert done["interrupted"] is False and done["landed"] == "live"
    assert done["stats"]["bytes"] > 0
    stored = pstore.history.read()
    assert [e["role"] for e in stored] == ["user", "assistant"]
    assert stored[0]["content"] == "hi there"
    assert stored[1]["provider"] == {"name": "loop", "model": "loop-model"}
    view = client.get("/api/history").json()["history"][1]
    assert "<strong>world</strong>" in view["html"] and "<script>" not in view["html"]


def test_send_with_pasted_image_keeps_pixels_and_serves_them(client, pstore, provider_server):
    """Pasted images are stored in the user entry and served back byte for byte."""
    use_provider(pstore, provider_server)
    provider_server.queue(Text("Nice picture."))
    pic = png_data_url(120, 90, noise=True)
    r, events = _send(client, "/api/chat/send", {"text": "what is this?", "images": [pic]})
    assert events[-1][0] == "done"
    sent = provider_server.requests[-1].body["messages"][-1]["content"]
    assert any(p.get("type") == "image_url" for p in sent)
    view = client.get("/api/history").json()["history"][0]
    assert view["images"][0]["width"] == 120
    img = client.get(view["images"][0]["src"])
    import base64

    assert img.content == base64.b64decode(pic.split(",", 1)[1])


def test_send_without_provider_is_400_and_writes_nothing(client, pstore):
    """No usable provider card: 400 with the provider hint before any stream, nothing stored."""
    r = client.post("/api/chat/send", json={"text": "hello"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "ProviderConfigError"
    assert r.json()["error"]["hint"]
    assert pstore.history.read() == []


def test_empty_message_is_400(client, pstore, provider_server):
    """An empty message with no image is refused with 400 before anything is written."""
    use_provider(pstore, provider_server)
    r = client.post("/api/chat/send", json={"text": "   "})
    assert r.status_code == 400
    assert pstore.history.read() == []
    assert provider_server.requests == []


def test_provider_failure_is_an_error_event_and_keeps_the_user_entry(
    client, pstore, provider_server
):
    """A provider error mid-turn arrives as an SSE error with status and hint; no assistant entry."""
    use_provider(pstore, provider_server)
    pstore.chat.retries = 0
    provider_server.queue(server_error())
    r, events = _send(client, "/api/chat/send", {"text": "hello"})
    assert events[-1][0] == "error"
    err = events[-1][1]
    assert err["status"] == 502 and err["error"]["type"] == "ProviderError"
    assert [e["role"] for e in pstore.history.read()] == ["user"]


def test_stop_keeps_the_partial_reply_marked_interrupted(client, pstore, provider_server):
    """The stop endpoint stops the streamed turn; the partial reply is kept, interrupted."""
    use_provider(pstore, provider_server)
    words = [f"w{i} " for i in range(200)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.05))
    got: dict = {}

    def run():
        got["r"], got["events"] = _send(client, "/api/chat/send", {"text": "long answer please"})

    t = threading.Thread(target=run)
    t.start()
    deadline = time.monotonic() + 10
    stopped = 0
    while time.monotonic() < deadline and not stopped:
        time.sleep(0.2)
        stopped = client.post("/api/chat/stop", json={}).json()["stopped"]
    t.join(timeout=20)
    assert stopped == 1
    done = got["events"][-1]
    assert done[0] == "done" and done[1]["interrupted"] is True
    stored = pstore.history.read()
    assert stored[-1]["role"] == "assistant" and stored[-1].get("interrupted") is True
    assert 0 < len(stored[-1]["content"]) < len("".join(words))


def test_stop_with_unknown_turn_stops_nothing(client):
    """Stopping a turn id that is not running reports zero."""
    assert client.post("/api/chat/stop", json={"turn": "nope"}).json() == {"stopped": 0}


def test_edit_and_resend_replaces_the_turn(client, pstore, provider_server):
    """Edit & resend of user entry i truncates from i and sends one new user entry at i."""
    use_provider(pstore, provider_server)
    for e in (user("first"), assistant("one"), user("second"), assistant("two")):
        pstore.history.append(e)
    provider_server.queue(Text("edited answer"))
    r, events = _send(client, "/api/chat/edit", {"index": 2, "text": "second, edited"})
    assert events[-1][0] == "done"
    stored = pstore.history.read()
    assert [e["content"] for e in stored] == ["first", "one", "second, edited", "edited answer"]


def test_edit_of_an_attachment_or_reply_is_400(client, pstore, provider_server):
    """Only the user's own messages can be edited; anything else is 400 and nothing changes."""
    use_provider(pstore, provider_server)
    for e in (attachment("page"), user("q"), assistant("a")):
        pstore.history.append(e)
    for index in (0, 2, 7):
        r = client.post("/api/chat/edit", json={"index": index, "text": "x"})
        assert r.status_code == 400, index
    assert client.post("/api/chat/edit", json={"index": "1", "text": "x"}).status_code == 400
    assert len(pstore.history.read()) == 3
    assert provider_server.requests == []


def test_regenerate_replaces_the_last_answer(client, pstore, provider_server):
    """Regenerate re-asks the last question: same number of entries, the new answer last."""
    use_provider(pstore, provider_server)
    for e in (user("question"), assistant("old answer")):
        pstore.history.append(e)
    provider_server.queue(Text("new answer"))
    r, events = _send(client, "/api/chat/regenerate", {})
    assert events[-1][0] == "done"
    assert [e["content"] for e in pstore.history.read()] == ["question", "new answer"]


def test_regenerate_with_nothing_to_regenerate_is_400(client, pstore, provider_server):
    """Regenerate on an empty conversation is a 400 with a hint."""
    use_provider(pstore, provider_server)
    r = client.post("/api/chat/regenerate", json={})
    assert r.status_code == 400 and r.json()["error"]["hint"]


@pytest.mark.parametrize(
    "body", [{"text": 5}, {"text": "x", "images": "nope"}, {"text": "x", "images": [1]}]
)
def test_malformed_send_bodies_are_400(client, pstore, provider_server, body):
    """Wrong types in the send body are refused with 400."""
    use_provider(pstore, provider_server)
    assert client.post("/api/chat/send", json=body).status_code == 400
    assert pstore.history.read() == []


def test_client_going_away_stops_the_turn(live_server, pstore, provider_server):
    """Over real HTTP, closing the stream mid-reply stops the turn; the partial reply is kept."""
    import httpx

    use_provider(pstore, provider_server)
    words = [f"w{i} " for i in range(200)]
    provider_server.queue(Text("".join(words), chunks=words, delay=0.05))
    token = live_server.url.split("token=", 1)[1]
    url = f"http://127.0.0.1:{live_server.port}/api/chat/send"
    with httpx.Client(timeout=10) as http:
        with http.stream(
            "POST", url, json={"text": "go"}, headers={"X-Chatkeep-Token": token}
        ) as resp:
            assert resp.status_code == 200
            for line in resp.iter_lines():
                if line.startswith("event: delta"):
                    break
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        stored = pstore.history.read()
        if stored and stored[-1]["role"] == "assistant":
            break
        time.sleep(0.1)
    assert stored[-1]["role"] == "assistant" and stored[-1].get("interrupted") is True
    assert len(stored[-1]["content"]) < len("".join(words))
