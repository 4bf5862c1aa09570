"""Sessions drawer, settings round-trip, provider cards and the request preview."""

from __future__ import annotations

import pytest

from factories import assistant, attachment, image_entry, png_data_url, user


def _seed(pstore, *entries):
    for e in entries:
        pstore.history.append(e)


def test_drawer_save_list_and_search_marks(client, pstore):
    """Saved sessions list newest first; search says whether the match is in the content."""
    _seed(pstore, user("Planning the Lisbon trip"), assistant("Book the tram tickets early."))
    assert client.post("/api/sessions", json={"name": "Travel"}).status_code == 200
    pstore.history.clear()
    _seed(pstore, user("Fix the tram timetable parser"), assistant("Use a regex."))
    client.post("/api/sessions", json={"name": "Code"})
    rows = client.get("/api/sessions").json()["sessions"]
    assert [r["name"] for r in rows] == ["Code", "Travel"]
    by_name = client.get("/api/sessions", params={"q": "trav"}).json()["sessions"]
    assert [(r["name"], r["contentMatch"]) for r in by_name] == [("Travel", False)]
    by_body = client.get("/api/sessions", params={"q": "TRAM"}).json()["sessions"]
    assert sorted((r["name"], r["contentMatch"]) for r in by_body) == [
        ("Code", True),
        ("Travel", True),
    ]
    assert client.get("/api/sessions", params={"q": "nowhere"}).json()["sessions"] == []


def test_drawer_listing_reads_no_session_body(client, pstore, monkeypatch):
    """Listing the drawer never reads a session body."""
    _seed(pstore, user("hello"))
    pstore.sessions.save("one")

    def boom(*a, **k):
        raise AssertionError("session body read")

    monkeypatch.setattr(pstore.sessions, "get", boom)
    assert client.get("/api/sessions", params={"q": "hel"}).status_code == 200


def test_drawer_pin_rename_load_delete(client, pstore):
    """Pin puts a session first, rename changes its name, load restores it, delete removes it."""
    _seed(pstore, user("alpha question"), assistant("alpha answer"))
    a = client.post("/api/sessions", json={"name": "A"}).json()["session"]
    pstore.history.clear()
    _seed(pstore, user("beta question"))
    b = client.post("/api/sessions", json={"name": "B"}).json()["session"]
    r = client.patch(f"/api/sessions/{a['id']}", json={"pinned": True})
    assert [(s["name"], s["pinned"]) for s in r.json()["sessions"]] == [("A", True), ("B", False)]
    r = client.patch(f"/api/sessions/{b['id']}", json={"name": "Beta renamed"})
    assert "Beta renamed" in [s["name"] for s in r.json()["sessions"]]
    r = client.post(f"/api/sessions/{a['id']}/load")
    assert r.status_code == 200 and r.json()["count"] == 2
    assert [v["text"] for v in r.json()["history"]] == ["alpha question", "alpha answer"]
    assert r.json()["activeSessionId"] == a["id"]
    r = client.delete(f"/api/sessions/{b['id']}")
    assert [s["name"] for s in r.json()["sessions"]] == ["A"]
    assert pstore.sessions.get(b["id"]) is None


def test_drawer_new_session_saves_and_clears(client, pstore):
    """New session saves the live conversation and starts an empty one."""
    _seed(pstore, user("remember this"), assistant("ok"))
    r = client.post("/api/sessions/new")
    assert r.status_code == 200
    body = r.json()
    assert body["history"] == [] and pstore.history.read() == []
    assert body["session"]["name"] == "remember this"
    assert [s["name"] for s in body["sessions"]] == ["remember this"]


@pytest.mark.parametrize(
    "method,path,body",
    [
        ("post", "/api/sessions/nope/load", None),
        ("patch", "/api/sessions/nope", {"name": "x"}),
        ("delete", "/api/sessions/nope", None),
    ],
)
def test_unknown_session_is_404(client, method, path, body):
    """Load, rename and delete of an unknown session answer 404 JSON."""
    kwargs = {"json": body} if body is not None else {}
    r = getattr(client, method)(path, **kwargs)
    assert r.status_code == 404 and r.json()["error"]["type"] == "NotFound"


def test_bad_session_edits_are_400(client, pstore):
    """Empty names, non-boolean pins and empty edits are refused."""
    _seed(pstore, user("x"))
    sid = pstore.sessions.save("keep")["id"]
    for body in ({"name": "  "}, {"pinned": "yes"}, {}):
        assert client.patch(f"/api/sessions/{sid}", json=body).status_code == 400
    assert [s["name"] for s in pstore.sessions.list()] == ["keep"]


def test_settings_round_trip(client, pstore):
    """Settings written by the panel are stored and read back by get_all()."""
    changes = {
        "systemPrompt": "Be terse.",
        "replyLanguage": "French",
        "fontSize": 18,
        "sendShortcut": "Ctrl+Enter",
        "thoughtAutoCollapse": False,
        "maxSessions": 20,
    }
    r = client.put("/api/settings", json=changes)
    assert r.status_code == 200
    for k, v in changes.items():
        assert r.json()[k] == v
        assert pstore.get_all()[k] == v
    assert client.get("/api/settings").json()["fontSize"] == 18


@pytest.mark.parametrize(
    "changes",
    [
        {"fontSize": 3},
        {"fontSize": "18"},
        {"sendShortcut": "Alt+S"},
        {"thoughtAutoCollapse": 1},
        {"maxHistoryEntries": 0},
        {"history": []},
        {"savedSessions": []},
        {"providers": {}},
        {"activeProvider": "ghost"},
        {"systemPrompt": "ok", "fontSize": 99},
    ],
)
def test_bad_settings_are_400_and_nothing_is_written(client, pstore, changes):
    """Any invalid value refuses the whole batch with 400; nothing is written."""
    before = pstore.get_all()
    r = client.put("/api/settings", json=changes)
    assert r.status_code == 400
    assert r.json()["error"]["hint"]
    assert pstore.get_all() == before


def test_provider_card_hides_its_key_and_keeps_it(client, pstore):
    """A stored apiKey never comes back; saving the card without a key keeps the stored one."""
    card = {
        "style": "chat",
        "baseUrl": "http://127.0.0.1:9/v1",
        "model": "m1",
        "apiKey": "sk-SECRET",
    }
    r = client.put("/api/providers/local?activate=1", json=card)
    assert r.status_code == 200
    assert "sk-SECRET" not in r.text
    assert r.json()["providers"]["local"]["hasApiKey"] is True
    assert r.json()["activeProvider"] == "local"
    assert "sk-SECRET" not in client.get("/api/state").text
    r = client.put(
        "/api/providers/local",
        json={**{k: v for k, v in card.items() if k != "apiKey"}, "model": "m2"},
    )
    stored = pstore.local.get("providers")["local"]
    assert stored["model"] == "m2" and stored["apiKey"] == "sk-SECRET"
    client.put("/api/providers/local", json={**card, "apiKey": ""})
    assert "apiKey" not in pstore.local.get("providers")["local"]


def test_bad_provider_card_is_400(client, pstore):
    """A card that validate_card refuses is a 400 naming the field; nothing is stored."""
    r = client.put("/api/providers/x", json={"style": "chat", "baseUrl": "ftp://x", "model": "m"})
    assert r.status_code == 400 and "baseUrl" in r.json()["error"]["message"]
    assert pstore.local.get("providers") is None


def test_delete_provider_unselects_it(client, pstore):
    """Deleting the active card removes it and clears the selection; unknown cards are 404."""
    card = {"style": "chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}
    client.put("/api/providers/a?activate=1", json=card)
    r = client.delete("/api/providers/a")
    assert r.status_code == 200
    assert r.json()["providers"] == {} and r.json()["activeProvider"] == ""
    assert client.delete("/api/providers/a").status_code == 404


def test_request_preview_shows_savings_and_prefix(client, pstore, provider_server):
    """The preview reports sizes, labels seen images, saves bytes vs naive and reuses a prefix."""
    from panel_helpers import use_provider

    use_provider(pstore, provider_server)
    pics = [png_data_url(200, 200, noise=True) for _ in range(2)]
    _seed(
        pstore,
        attachment("long page text. " * 1000, title="Big page"),
        image_entry("compare these", *pics, imagesSeen=True),
        assistant("They differ."),
        user("and now?"),
        assistant("Still different."),
        user("one more"),
        assistant("ok"),
        user("last"),
        assistant("done"),
    )
    p = client.get("/api/preview", params={"draft": "next question"}).json()
    assert p["provider"] == {"name": "loop", "style": "chat", "model": "loop-model"}
    assert p["request"]["images"] == 0 and p["naive"]["images"] == 2
    assert p["savings"]["bytes"] > 0 and 0 < p["savings"]["ratio"] < 1
    assert p["savings"]["images"] == 2
    assert p["prefix"]["hasPrevious"] is True and p["prefix"]["bytes"] > 0
    assert p["messages"][-1] == {"role": "user", "chars": 13, "images": 0, "text": "next question"}
    assert "base64" not in client.get("/api/preview").text
    assert provider_server.requests == []  # nothing was sent


def test_request_preview_without_provider_explains(client, pstore):
    """Without a usable card the preview still shows sizes and says why, with the hint."""
    _seed(pstore, user("hello"))
    p = client.get("/api/preview").json()
    assert p["provider"] is None
    assert p["problem"]["message"] and p["problem"]["hint"]
    assert p["request"]["bytes"] > 0


def test_stats_endpoint(client, pstore):
    """/api/stats is store.stats()."""
    _seed(pstore, user("a"), assistant("b"))
    s = client.get("/api/stats").json()
    assert s["entries"] == 2 and s["backend"] == "sqlite"


def test_settable_keys_are_exactly_get_all_keys_but_providers():
    """The settings endpoint can change every get_all() key except providers, and no other."""
    import chatkeep
    from chatkeep.panel.routes.settings import RULES

    assert set(RULES) == set(chatkeep.GET_ALL_KEYS) - {"providers"}


def test_drawer_listing_comes_in_pages(client, pstore):
    """GET /api/sessions answers one page (DRAWER_PAGE rows) and says whether more follow."""
    import chatkeep

    page = chatkeep.DRAWER_PAGE
    pstore.sessions.add_many(
        ({"id": f"{i:06x}", "name": f"talk {i}", "createdAt": 1_000 + i}, [user(f"tram {i}")])
        for i in range(page + 7)
    )
    first = client.get("/api/sessions").json()
    assert len(first["sessions"]) == page and first["more"] is True and first["offset"] == 0
    rest = client.get("/api/sessions", params={"offset": page}).json()
    assert len(rest["sessions"]) == 7 and rest["more"] is False
    ids = [r["id"] for r in first["sessions"] + rest["sessions"]]
    assert ids == [r["id"] for r in pstore.sessions.list()]
    found = client.get("/api/sessions", params={"q": "tram", "limit": 5, "offset": 2}).json()
    assert [r["id"] for r in found["sessions"]] == ids[2:7] and found["more"] is True
    assert client.get("/api/sessions", params={"offset": "-1"}).status_code == 400
