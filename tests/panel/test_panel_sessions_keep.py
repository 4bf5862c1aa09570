"""The panel's drawer keeps whole sessions: Save and load write back through the library."""

from __future__ import annotations

from factories import assistant, user


def _long(prefix: str, n: int) -> list[dict]:
    return [user(f"{prefix} q{i}") if i % 2 == 0 else assistant(f"{prefix} a{i}") for i in range(n)]


def test_save_and_load_keep_a_session_longer_than_the_window(client, pstore):
    """Save and load of a session longer than the live window keep its first entries (no shrink to the window)."""
    pstore.local.set("maxHistoryEntries", 100)
    for e in _long("long", 12):
        pstore.history.append(e)
    long = pstore.sessions.save("Long")
    pstore.history.clear()
    pstore.history.append(user("other"))
    other = pstore.sessions.save("Other")
    pstore.local.set("maxHistoryEntries", 4)
    r = client.post(f"/api/sessions/{long['id']}/load").json()
    assert r["count"] == 4 and r["savedBack"]["id"] == other["id"]
    pstore.history.append(user("one more"))
    assert client.post(f"/api/sessions/{long['id']}/update", json={}).status_code == 200
    client.post(f"/api/sessions/{other['id']}/load")
    body = pstore.sessions.get(long["id"])["history"]
    assert body == [*_long("long", 12), user("one more")]


def test_save_as_new_past_the_cap_moves_the_oldest_to_the_evicted_list(client, pstore):
    """With maxSessions 1, Save as new keeps the older session in the evicted list, not in the drawer listing."""
    pstore.local.set("maxSessions", 1)
    pstore.history.append(user("first"))
    first = client.post("/api/sessions", json={"name": "First"}).json()["session"]
    r = client.post("/api/sessions", json={"name": "Second"}).json()
    assert r["session"]["evicted"] == 1
    assert [s["name"] for s in r["sessions"]] == ["Second"]
    assert [s["id"] for s in pstore.sessions.evicted()] == [first["id"]]
    assert pstore.sessions.get(first["id"])["history"] == [user("first")]
