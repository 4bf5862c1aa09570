"""Message search in the drawer (SPEC §16): ``/api/search`` with snippet parts, where a session
hit lands after its load, archived and evicted entries read-only; in Chromium: a hit under the
session matches opens the session scrolled to the entry, stored markup stays text, an archive
hit opens read-only, axe finds nothing serious and 360 px holds."""

from __future__ import annotations

from typing import Any

import pytest
from panel_helpers import ORIGIN, open_panel
from test_panel_axe import _audit, axe_source  # noqa: F401  (the fixture)
from test_panel_window import in_view

from factories import assistant, user

WORD = "quetzalcoatlite"


def _long_session(store: Any, n: int = 200, at: int = 150, name: str = "Long trip") -> str:
    """A saved session of ``n`` entries whose entry ``at`` alone holds WORD; the live
    conversation is then a short unsaved one."""
    entries = []
    for i in range(n):
        text = f"note {i} about the {WORD} samples" if i == at else f"entry {i} of the plan"
        entries.append(user(text) if i % 2 == 0 else assistant(text))
    store.history.mutate(lambda _old: entries)
    row = store.sessions.save(name)
    store.history.clear()
    store.history.append(user("an unsaved question about lamps"))
    return row["id"]


# -- the API -----------------------------------------------------------------------------------


def test_search_answers_pages_of_hits_with_snippet_parts(client, pstore):
    """Hits carry the facade's fields and the snippet as text parts; pages follow ``more``."""
    pstore.local.set({"maxHistoryEntries": 5000, "maxHistoryChars": 50_000_000})
    sid = _long_session(pstore)
    for i in range(12):
        pstore.history.append(user(f"lamp {i} in the {WORD} room"))
    r = client.get("/api/search", params={"q": WORD})
    assert r.status_code == 200
    data = r.json()
    assert len(data["hits"]) == 10 and data["more"] is True
    hit = data["hits"][0]
    assert set(hit) >= {"where", "sessionId", "index", "role", "createdAt", "snippet", "parts"}
    assert [t for t, marked in hit["parts"] if marked] == [WORD]
    assert "".join(t for t, _m in hit["parts"]) in hit["snippet"].replace("<mark>", "").replace(
        "</mark>", ""
    )
    rest = client.get("/api/search", params={"q": WORD, "offset": 10}).json()
    assert rest["more"] is False
    hits = data["hits"] + rest["hits"]
    assert len(hits) == 13
    session = [h for h in hits if h["where"] == "session"]
    assert [(h["sessionId"], h["index"]) for h in session] == [(sid, 150)]
    assert client.get("/api/search", params={"q": "  "}).json() == {
        "hits": [],
        "more": False,
        "offset": 0,
    }
    assert len(client.get("/api/search", params={"q": WORD, "limit": 999}).json()["hits"]) == 13


def test_search_needs_the_token_and_refuses_other_origins(anon, client, pstore):
    pstore.history.append(user(f"the {WORD}"))
    assert anon.get("/api/search", params={"q": WORD}).status_code == 401
    r = client.get("/api/search", params={"q": WORD}, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403 and r.json()["error"]["type"] == "CrossOrigin"
    assert client.get("/api/search", params={"q": WORD}, headers={"Origin": ORIGIN}).json()["hits"]
    bad = client.get("/api/search", params={"q": WORD, "offset": "-1"})
    assert bad.status_code == 400 and bad.json()["error"]["hint"] is not None


def test_a_loaded_session_hit_is_located_live_or_in_the_archive(client, pstore):
    """With the default live window (60 entries) a 200-entry session loads its last 60 live:
    entry 150 is live entry 10, entry 20 is in the archive, where ``entry`` shows it."""
    pstore.local.set({"maxHistoryEntries": 5000})
    sid = _long_session(pstore)
    pstore.local.set({"maxHistoryEntries": 60})
    r = client.get("/api/search/locate", params={"session": sid, "index": 150})
    assert r.status_code == 400  # not loaded yet
    assert client.post(f"/api/sessions/{sid}/load").status_code == 200
    at = client.get("/api/search/locate", params={"session": sid, "index": 150}).json()
    assert at == {"live": 10}
    assert pstore.history.read()[10]["content"].startswith("note 150")
    back = client.get("/api/search/locate", params={"session": sid, "index": 20}).json()
    assert set(back) == {"archive"}
    shown = client.get("/api/search/entry", params={"where": "archive", "index": back["archive"]})
    assert shown.json()["entry"]["text"] == "entry 20 of the plan"


def test_entry_shows_an_archived_or_evicted_entry_and_refuses_bad_input(client, pstore):
    pstore.local.set({"maxHistoryEntries": 4, "maxSessions": 1})
    for i in range(8):
        pstore.history.append(user(f"old {i} {WORD}" if i == 1 else f"old {i}"))
    hits = client.get("/api/search", params={"q": WORD}).json()["hits"]
    archived = [h for h in hits if h["where"] == "archive"]
    assert archived, hits
    got = client.get(
        "/api/search/entry", params={"where": "archive", "index": archived[0]["index"]}
    ).json()
    assert got["entry"]["text"] == f"old 1 {WORD}"
    pstore.history.append(user(f"kept live {WORD}"))
    first = pstore.sessions.save("first")["id"]
    pstore.history.clear()
    pstore.history.append(user("second"))
    pstore.sessions.save("second")
    assert pstore.sessions.row(first) is None  # evicted by maxSessions
    evicted = [
        h
        for h in client.get("/api/search", params={"q": WORD}).json()["hits"]
        if h["where"] == "evicted"
    ]
    assert evicted and evicted[0]["sessionId"] == first
    params = {"where": "evicted", "session": first, "index": evicted[0]["index"]}
    assert WORD in client.get("/api/search/entry", params=params).json()["entry"]["text"]
    assert (
        client.get("/api/search/entry", params={"where": "nowhere", "index": 0}).status_code == 400
    )
    missing = {"where": "session", "session": first, "index": 999}
    assert client.get("/api/search/entry", params=missing).status_code == 404
    assert (
        client.get("/api/search/entry", params={"where": "session", "index": 0}).status_code == 400
    )


# -- in the browser ----------------------------------------------------------------------------


def _search(page: Any, q: str) -> None:
    page.click("#open-drawer")
    page.fill("#session-search", q)
    page.wait_for_selector("#message-hits:not([hidden]) .message-hit")


def test_a_message_hit_opens_its_session_scrolled_to_the_entry(make_page, live_server, pstore):
    """The word of entry 150 of a saved 200-entry session: a hit with the word marked under the
    session matches; Enter loads the session (the unsaved conversation is written back) and
    shows entry 150, marked and focused."""
    pstore.local.set({"maxHistoryEntries": 5000, "maxHistoryChars": 50_000_000})
    _long_session(pstore)
    page = make_page(width=1000)
    open_panel(page, live_server)
    _search(page, WORD)
    page.wait_for_selector(".session:has-text('Long trip') .content-match")
    hit = page.locator(".message-hit .hit-open").first
    assert hit.locator(".hit-where").inner_text() == "Long trip"
    assert hit.locator(".hit-role").inner_text() == "You"
    assert hit.locator("mark").inner_text() == WORD
    # the group sits below the session matches
    assert page.evaluate(
        "() => document.getElementById('session-list').compareDocumentPosition("
        "document.getElementById('message-hits')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    hit.focus()
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.getElementById('session-name').textContent === 'Long trip'"
    )
    target = '#messages [data-index="150"]'
    page.wait_for_selector(f"{target}.search-hit")
    assert in_view(page, target)
    assert WORD in page.locator(target).inner_text()
    assert page.evaluate("() => document.activeElement.dataset.index") == "150"
    assert not page.locator("#drawer").evaluate("d => d.open")
    names = sorted(s["name"] for s in pstore.sessions.list())
    assert names == ["Long trip", "an unsaved question about lamps"]  # written back first


def test_a_live_hit_scrolls_the_windowed_list(make_page, live_server, pstore):
    pstore.local.set({"maxHistoryEntries": 5000, "maxHistoryChars": 50_000_000})
    entries = [user(f"live {i}") if i % 2 == 0 else assistant(f"reply {i}") for i in range(300)]
    entries[40] = user(f"the {WORD} sample, early on")
    pstore.history.mutate(lambda _old: entries)
    page = make_page(width=1000)
    open_panel(page, live_server)
    _search(page, WORD)
    assert page.locator(".message-hit .hit-where").inner_text() == "Current conversation"
    page.click(".message-hit .hit-open")
    page.wait_for_selector('#messages [data-index="40"].search-hit')
    assert in_view(page, '#messages [data-index="40"]')


def test_stored_markup_in_a_snippet_is_text(page, live_server, pstore):
    evil = f'<img src=x onerror="window.__xss=1"> {WORD} <script>window.__xss=2</script>'
    pstore.history.append(user(evil))
    open_panel(page, live_server)
    _search(page, WORD)
    snippet = page.locator(".message-hit .hit-snippet")
    assert "<img src=x" in snippet.inner_text() and "<script>" in snippet.inner_text()
    assert page.locator("#message-hits img, #message-hits script").count() == 0
    assert page.evaluate("() => window.__xss") is None


def test_an_archive_hit_opens_read_only_and_gives_the_focus_back(page, live_server, pstore):
    pstore.local.set({"maxHistoryEntries": 4})
    for i in range(10):
        pstore.history.append(user(f"archived {i} {WORD}" if i == 2 else f"line {i}"))
    open_panel(page, live_server)
    _search(page, WORD)
    hit = page.locator(".message-hit .hit-open")
    assert hit.locator(".hit-where").inner_text() == "Archive"
    hit.click()
    page.wait_for_selector("#search-entry[open] .bubble.user")
    assert page.locator("#search-entry .bubble.user").inner_text().startswith(f"archived 2 {WORD}")
    assert page.locator("#search-entry .bubble .edit").count() == 0  # read-only
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.getElementById('search-entry').open")
    assert page.evaluate("() => document.activeElement.classList.contains('hit-open')")
    assert page.locator("#drawer").evaluate("d => d.open")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_drawer_with_hits_is_axe_clean_at_360_px(
    make_page,
    live_server,
    pstore,
    axe_source,  # noqa: F811  (the imported fixture)
    theme,
):
    pstore.local.set({"maxHistoryEntries": 4, "maxSessions": 1})
    long_word = WORD * 6
    pstore.history.append(user(f"a very long word {long_word} in the first"))
    pstore.sessions.save("A session with a rather long name that must wrap somewhere")
    for i in range(12):
        pstore.history.append(user(f"line {i} {WORD}"))
    page = make_page(width=360, theme=theme, height=700)
    open_panel(page, live_server)
    _search(page, WORD)
    page.wait_for_function("() => document.querySelectorAll('.message-hit').length >= 10")
    assert _audit(page, axe_source) == []
    wide = page.evaluate(
        """() => [...document.querySelectorAll('#drawer .message-hit, #drawer .hit-open')]
             .filter(n => n.scrollWidth > n.clientWidth + 1 || n.getBoundingClientRect().right > 361)
             .map(n => n.className)"""
    )
    assert wide == []
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    # ten at a time: "Show more messages" brings the rest and moves the focus to the first of them
    assert page.locator(".message-hit").count() == 10
    page.click("#message-more")
    total = len(pstore.search(WORD, mode="text", limit=50))
    assert total > 10
    page.wait_for_function(f"() => document.querySelectorAll('.message-hit').length === {total}")
    assert page.locator("#message-more").is_hidden()
    assert (
        page.evaluate(
            "() => [...document.querySelectorAll('.hit-open')].indexOf(document.activeElement)"
        )
        == 10
    )
    assert f"{total} messages found" in page.locator("#message-status").text_content()


def test_a_hit_the_live_window_archives_on_load_opens_read_only(page, live_server, pstore):
    """A 200-entry session loads its last 60 entries live (the default window): a hit at entry
    20 loads the session, then shows that entry read-only (it is in the archive now)."""
    pstore.local.set({"maxHistoryEntries": 5000})
    _long_session(pstore, at=20)
    pstore.local.set({"maxHistoryEntries": 60})
    open_panel(page, live_server)
    _search(page, WORD)
    page.click(".message-hit .hit-open")
    page.wait_for_selector("#search-entry[open] .bubble.user")
    assert page.locator("#session-name").inner_text() == "Long trip"
    assert WORD in page.locator("#search-entry .bubble.user").inner_text()
    assert "Long trip" in page.locator("#search-entry .search-entry-where").inner_text()
