"""Switching sessions writes the live conversation back first, in the library (SPEC §4.4)."""

from __future__ import annotations

import chatkeep
from factories import assistant, user


def _turns(prefix: str, n: int) -> list[dict]:
    return [user(f"{prefix} q{i}") if i % 2 == 0 else assistant(f"{prefix} a{i}") for i in range(n)]


def _saved(store: chatkeep.Store, name: str, entries: list[dict]) -> str:
    store.history.clear()
    for e in entries:
        store.history.append(e)
    return store.sessions.save(name)["id"]


def test_load_writes_the_loaded_sessions_new_turns_back_into_it(store: chatkeep.Store) -> None:
    """Turns added to a loaded session go back into it when another is loaded, not into the archive."""
    a = _saved(store, "A", _turns("a", 2))
    b = _saved(store, "B", _turns("b", 2))
    assert store.sessions.load(a) == 2
    store.history.append(user("a more"))
    store.history.append(assistant("a more answer"))
    assert store.sessions.load(b) == 2
    assert store.sessions.get(a)["history"] == [
        *_turns("a", 2),
        user("a more"),
        assistant("a more answer"),
    ]
    assert store.history.archived() == []
    assert {r["name"] for r in store.sessions.list()} == {"A", "B"}  # no auto-named copy
    assert store.sessions.active_id() == b


def test_write_back_keeps_a_session_longer_than_the_window_whole(store: chatkeep.Store) -> None:
    """A loaded session longer than the window keeps its first entries and those the window dropped since, on write-back."""
    store.local.set("maxHistoryEntries", 100)
    long = _turns("long", 10)
    a = _saved(store, "A", long)
    b = _saved(store, "B", _turns("b", 2))
    store.local.set("maxHistoryEntries", 4)
    assert store.sessions.load(a) == 4
    assert store.sessions.load(b) == 2  # nothing changed: A stays as it was
    assert store.sessions.get(a)["history"] == long
    assert store.sessions.load(a) == 4
    more = [
        user("new q1"),
        assistant("new a1"),
        user("new q2"),
        assistant("new a2"),
        user("new q3"),
    ]
    for e in more:
        store.history.append(e)  # the window drops older entries to the archive on the way
    assert store.sessions.new()["id"] == a
    assert store.sessions.get(a)["history"] == [*long, *more]
    assert store.history.read() == []
    store.history.append(user("fresh"))  # A is no longer loaded: update writes the live as is
    assert store.sessions.update(a)["id"] == a
    assert store.sessions.get(a)["history"] == [user("fresh")]


def test_write_back_updates_the_loaded_session_and_saves_when_it_was_deleted(
    store: chatkeep.Store,
) -> None:
    """write_back() writes into the loaded session (no copy); when that session was deleted it saves a new one."""
    a = _saved(store, "A", _turns("a", 2))
    store.history.append(user("later"))
    row = store.sessions.write_back()
    assert row["id"] == a and [r["id"] for r in store.sessions.list()] == [a]
    assert store.sessions.get(a)["history"][-1] == user("later")
    store.sessions.delete(a)
    store.history.append(user("after the delete"))
    row = store.sessions.write_back("rescued")
    assert row["id"] != a and row["name"] == "rescued"
    assert store.sessions.get(row["id"])["history"][-1] == user("after the delete")


def test_save_copies_a_loaded_session_whole(store: chatkeep.Store) -> None:
    """save() on a loaded session longer than the window copies the whole session, not only the window."""
    store.local.set("maxHistoryEntries", 100)
    long = _turns("long", 8)
    a = _saved(store, "A", long)
    store.local.set("maxHistoryEntries", 3)
    store.history.clear()
    store.sessions.load(a)
    store.history.append(user("more"))
    copy = store.sessions.save("copy")
    assert store.sessions.get(copy["id"])["history"] == [*long, user("more")]
    assert store.sessions.get(a)["history"] == long


def test_switch_reports_the_write_back_and_never_evicts_its_target(store: chatkeep.Store) -> None:
    """switch() says where the live conversation went; under a full cap the session being loaded stays."""
    store.local.set("maxSessions", 1)
    a = _saved(store, "A", _turns("a", 2))
    store.history.clear()
    store.history.append(user("unsaved work"))
    report = store.sessions.switch(a)
    assert report["count"] == 2 and report["savedBack"]["name"] == "unsaved work"
    assert report["evicted"] == 0
    assert {r["name"] for r in store.sessions.list()} == {"A", "unsaved work"}
    assert store.history.read() == _turns("a", 2)
    assert store.sessions.switch("unknown") is None
