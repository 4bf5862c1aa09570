"""Page, history JSON, image endpoint, attachments and the first-load read contract."""

from __future__ import annotations

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import chatkeep
import chatkeep.entries
from chatkeep.storage import history_rows, kv_rows
from factories import assistant, attachment, image_entry, png_data_url, user

VTT = """WEBVTT

00:00:01.000 --> 00:00:04.000
Welcome to the talk.

00:01:23.000 --> 00:01:30.000
Here is the key result.
"""


def _png_bytes(url: str) -> bytes:
    return base64.b64decode(url.split(",", 1)[1])


def test_state_gives_settings_and_history_without_base64(client, pstore):
    """/api/state: defaults with the panel options, and entry views with no base64 pixels."""
    pic = png_data_url(80, 60)
    pstore.history.append(image_entry("look at this", pic))
    pstore.history.append(assistant("A red square."))
    r = client.get("/api/state")
    assert r.status_code == 200
    assert "base64" not in r.text and "data:image" not in r.text
    body = r.json()
    assert body["settings"]["fontSize"] == 14
    assert body["settings"]["sendShortcut"] == "Enter"
    assert body["settings"]["thoughtAutoCollapse"] is True
    assert "history" not in body["settings"]
    first, second = body["history"]
    assert first["kind"] == "message" and first["text"] == "look at this"
    assert first["images"][0]["width"] == 80 and first["images"][0]["height"] == 60
    assert first["images"][0]["src"].startswith("/api/image/")
    assert second["html"] == "<p>A red square.</p>\n"


def test_image_endpoint_serves_the_stored_png_bytes(client, pstore):
    """The image endpoint returns exactly the stored PNG bytes, full resolution, as image/png."""
    pic = png_data_url(640, 480, noise=True)
    pstore.history.append(image_entry("big one", pic))
    src = client.get("/api/history").json()["history"][0]["images"][0]["src"]
    r = client.get(src)
    assert r.status_code == 200
    assert r.headers["content-type"] == "image/png"
    assert r.content == _png_bytes(pic)
    assert r.content[:8] == b"\x89PNG\r\n\x1a\n"


def test_image_endpoint_reads_history_on_a_cold_registry(client, pstore):
    """An image key the app has not listed yet is found by reading the live history."""
    from chatkeep.panel.views import image_key

    pic = png_data_url(10, 10)
    pstore.history.append(image_entry("x", pic))
    r = client.get(f"/api/image/{image_key(pic)}")
    assert r.status_code == 200 and r.content == _png_bytes(pic)


@pytest.mark.parametrize("key", ["0" * 64, "not-a-key", "../../etc/passwd"])
def test_unknown_image_is_404_json(client, key):
    """An unknown or malformed image key is a 404 JSON error."""
    r = client.get(f"/api/image/{key}")
    assert r.status_code == 404
    assert r.json()["error"]["type"] in ("NotFound",)


def test_image_needs_the_token(anon, pstore):
    """Images are served only with the token (query form, as <img> uses)."""
    from panel_helpers import TOKEN

    from chatkeep.panel.views import image_key

    pic = png_data_url(12, 12)
    pstore.history.append(image_entry("x", pic))
    assert anon.get(f"/api/image/{image_key(pic)}").status_code == 401
    assert anon.get(f"/api/image/{image_key(pic)}?token={TOKEN}").status_code == 200


def test_attachment_is_a_chip_without_its_body(client, pstore):
    """An attachment comes back as a chip (title, url, size) and never with its page text."""
    entry = attachment("SECRET BODY " * 100, title="Docs page", url="https://example.com/docs")
    pstore.history.append(entry)
    view = client.get("/api/history").json()["history"][0]
    assert view["kind"] == "attachment"
    assert view["attachId"] == entry["attachId"]
    assert view["attachment"]["title"] == "Docs page"
    assert view["attachment"]["url"] == "https://example.com/docs"
    assert view["attachment"]["chars"] > 1000
    assert "SECRET BODY" not in client.get("/api/history").text


def test_undo_attachment_removes_it(client, pstore):
    """DELETE /api/attachments/{id} removes exactly that attachment; unknown ids are 404."""
    a = attachment("body a", title="A")
    pstore.history.append(user("hi"))
    pstore.history.append(a)
    r = client.delete(f"/api/attachments/{a['attachId']}")
    assert r.status_code == 200
    assert [v["kind"] for v in r.json()["history"]] == ["message"]
    assert len(pstore.history.read()) == 1
    assert client.delete(f"/api/attachments/{a['attachId']}").status_code == 404


def test_attach_markdown_file_upload(client, pstore):
    """A file upload becomes an attachment entry with the file's name as title."""
    r = client.post(
        "/api/attach/file?name=notes.md",
        content=b"# Notes\n\nThe launch is on Tuesday.\n",
        headers={"Content-Type": "text/markdown"},
    )
    assert r.status_code == 200, r.text
    info = r.json()["attachment"]
    assert info["title"] == "notes.md"
    stored = pstore.history.read()
    assert chatkeep.is_attachment(stored[-1])
    assert "The launch is on Tuesday." in stored[-1]["content"]


def test_attach_pasted_image_upload(client, pstore):
    """An image upload is stored as a screenshot-style attachment with its pixels."""
    pic = png_data_url(30, 20)
    r = client.post(
        "/api/attach/file?name=shot.png",
        content=_png_bytes(pic),
        headers={"Content-Type": "image/png"},
    )
    assert r.status_code == 200, r.text
    assert r.json()["attachment"]["images"] == 1
    view = r.json()["history"][-1]
    assert view["kind"] == "attachment" and view["attachment"]["images"] == 1


def test_bad_upload_is_422_with_hint_and_stores_nothing(client, pstore):
    """Bytes that are not an image, sent as one, give 422 with the attach error's hint."""
    r = client.post(
        "/api/attach/file?name=x.png",
        content=b"not an image",
        headers={"Content-Type": "image/png"},
    )
    assert r.status_code == 422
    err = r.json()["error"]
    assert err["type"] == "AttachError" and err["message"]
    assert pstore.history.read() == []


def test_attach_url_from_a_local_page(client, pstore):
    """POST /api/attach fetches a page (served locally here) and stores it as a chip."""

    class Page(BaseHTTPRequestHandler):
        def do_GET(self):
            body = (
                b"<html><head><title>Local article</title></head><body><article><h1>Local article"
                b"</h1><p>"
                + b"The panel attached this paragraph. " * 20
                + b"</p></article></body></html>"
            )
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/article"
        r = client.post("/api/attach", json={"url": url})
    finally:
        server.shutdown()
        server.server_close()
    assert r.status_code == 200, r.text
    chip = r.json()["history"][-1]
    assert chip["kind"] == "attachment"
    assert chip["attachment"]["url"] == url
    assert "The panel attached this paragraph." in chatkeep.entries.entry_text(
        pstore.history.read()[-1]
    )


def test_video_transcript_gives_timestamp_pills(client, pstore):
    """A video attachment makes [mm:ss] in later replies links to the video at that second."""
    r = client.post(
        "/api/attach/video",
        json={
            "url": "https://www.youtube.com/watch?v=abc123",
            "transcript": VTT,
            "name": "talk.vtt",
        },
    )
    assert r.status_code == 200, r.text
    assert r.json()["history"][-1]["videoSrc"]["url"] == "https://www.youtube.com/watch?v=abc123"
    pstore.history.append(user("where is the key result?"))
    pstore.history.append(assistant("At [01:23] the speaker shows it."))
    reply = client.get("/api/history").json()["history"][-1]
    assert 'class="ts-pill"' in reply["html"]
    assert 'href="https://www.youtube.com/watch?v=abc123&amp;t=83s"' in reply["html"]
    assert 'data-seconds="83"' in reply["html"]


def test_first_load_reads_only_get_all_and_live_history(client, pstore, monkeypatch):
    """Page + /api/state read only GET_ALL_KEYS and the live history: no sessions, no archive."""
    pstore.history.append(user("hello"))
    pstore.sessions.save("old one")
    pstore.local.set("attachSnapshots", {"auto::x": {"hash": "h", "length": 1, "attachedAt": 1}})
    keys_read: list[str] = []
    archive_reads: list[int] = []
    real_kv_get = kv_rows.KvRows.get
    real_archive = history_rows.HistoryRows.archive_rows

    def spy_kv_get(self, keys, corrupt=None):
        keys_read.extend(keys)
        return real_kv_get(self, keys, corrupt)

    def spy_archive(self):
        archive_reads.append(1)
        return real_archive(self)

    monkeypatch.setattr(kv_rows.KvRows, "get", spy_kv_get)
    monkeypatch.setattr(history_rows.HistoryRows, "archive_rows", spy_archive)
    assert client.get("/").status_code == 200
    assert keys_read == []  # the page is a static shell
    r = client.get("/api/state")
    assert r.status_code == 200 and r.json()["history"][0]["text"] == "hello"
    allowed = set(chatkeep.GET_ALL_KEYS)
    assert keys_read and set(keys_read) <= allowed, set(keys_read) - allowed
    assert not any(k.startswith("session_") or k == "savedSessions" for k in keys_read)
    assert archive_reads == []


def test_state_runs_the_unseen_image_budget(client, pstore, monkeypatch):
    """Opening the panel runs store.bound_unseen_image_bytes (SPEC §5.4) before reading history."""
    calls: list[int] = []
    real = pstore.bound_unseen_image_bytes

    def spy(budget=8 * 1024 * 1024):
        calls.append(budget)
        return real(budget)

    monkeypatch.setattr(pstore, "bound_unseen_image_bytes", spy)
    client.get("/api/state")
    assert calls == [8 * 1024 * 1024]


def test_corrupt_setting_does_not_crash_the_panel(client, pstore):
    """A stored setting of the wrong type reads as its default; the panel still loads."""
    pstore.local.set("fontSize", "huge")
    pstore.local.set("maxHistoryEntries", "many")
    r = client.get("/api/state")
    assert r.status_code == 200
    assert r.json()["settings"]["maxHistoryEntries"] == 60
    assert r.json()["settings"]["fontSize"] == 14


def test_bad_json_body_is_400(client):
    """A body that is not a JSON object is a 400 with a JSON error."""
    r = client.post("/api/sessions", content=b"{nope", headers={"Content-Type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "BadRequest"
    assert client.post("/api/sessions", json=[1, 2]).status_code == 400


def test_unknown_api_route_is_404_json(client):
    """Unknown API paths answer 404 JSON."""
    r = client.get("/api/nothing-here")
    assert r.status_code == 404
    assert r.json()["error"]["type"] == "NotFound"


def test_static_files_come_with_an_etag_and_answer_304(anon):
    """A static file is served with its type and an ETag; asked again with that ETag it is a
    304 with no body; a changed ETag gets the file; unknown paths and escapes are 404."""
    from chatkeep.panel.app import STATIC_DIR

    first = anon.get("/static/main.js")
    assert first.status_code == 200
    assert first.headers["content-type"].startswith("text/javascript")
    assert first.content == (STATIC_DIR / "main.js").read_bytes()
    etag = first.headers["etag"]
    again = anon.get("/static/main.js", headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.content == b""
    assert again.headers["etag"] == etag
    other = anon.get("/static/main.js", headers={"If-None-Match": '"stale"'})
    assert other.status_code == 200 and other.content == first.content
    assert anon.get("/static/panel.css").headers["etag"] != etag
    assert anon.get("/static/katex/katex.min.css").status_code == 200
    assert anon.get("/static/nope.js").status_code == 404
    for escape in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py"):
        assert anon.get(escape).status_code in (401, 404)  # never the file
