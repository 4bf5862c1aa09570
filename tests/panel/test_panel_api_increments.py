"""The JSON behind the panel's second edition: history from an index, the archive in pages,
Save into the loaded session, load writing the conversation back, the header's session, the
refusal page, Pygments code blocks; and in the browser, a turn that redraws only what changed."""

from __future__ import annotations

import pytest
from panel_helpers import open_panel, use_provider

from chatkeep.panel import render_markdown
from factories import assistant, image_entry, png_data_url, user
from support.provider_server import Text


def test_history_from_index_sends_only_the_tail(client, pstore):
    """``/api/history?from=i`` answers the views of entries[i:] with the length and archive size."""
    for i in range(5):
        pstore.history.append(user(f"q{i}"))
    r = client.get("/api/history?from=3").json()
    assert [v["index"] for v in r["history"]] == [3, 4]
    assert [v["text"] for v in r["history"]] == ["q3", "q4"]
    assert (r["start"], r["length"], r["archived"]) == (3, 5, 0)
    assert client.get("/api/history?from=99").json()["history"] == []
    assert client.get("/api/history?from=-1").status_code == 400


def test_archive_is_served_in_pages_ending_before_a_position(client, pstore):
    """``/api/archive`` pages back through the archive, read-only views, oldest first per page."""
    pstore.local.set("maxHistoryEntries", 2)
    for i in range(12):
        pstore.history.append(user(f"q{i}"))
    assert client.get("/api/state").json()["archived"] == 10
    page = client.get("/api/archive?limit=4").json()
    assert (page["start"], page["total"]) == (6, 10)
    assert [v["text"] for v in page["entries"]] == ["q6", "q7", "q8", "q9"]
    older = client.get("/api/archive?before=6&limit=4").json()
    assert [v["text"] for v in older["entries"]] == ["q2", "q3", "q4", "q5"]
    first = client.get("/api/archive?before=2&limit=100").json()
    assert first["start"] == 0 and [v["text"] for v in first["entries"]] == ["q0", "q1"]
    assert client.get("/api/archive?limit=x").status_code == 400


def test_archive_pages_equal_the_whole_archive_read_at_once(client, pstore):
    """Each page, read from the archive's newest end, shows what the whole archive's views show
    at those positions, [mm:ss] pills included: a reply with no video of its own links to the
    last video before it, even one pages earlier (and a quoted "videoSrc" is not a video)."""
    from chatkeep.panel.views import history_view

    url = "https://www.youtube.com/watch?v=abc123"
    video = {
        "role": "user",
        "content": "[Video transcript]\n[00:01] hi",
        "videoSrc": {"platform": "youtube", "url": url},
    }
    entries = [user('a quoted "videoSrc": {"url": "https://example.org/x"}'), video]
    entries += [user(f"q{i}") for i in range(9)] + [assistant("see [01:05] and [1:02:03]")]
    entries += [user(f"r{i}") for i in range(5)] + [assistant("no video yet [00:07]")]
    pstore.local.set("maxHistoryEntries", 1)
    for e in entries:
        pstore.history.append(e)
    pstore.history.append(user("live"))
    archived = pstore.history.archived()
    assert len(archived) == len(entries)
    for limit in (1, 3, 4, 7, 100):
        end = len(archived)
        while end > 0:
            page = client.get(f"/api/archive?before={end}&limit={limit}").json()
            begin = max(0, end - limit)
            assert (page["start"], page["total"]) == (begin, len(archived))
            want = [
                {k: v for k, v in view.items() if k != "images"}
                for view in history_view(archived[:end], images=_Images(), start=begin)
            ]
            got = [{k: v for k, v in view.items() if k != "images"} for view in page["entries"]]
            assert got == want, (limit, end)
            end = begin
    html = client.get("/api/archive?before=12&limit=1").json()["entries"][0]["html"]
    assert "abc123" in html and "t=65s" in html


class _Images:
    """A stand-in registry for a model of views with no images."""

    def remember(self, url: str) -> str:
        raise AssertionError("no images here")


def test_save_writes_back_into_the_loaded_session(client, pstore):
    """``POST /api/sessions/{id}/update`` rewrites that session's body; no new session appears."""
    pstore.history.append(user("first"))
    row = pstore.sessions.save("Kept name")
    pstore.history.append(assistant("second"))
    r = client.post(f"/api/sessions/{row['id']}/update", json={})
    assert r.status_code == 200
    assert r.json()["current"] == {"id": row["id"], "name": "Kept name"}
    assert len(pstore.sessions.list()) == 1
    body = pstore.sessions.get(row["id"])["history"]
    assert [e["content"] for e in body] == ["first", "second"]
    assert client.post("/api/sessions/nope/update", json={}).status_code == 404


def test_load_writes_the_live_conversation_back_first(client, pstore):
    """Loading over unsaved work saves it as a session; over a loaded session, saves into it."""
    pstore.history.append(user("target"))
    target = pstore.sessions.save("Target")
    pstore.history.clear()
    pstore.history.append(user("unsaved work"))
    r = client.post(f"/api/sessions/{target['id']}/load").json()
    assert r["savedBack"]["name"] == "unsaved work"
    assert r["current"]["id"] == target["id"]
    assert [v["text"] for v in r["history"]] == ["target"]
    assert pstore.history.archived() == []
    pstore.history.append(assistant("added while Target was loaded"))
    back = r["savedBack"]["id"]
    client.post(f"/api/sessions/{back}/load")
    saved = pstore.sessions.get(target["id"])["history"]
    assert [e["content"] for e in saved] == ["target", "added while Target was loaded"]
    assert len(pstore.sessions.list()) == 2
    assert client.post("/api/sessions/unknown/load").status_code == 404
    assert [e["content"] for e in pstore.history.read()] == ["unsaved work"]


def test_current_session_and_state_timing(client, pstore):
    """The header's session comes from ``/api/sessions/current``; ``/api/state`` reports its time."""
    assert client.get("/api/sessions/current").json() == {"current": None}
    pstore.history.append(user("hello"))
    row = pstore.sessions.save("Named")
    assert client.get("/api/sessions/current").json()["current"] == {
        "id": row["id"],
        "name": "Named",
    }
    r = client.get("/api/state")
    assert r.headers["server-timing"].startswith("state;dur=")


def test_usage_travels_with_the_reply_view(client, pstore):
    """An assistant entry's stored ``usage`` reaches the page unchanged."""
    usage = {"input": 12, "cachedRead": 4, "cacheWrite": 0, "output": 7}
    reply = assistant("hi")
    reply["usage"] = usage
    pstore.history.append(user("q"))
    pstore.history.append(reply)
    assert client.get("/api/state").json()["history"][1]["usage"] == usage


def test_image_views_carry_their_sizes(client, pstore):
    """Image views carry width and height, so the page reserves their space before loading."""
    pstore.history.append(image_entry("look", png_data_url(64, 32)))
    img = client.get("/api/state").json()["history"][0]["images"][0]
    assert (img["width"], img["height"]) == (64, 32)


@pytest.mark.parametrize(
    ("accept", "kind"), [("text/html,application/xhtml+xml", "text/html"), ("*/*", "json")]
)
def test_refusal_is_a_page_for_browsers_and_json_for_api_clients(anon, accept, kind):
    """A navigation without the token gets an HTML page; other clients keep the JSON error."""
    r = anon.get("/", headers={"Accept": accept})
    assert r.status_code == 401
    assert kind in r.headers["content-type"]
    if kind == "text/html":
        assert "<h1>This panel needs its launch address</h1>" in r.text
    api = anon.get("/api/state", headers={"Accept": accept})
    assert api.status_code == 401 and api.json()["error"]["type"] == "TokenRequired"


def test_code_blocks_are_highlighted_labelled_and_safe():
    """Pygments colours known languages; unknown ones are escaped; the language name is text."""
    html = render_markdown("```python\nx = '<b>'\n```")
    assert '<span class="code-lang">Python</span>' in html
    assert """<span class="s1">'&lt;b&gt;'</span>""" in html
    assert '<pre tabindex="0"' in html
    evil = render_markdown('```"><script>alert(1)</script>\n<i>x</i>\n```')
    assert "<script>" not in evil and "<i>" not in evil
    assert 'class="hl language-scriptalert1script"' in evil


def test_a_turn_redraws_only_what_changed(page, live_server, pstore, provider_server):
    """After a reply the page asks for the new entries only and keeps the nodes already shown."""
    for i in range(10):
        pstore.history.append(user(f"q{i}"))
        pstore.history.append(assistant(f"a{i}"))
    use_provider(pstore, provider_server)
    provider_server.queue(Text("fresh answer"))
    open_panel(page, live_server)
    page.evaluate("document.querySelector('#messages [data-index=\"0\"]').__kept = true")
    paths: list[str] = []
    page.on("request", lambda req: paths.append(req.url.split("/", 3)[3]))
    page.fill("#message", "new question")
    page.press("#message", "Enter")
    page.wait_for_selector(".bubble.assistant:not(.streaming) .md:has-text('fresh answer')")
    assert page.evaluate("document.querySelector('#messages [data-index=\"0\"]').__kept") is True
    fetched = [p for p in paths if p.startswith("api/history") or p.startswith("api/state")]
    assert fetched == ["api/history?from=20"]
    assert page.locator("#messages .bubble").count() == 22
    assert page.locator(".bubble.assistant .regenerate").count() == 1
