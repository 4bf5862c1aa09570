"""The evicted list (SPEC §4.4): the maxSessions cap moves sessions out of the drawer, never away."""

from __future__ import annotations

import pytest

import chatkeep
from chatkeep import NotFound
from factories import assistant, image_entry, png_data_url, user


def _save(store: chatkeep.Store, text: str) -> str:
    store.history.clear()
    store.history.append(user(text))
    store.history.append(assistant(f"answer to {text}"))
    return store.sessions.save(text)["id"]


def test_eviction_keeps_the_body_and_lists_the_session(store: chatkeep.Store) -> None:
    """A save over maxSessions moves the oldest unpinned session to sessions.evicted(); its body stays readable."""
    store.local.set("maxSessions", 1)
    url = png_data_url(noise=True)
    store.history.append(image_entry("the photo", url))
    first = store.sessions.save("first")["id"]
    store.history.clear()
    store.history.append(user("second"))
    row = store.sessions.save("second")
    assert row["evicted"] == 1
    assert [r["name"] for r in store.sessions.list()] == ["second"]
    gone = store.sessions.evicted()
    assert [(r["id"], r["name"]) for r in gone] == [(first, "first")]
    assert set(gone[0]) == {"id", "name", "createdAt", "pinned", "evictedAt"}
    got = store.sessions.get(first)
    assert got["history"] == [image_entry("the photo", url)]
    assert store.sessions.list("photo") == []  # the drawer's search never shows it
    assert store.sessions.list(limit=5, offset=0) == store.sessions.list()


def test_restore_comes_back_on_top_and_the_cap_moves_the_next_oldest(
    store: chatkeep.Store,
) -> None:
    """restore(id) brings a session back as the newest; a full cap evicts the next oldest unpinned, never it."""
    store.local.set("maxSessions", 2)
    a, b, c = (_save(store, t) for t in ("a", "b", "c"))
    assert [r["id"] for r in store.sessions.evicted()] == [a]
    created = store.sessions.get(a)["createdAt"]
    row = store.sessions.restore(a)
    assert row["id"] == a and row["evicted"] == 1 and row["createdAt"] >= created
    assert [r["id"] for r in store.sessions.list()] == [a, c]
    assert [r["id"] for r in store.sessions.evicted()] == [b]
    assert store.sessions.get(a)["history"] == [user("a"), assistant("answer to a")]
    assert [r["id"] for r in store.sessions.list("answer to a")] == [a]  # searchable again
    assert store.sessions.restore(a) is None  # not evicted (any more)
    assert store.sessions.restore("unknown") is None


def test_pinned_and_loaded_sessions_are_never_evicted(store: chatkeep.Store) -> None:
    """The cap skips pinned sessions and the loaded one; a restore never evicts the session it restores."""
    store.local.set("maxSessions", 1)
    a = _save(store, "a")
    store.sessions.pin(a)
    b = _save(store, "b")
    assert {r["id"] for r in store.sessions.list()} == {a, b}
    assert store.sessions.evicted() == []
    c = _save(store, "c")
    assert [r["id"] for r in store.sessions.evicted()] == [b]
    assert store.sessions.restore(b)["id"] == b  # c is loaded: it stays too
    assert {r["id"] for r in store.sessions.list()} == {a, b, c}


def test_delete_destroys_an_evicted_session_and_clear_all_keeps_them(
    store: chatkeep.Store,
) -> None:
    """delete(id) works on an evicted id (named by the user); clear_all empties only the drawer."""
    store.local.set("maxSessions", 1)
    a, b, c = (_save(store, t) for t in ("a", "b", "c"))
    assert store.sessions.delete(a) is True
    assert store.sessions.get(a) is None and store.local.get(f"session_{a}") is None
    assert [r["id"] for r in store.sessions.evicted()] == [b]
    assert store.sessions.clear_all() == 1
    assert store.sessions.list() == []
    assert store.sessions.get(b)["history"] == [user("b"), assistant("answer to b")]
    assert store.local.keys("session_") == [f"session_{b}"]
    assert c not in {r["id"] for r in store.sessions.evicted()}


def test_resolve_says_where_an_evicted_id_went(store: chatkeep.Store) -> None:
    """resolve() finds evicted ids by prefix when asked, and otherwise says the session left the drawer."""
    store.local.set("maxSessions", 1)
    a = _save(store, "a")
    _save(store, "b")
    assert store.sessions.resolve(a[:6], evicted=True) == a
    assert store.sessions.resolve(a[:6], evicted=None) == a
    with pytest.raises(NotFound) as err:
        store.sessions.resolve(a[:6])
    assert "evicted" in err.value.message and "restore" in (err.value.hint or "")


def test_evicted_sessions_round_trip_export_stats_and_doctor(store: chatkeep.Store, spec) -> None:
    """Evicted sessions are exported and re-imported, counted by stats, and checked by doctor."""
    store.local.set("maxSessions", 1)
    a = _save(store, "a")
    _save(store, "b")
    stats = store.stats()
    assert stats["sessions"] == 1 and stats["evictedSessions"] == 1
    assert store.doctor()["healthy"] is True
    doc = store.export_data()
    assert f"evicted_{a}" in doc["local"] and f"session_{a}" in doc["local"]
    with chatkeep.open(spec.url, profile=spec.profile + "_copy") as other:
        other.import_data(doc)
        assert other.export_data() == doc
        assert [r["id"] for r in other.sessions.evicted()] == [a]
        assert other.sessions.restore(a)["id"] == a
        assert other.sessions.get(a)["history"] == [user("a"), assistant("answer to a")]
    store.local.remove(f"session_{a}")
    report = store.doctor()
    assert [(p["kind"], p["where"]) for p in report["problems"]] == [
        ("missing-body", f"evicted_{a}")
    ]
    assert store.doctor(repair=True)["healthy"] is True
    assert store.sessions.get(a)["history"] == []
