"""Saved sessions (SPEC §4): light index, bodies, search, every operation, cap and migration."""

from __future__ import annotations

import datetime as dt

import pytest

import chatkeep
from chatkeep import InvalidEntry, InvalidValue
from factories import assistant, attachment, image_entry, png_data_url, user


def _live(store: chatkeep.Store, *texts: str) -> None:
    for i, t in enumerate(texts):
        store.history.append(user(t) if i % 2 == 0 else assistant(t))


def test_save_writes_body_and_light_index(store: chatkeep.Store) -> None:
    """save() stores the verbatim body under session_<id> and a light row without bodies."""
    url = png_data_url(noise=True)
    store.history.append(image_entry("what is this?", url, imagesSeen=True))
    store.history.append(assistant("a red square"))
    row = store.sessions.save("Pictures")
    assert set(row) == {"id", "name", "createdAt", "pinned"}
    assert len(row["id"]) == 32 and row["name"] == "Pictures" and row["pinned"] is False
    index = store.local.get("savedSessions")
    assert index == [{**row, "textDigest": "what is this?\na red square"}]
    assert store.local.get(f"session_{row['id']}") == store.history.read()
    assert store.local.get("activeSessionId") == row["id"]
    assert f"session_{row['id']}" not in chatkeep.GET_ALL_KEYS


def test_save_empty_history_returns_none(store: chatkeep.Store, spec) -> None:
    """save() with an empty live history returns None and writes nothing."""
    before = spec.dump()
    assert store.sessions.save("x") is None
    assert spec.dump() == before


def test_save_name_capped_at_80(store: chatkeep.Store) -> None:
    """A given name keeps its first 80 characters."""
    _live(store, "hi")
    assert store.sessions.save("n" * 100)["name"] == "n" * 80


def test_auto_name_rules(store: chatkeep.Store) -> None:
    """Auto-name: first plain-string user entry that is not an attachment, stripped, 48 chars + '…'."""
    store.history.append(attachment("page body"))
    store.history.append(image_entry("multimodal is skipped", png_data_url()))
    store.history.append(user("   " + "x" * 60 + "  "))
    assert store.sessions.save()["name"] == "x" * 48 + "…"
    store.history.clear()
    store.history.append(user("  short question  "))
    assert store.sessions.save()["name"] == "short question"
    store.history.clear()
    store.history.append(user("兔" * 50))
    assert store.sessions.save()["name"] == "兔" * 48 + "…"


def test_auto_name_falls_back_to_date(store: chatkeep.Store) -> None:
    """With no plain user text the name is today's date."""
    store.history.append(attachment("only a page"))
    store.history.append(assistant("summary"))
    assert store.sessions.save()["name"] == dt.date.today().isoformat()


def test_list_order_pinned_first_newest_first(store: chatkeep.Store) -> None:
    """list() returns pinned rows first, then newest first, as {id, name, createdAt, pinned}."""
    ids = []
    for name in ("old", "mid", "new"):
        _live(store, name)
        ids.append(store.sessions.save(name)["id"])
        store.history.clear()
    store.sessions.pin(ids[0])
    rows = store.sessions.list()
    assert [r["name"] for r in rows] == ["old", "new", "mid"]
    assert set(rows[0]) == {"id", "name", "createdAt", "pinned"}
    assert rows[0]["pinned"] is True


def test_search_name_and_content(store: chatkeep.Store) -> None:
    """A query matches names (contentMatch false) or the text digest (contentMatch true), trimmed and case-insensitive."""
    _live(store, "Tell me about Kyoto temples", "Kinkaku-ji is golden")
    a = store.sessions.save("Travel")
    store.history.clear()
    _live(store, "pasta recipe", "boil water")
    b = store.sessions.save("Kyoto food")
    store.history.clear()
    rows = store.sessions.list("  KYOTO ")
    by_id = {r["id"]: r for r in rows}
    assert by_id[a["id"]]["contentMatch"] is True
    assert by_id[b["id"]]["contentMatch"] is False
    assert [r["id"] for r in store.sessions.list("golden")] == [a["id"]]
    assert store.sessions.list("nothing like this") == []
    assert len(store.sessions.list("   ")) == 2


def test_search_includes_attachments_and_caps_digest(store: chatkeep.Store) -> None:
    """Attachment text is searchable, but only within the first 100,000 digest characters."""
    store.history.append(attachment("needle-early " + "x" * 120_000 + " needle-late"))
    sid = store.sessions.save("doc")["id"]
    assert [r["id"] for r in store.sessions.list("needle-early")] == [sid]
    assert store.sessions.list("needle-late") == []
    assert len(store.local.get("savedSessions")[0]["textDigest"]) == 100_000
    assert store.sessions.get(sid)["history"][0]["content"].endswith("needle-late")


def test_update_writes_back_keeping_row(store: chatkeep.Store) -> None:
    """update(id) writes the live history into the session; name, pin, createdAt and position kept."""
    _live(store, "first")
    a = store.sessions.save("A")
    _live(store, "x")
    store.sessions.save("B")
    store.sessions.pin(a["id"])
    store.history.append(user("more"))
    row = store.sessions.update(a["id"])
    assert row == {**a, "pinned": True}
    assert store.sessions.get(a["id"])["history"] == store.history.read()
    assert [r["name"] for r in store.local.get("savedSessions")] == ["A", "B"]
    with pytest.raises(chatkeep.InvalidValue):
        store.sessions.update("")  # not an id (the one id rule)
    assert store.sessions.update("unknown") is None
    store.history.clear()
    assert store.sessions.update(a["id"]) is None


def test_append_to_snapshot(store: chatkeep.Store) -> None:
    """append(id, entry) adds one entry to a saved body (a reply that finished after a switch)."""
    _live(store, "question")
    sid = store.sessions.save()["id"]
    store.history.clear()
    assert store.sessions.append(sid, assistant("late answer"))["id"] == sid
    assert store.sessions.get(sid)["history"] == [user("question"), assistant("late answer")]
    assert store.history.read() == []
    assert store.sessions.append("unknown", assistant("x")) is None
    with pytest.raises(InvalidEntry):
        store.sessions.append(sid, {"role": "robot", "content": "x"})
    assert "late answer" in store.local.get("savedSessions")[0]["textDigest"]


def test_get_and_load(store: chatkeep.Store) -> None:
    """get(id) returns the row with its history; load(id) replaces the live history and sets activeSessionId."""
    url = png_data_url(noise=True)
    store.history.append(image_entry("saved", url, imagesSeen=True))
    sid = store.sessions.save("S")["id"]
    store.history.clear()
    store.history.append(user("current"))
    got = store.sessions.get(sid)
    assert set(got) == {"id", "name", "createdAt", "pinned", "history"}
    assert store.sessions.load(sid) == 1
    assert store.history.read() == got["history"]
    assert store.local.get("activeSessionId") == sid
    assert store.sessions.get("nope") is None


def test_load_unknown_leaves_live_untouched(store: chatkeep.Store, spec) -> None:
    """load(unknown) returns -1 and changes nothing."""
    store.history.append(user("keep me"))
    before = spec.dump()
    assert store.sessions.load("unknown") == -1
    assert spec.dump() == before


def test_load_goes_through_the_window(store: chatkeep.Store) -> None:
    """Loading a body longer than the window keeps the window and archives the rest."""
    store.local.set("maxHistoryEntries", 100)
    _live(store, *[f"m{i}" for i in range(10)])
    sid = store.sessions.save()["id"]
    store.history.clear()
    store.local.set("maxHistoryEntries", 4)
    assert store.sessions.load(sid) == 4
    assert [e["content"] for e in store.history.read()] == ["m6", "m7", "m8", "m9"]
    assert len(store.sessions.get(sid)["history"]) == 10


def test_rename_pin_touch_only_the_index(store: chatkeep.Store, spec) -> None:
    """rename and pin change the index row only; bodies stay byte-identical."""
    _live(store, "x")
    sid = store.sessions.save("old")["id"]
    body_before = [r for r in spec.dump()["ck_kv"] if r[1] == f"session_{sid}"]
    assert store.sessions.rename(sid, "new name") is True
    assert store.sessions.pin(sid) is True
    assert store.sessions.list()[0] | {} == {
        **store.sessions.list()[0],
        "name": "new name",
        "pinned": True,
    }
    assert store.sessions.pin(sid, False) is True
    assert store.sessions.list()[0]["pinned"] is False
    assert [r for r in spec.dump()["ck_kv"] if r[1] == f"session_{sid}"] == body_before
    assert store.sessions.rename("unknown", "x") is False
    with pytest.raises(InvalidValue):
        store.sessions.rename(sid, "   ")


def test_delete_and_clear_all_remove_bodies(store: chatkeep.Store) -> None:
    """delete removes the row and its body; clear_all removes every row and body."""
    ids = []
    for t in ("a", "b", "c"):
        _live(store, t)
        ids.append(store.sessions.save()["id"])
        store.history.clear()
    assert store.sessions.delete(ids[0]) is True
    assert store.sessions.delete(ids[0]) is False
    assert store.local.get(f"session_{ids[0]}") is None
    assert store.sessions.clear_all() == 2
    assert store.local.keys("session_") == []
    assert store.sessions.list() == []


def test_new_saves_then_clears(store: chatkeep.Store) -> None:
    """new() saves a fresh session (or writes back to the active one) and clears the live history."""
    assert store.sessions.new() is None
    _live(store, "topic one")
    first = store.sessions.new()
    assert first["name"] == "topic one"
    assert store.history.read() == []
    assert store.local.get("activeSessionId") == ""
    store.sessions.load(first["id"])
    store.history.append(assistant("continued"))
    again = store.sessions.new()
    assert again["id"] == first["id"]
    assert len(store.sessions.list()) == 1
    assert store.sessions.get(first["id"])["history"][-1] == assistant("continued")


def test_max_sessions_cap_evicts_oldest_unpinned(store: chatkeep.Store) -> None:
    """With maxSessions > 0 the oldest unpinned sessions leave the drawer for the evicted list, bodies kept; pins never."""
    store.local.set("maxSessions", 2)
    ids = []
    for t in ("s0", "s1", "s2", "s3"):
        _live(store, t)
        ids.append(store.sessions.save(t)["id"])
        store.history.clear()
        if t == "s0":
            store.sessions.pin(ids[0])
    names = sorted(r["name"] for r in store.sessions.list())
    assert names == ["s0", "s3"]
    assert store.local.get(f"session_{ids[1]}") == [user("s1")]
    assert sorted(r["name"] for r in store.sessions.evicted()) == ["s1", "s2"]
    store.sessions.pin(ids[3])
    _live(store, "s4")
    store.sessions.save("s4")
    assert sorted(r["name"] for r in store.sessions.list()) == ["s0", "s3", "s4"]


def test_unlimited_by_default(store: chatkeep.Store) -> None:
    """maxSessions 0 keeps every session."""
    for i in range(55):
        store.history.clear()
        store.history.append(user(f"q{i}"))
        store.sessions.save()
    assert len(store.sessions.list()) == 55


def _legacy(n: int) -> list[dict]:
    return [
        {
            "id": f"legacy{i}",
            "name": f"Legacy {i}",
            "createdAt": 1_700_000_000_000 + i,
            "pinned": i == 0,
            "extra": {"kept": i},
            "history": [user(f"legacy question {i}"), assistant(f"legacy answer {i}")],
        }
        for i in range(n)
    ]


def test_legacy_index_migrates_in_place(store: chatkeep.Store) -> None:
    """index() turns embedded histories into session_<id> bodies and a light index, other fields kept."""
    legacy = _legacy(3)
    store.local.set("savedSessions", legacy)
    rows = store.sessions.index()
    assert [r["id"] for r in rows] == ["legacy0", "legacy1", "legacy2"]
    stored = store.local.get("savedSessions")
    assert all("history" not in r for r in stored)
    assert stored[1]["extra"] == {"kept": 1}
    assert stored[1]["textDigest"] == "legacy question 1\nlegacy answer 1"
    for r in legacy:
        assert store.local.get(f"session_{r['id']}") == r["history"]
    assert store.sessions.list("answer 2")[0]["contentMatch"] is True


def test_migration_idempotent(store: chatkeep.Store, spec) -> None:
    """A second index() call changes nothing."""
    store.local.set("savedSessions", _legacy(2))
    store.sessions.index()
    before = spec.dump()
    store.sessions.index()
    assert spec.dump() == before


def test_interrupted_migration_is_repaired(store: chatkeep.Store) -> None:
    """Bodies written but the legacy index still in place (a crash between the two steps) → the next index() finishes."""
    legacy = _legacy(2)
    store.local.set({"savedSessions": legacy, "session_legacy0": legacy[0]["history"]})
    assert store.local.get("savedSessions") == legacy
    store.sessions.index()
    assert all("history" not in r for r in store.local.get("savedSessions"))
    assert store.sessions.get("legacy1")["history"] == legacy[1]["history"]


def test_every_session_function_migrates_first(store: chatkeep.Store) -> None:
    """list/get/load work straight on a legacy index."""
    store.local.set("savedSessions", _legacy(2))
    assert store.sessions.get("legacy1")["history"][0] == user("legacy question 1")
    assert store.sessions.load("legacy0") == 2
    assert store.history.read()[0] == user("legacy question 0")


def test_corrupt_index_reads_empty(store: chatkeep.Store) -> None:
    """A savedSessions value of the wrong type reads as an empty drawer and is reported."""
    store.local.set("savedSessions", "garbage")
    assert store.sessions.list() == []
    assert "savedSessions" in store.stats()["corruptKeys"]
    _live(store, "fresh")
    assert store.sessions.save("ok")["name"] == "ok"


def test_digests_live_outside_the_index_row(store: chatkeep.Store, spec) -> None:
    """The savedSessions row holds no digests; reading the key puts them back; dropped rows lose theirs."""
    _live(store, "alpha question", "alpha answer")
    a = store.sessions.save("A")
    store.history.clear()
    _live(store, "beta question")
    b = store.sessions.save("B")
    raw = [r for r in spec.dump()["ck_kv"] if r[1] == "savedSessions"][0][2]
    assert "textDigest" not in raw and "alpha" not in raw
    # SQLite keeps digests beside an FTS5 trigram index, PostgreSQL in a table with pg_trgm
    table = "ck_session_text" if spec.kind == "sqlite" else "ck_session_digest"
    digests = dict(
        spec.raw_rows(f"SELECT id, digest FROM {table} WHERE profile=?", (spec.profile,))
    )
    assert digests == {a["id"]: "alpha question\nalpha answer", b["id"]: "beta question"}
    index = store.local.get("savedSessions")
    assert [r["textDigest"] for r in index] == ["alpha question\nalpha answer", "beta question"]
    store.local.set("savedSessions", [index[1]])
    assert [r["id"] for r in store.sessions.list("question")] == [b["id"]]
    assert spec.raw_rows(f"SELECT id FROM {table} WHERE profile=?", (spec.profile,)) == [(b["id"],)]


def test_long_texts_are_stored_once(store: chatkeep.Store, spec) -> None:
    """A long attachment in the live history and in two saved sessions is one blob, not three copies."""
    page = attachment("a long page " * 3000)
    store.history.append(page)
    store.sessions.save("one")
    store.sessions.save("two")
    blobs = spec.dump()["ck_blobs"]
    assert len(blobs) == 1
    assert all(len(r[2]) < 1000 for r in spec.dump()["ck_kv"] if r[1].startswith("session_"))
    assert store.sessions.get(store.sessions.list()[0]["id"])["history"] == [page]
    store.local.set("systemPrompt", "p" * 10_000)  # get_all() keys never go to blobs
    assert len(spec.dump()["ck_blobs"]) == 1
    assert store.get_all()["systemPrompt"] == "p" * 10_000


def test_search_treats_like_wildcards_literally(store: chatkeep.Store) -> None:
    """'%', '_' and one-letter queries are plain substrings, not patterns."""
    _live(store, "progress: 100% done_now")
    a = store.sessions.save("A")
    store.history.clear()
    _live(store, "nothing special here")
    store.sessions.save("B")
    assert [r["id"] for r in store.sessions.list("100%")] == [a["id"]]
    assert [r["id"] for r in store.sessions.list("e_n")] == [a["id"]]
    assert store.sessions.list("%") == [{**a, "contentMatch": True}]
    assert len(store.sessions.list("o")) == 2


def test_load_saves_an_unsaved_live_conversation(store: chatkeep.Store) -> None:
    """Loading over a conversation that was never saved saves it as a new auto-named session first, not in the archive."""
    _live(store, "saved topic")
    sid = store.sessions.save("S")["id"]
    store.history.clear()
    _live(store, "unsaved thought", "unsaved answer")
    assert store.sessions.load(sid) == 1
    assert store.history.archived() == []
    names = {r["name"]: r["id"] for r in store.sessions.list()}
    assert set(names) == {"S", "unsaved thought"}
    assert store.sessions.get(names["unsaved thought"])["history"] == [
        user("unsaved thought"),
        assistant("unsaved answer"),
    ]
    assert store.sessions.load(sid) == 1  # the live history is the loaded session: no copy
    assert len(store.sessions.list()) == 2 and store.history.archived() == []


def test_modify_rewrites_one_body_under_the_lock(store: chatkeep.Store, spec) -> None:
    """modify(id, fn) writes fn's body and its digest; None, unknown ids and invalid bodies write nothing."""
    _live(store, "first")
    sid = store.sessions.save()["id"]
    assert store.sessions.modify(sid, lambda body: [*body, assistant("added later")])["id"] == sid
    assert store.sessions.get(sid)["history"][-1] == assistant("added later")
    assert [r["id"] for r in store.sessions.list("added later")] == [sid]
    before = spec.dump()
    assert store.sessions.modify(sid, lambda body: None) is None
    assert store.sessions.modify("unknown", lambda body: body) is None
    with pytest.raises(InvalidEntry):
        store.sessions.modify(sid, lambda body: [*body, {"role": "robot", "content": "x"}])
    assert spec.dump() == before
