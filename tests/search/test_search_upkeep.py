"""The message-search index follows every write path (SPEC §16): append, the live window's
move to the archive, edits, session save/update/load/append, import, eviction and restore,
doctor repair, delete, and the migration that indexes a store written before the index."""

from __future__ import annotations

import io
import sqlite3
from pathlib import Path
from typing import Any

import chatkeep


def _where(store: chatkeep.Store, q: str, where: Any = None) -> list[tuple[str, int]]:
    return sorted((h["where"], h["index"]) for h in store.search(q, mode="text", where=where))


def _live_and_body(store: chatkeep.Store, q: str) -> list[tuple[str, int]]:
    """The hits of ``q`` live, and those in session bodies asked for alone (a search of every
    place shows an entry of the active session once, live)."""
    return _where(store, q, ["live", "archive", "evicted"]) + _where(store, q, "session")


def test_append_is_searchable_at_once(store: chatkeep.Store) -> None:
    """An appended entry is found by the next search, at its live index."""
    store.history.append({"role": "user", "content": "first"})
    store.history.append({"role": "assistant", "content": "a narwhal answer"})
    assert _where(store, "narwhal") == [("live", 1)]


def test_window_moves_rows_to_the_archive(store: chatkeep.Store) -> None:
    """The live window's move keeps the entry found, now in the archive, never twice."""
    store.history.append({"role": "user", "content": "old capybara question"})
    store.local.set("maxHistoryEntries", 1)
    store.history.append({"role": "assistant", "content": "x"})
    store.history.append({"role": "user", "content": "y"})
    assert _where(store, "capybara") == [("archive", 0)]


def test_edit_and_remove_rewrite_the_live_rows(store: chatkeep.Store) -> None:
    """A removed entry leaves the live index; an edit's old turn is found as an earlier
    version in the archive, the new text live."""
    store.history.append({"role": "user", "content": "keep me"})
    store.history.append({"role": "user", "content": "remove the gecko"})
    assert store.history.remove_at(1)
    assert _where(store, "gecko") == []
    store.history.append({"role": "user", "content": "ask about lemurs"})
    store.history.append({"role": "assistant", "content": "lemurs live in Madagascar"})
    store.history.replace_from(1, {"role": "user", "content": "ask about lemurs"})
    store.history.append({"role": "user", "content": "ask about tapirs"})
    assert _where(store, "lemurs") == [("archive", 0), ("archive", 1)]
    assert _where(store, "tapirs") == [("live", 1)]


def test_session_save_update_and_append(store: chatkeep.Store) -> None:
    """A save indexes the body; an update re-indexes what changed (old text gone); an append
    to a saved body is found at its index."""
    store.history.append({"role": "user", "content": "ocelot one"})
    row = store.sessions.save("Cats")
    assert row is not None
    assert _live_and_body(store, "ocelot") == [("live", 0), ("session", 0)]
    store.history.mutate(lambda es: [{"role": "user", "content": "margay two"}])
    store.sessions.update(row["id"])
    assert _where(store, "ocelot") == []
    assert _live_and_body(store, "margay") == [("live", 0), ("session", 0)]
    store.sessions.append(row["id"], {"role": "assistant", "content": "late serval reply"})
    assert _where(store, "serval") == [("session", 1)]


def test_load_brings_the_session_live(store: chatkeep.Store) -> None:
    """Loading a session puts its entries in the live history: indexed live and in the body,
    and a search of every place shows each entry once, live."""
    store.history.append({"role": "user", "content": "the quokka smiles"})
    row = store.sessions.save("Quokka")
    store.sessions.new()
    assert row is not None and _where(store, "quokka") == [("session", 0)]
    store.sessions.load(row["id"])
    assert _live_and_body(store, "quokka") == [("live", 0), ("session", 0)]
    assert _where(store, "quokka") == [("live", 0)]


def test_profile_import_replaces_the_index(spec: Any, tmp_path: Path) -> None:
    """A whole-profile import (``--replace``) indexes what it brings and drops what it
    replaced."""
    with spec.open() as store:
        store.history.append({"role": "user", "content": "exported pangolin"})
        store.sessions.save("P")
        dump = io.StringIO()
        store.export_to(dump)
        store.history.append({"role": "user", "content": "unsaved okapi"})
        store.import_from(io.StringIO(dump.getvalue()), replace=True)
        assert _where(store, "okapi") == []
        assert _live_and_body(store, "pangolin") == [("live", 0), ("session", 0)]


def test_clear_all_and_delete_of_an_evicted_session(store: chatkeep.Store) -> None:
    """Deleting an evicted session and clearing the drawer leave no session hit."""
    store.local.set("maxSessions", 1)
    store.history.append({"role": "user", "content": "axolotl"})
    old = store.sessions.save("a")
    store.sessions.save("b")
    assert old is not None and ("evicted", 0) in _where(store, "axolotl")
    assert store.sessions.delete(old["id"])
    assert _live_and_body(store, "axolotl") == [("live", 0), ("session", 0)]
    store.sessions.clear_all()
    assert _where(store, "axolotl") == [("live", 0)]


def test_doctor_repair_rebuilds_a_dropped_index(tmp_path: Path) -> None:
    """A dropped ``ck_search`` table is re-created by ``doctor --repair`` with every row."""
    db = str(tmp_path / "s.db")
    with chatkeep.open(db) as store:
        store.history.append({"role": "user", "content": "the wombat"})
        store.sessions.save("W")
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_search")
    with chatkeep.open(db) as store:
        store.doctor(repair=True)
        assert _live_and_body(store, "wombat") == [("live", 0), ("session", 0)]


def test_doctor_repair_reindexes_a_profile_it_repairs(store: chatkeep.Store, spec: Any) -> None:
    """Search rows lost behind chatkeep's back come back with a repair that fixes anything."""
    store.history.append({"role": "user", "content": "the dugong"})
    spec.raw_rows("DELETE FROM ck_search WHERE profile=?", (spec.profile,))
    spec.raw_rows("UPDATE ck_history_state SET live_count = 7 WHERE profile=?", (spec.profile,))
    assert _where(store, "dugong") == []
    store.doctor(repair=True)
    assert _where(store, "dugong") == [("live", 0)]


def test_migration_indexes_a_store_written_before_it(sqlite_spec: Any) -> None:
    """A store whose index was never built (as an older chatkeep left it) is indexed when it
    is opened: live, archive and session text all found. (SQLite: on a shared PostgreSQL
    database the re-run migration would index every profile of every other test.)"""
    spec = sqlite_spec
    with spec.open() as store:
        store.local.set("maxHistoryEntries", 1)
        store.history.append({"role": "user", "content": "archived ibex"})
        store.history.append({"role": "user", "content": "live ibex " + "y" * 5000})
        store.sessions.save("Ibex")
    spec.raw_rows("DELETE FROM ck_search WHERE profile=?", (spec.profile,))
    spec.raw_rows("DELETE FROM ck_migrations WHERE name = '0016_search_backfill'")
    with spec.open() as store:
        assert _live_and_body(store, "ibex") == [("archive", 0), ("live", 0), ("session", 0)]


def test_profiles_never_see_each_other(spec: Any) -> None:
    """A search reads its own profile's rows only."""
    with chatkeep.open(spec.url, profile=spec.profile + "_other") as other:
        other.history.append({"role": "user", "content": "secret jackalope"})
        with spec.open() as store:
            assert store.search("jackalope", mode="text") == []
        assert len(other.search("jackalope", mode="text")) == 1
        other.history.clear()


def test_a_loaded_session_longer_than_the_window_is_found_once_per_entry(
    store: chatkeep.Store,
) -> None:
    """A session of six entries loaded into a window of two: its last two entries are found
    live, the four before them in its body (not their copies in the archive), none twice; a
    new turn is found live only, the entry it pushed out of the window in the body; a session
    that is not loaded keeps its hits."""
    store.local.set("maxHistoryEntries", 2)
    body = [{"role": "user", "content": f"tarsier note {i}"} for i in range(6)]
    store.sessions.add_many(
        [
            (
                {"id": "other", "name": "Other", "createdAt": 1},
                [{"role": "user", "content": "tarsier"}],
            ),
            ({"id": "tarsiers", "name": "Tarsiers", "createdAt": 2}, body),
        ]
    )
    store.sessions.load("tarsiers")
    hits = store.search("tarsier", mode="text", limit=50)
    mine = [(h["where"], h["index"]) for h in hits if h["sessionId"] != "other"]
    assert sorted(mine) == [("live", 0), ("live", 1)] + [("session", i) for i in range(4)]
    assert [h["where"] for h in hits if h["sessionId"] == "other"] == ["session"]
    store.history.append({"role": "user", "content": "tarsier follow-up"})
    assert _where(store, "follow") == [("live", 1)]
    assert _where(store, "follow", "session") == []
    hits = store.search("tarsier note", mode="text", limit=50)
    assert sorted(h["index"] for h in hits if h["where"] == "session") == [0, 1, 2, 3, 4]


def test_an_appended_entry_is_indexed_as_its_stored_row_reads(
    store: chatkeep.Store, spec: Any
) -> None:
    """An append (to the live history or to a saved session) indexes the entries it was given;
    a repair indexes the rows as stored (long texts as blob references, strings that begin
    with NUL escaped). Both give the same rows: every character of a 300,000-character
    attachment, the NUL-led text, the role and time."""
    long_text = "intro " + "lorem ipsum " * 25_000 + "the quokka at the end"
    store.history.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "\x00led by a NUL, then an axolotl"},
                {"type": "text", "text": long_text},
            ],
            "createdAt": 1_700_000_000_000,
        }
    )
    store.history.append({"role": "assistant", "content": "\x00a NUL-led okapi reply"})
    sid = store.sessions.save("Extended")["id"]
    store.sessions.extend(
        sid,
        [
            {
                "role": "user",
                "content": [{"type": "text", "text": "\x00NUL-led tapir " + long_text}],
            },
            {"role": "assistant", "content": "a pangolin", "createdAt": 1_700_000_000_001},
        ],
    )
    query = (
        "SELECT place, owner, pos, part, role, created_at, th, body FROM ck_search"
        " WHERE profile=? ORDER BY place, owner, pos, part"
    )
    at_append = spec.raw_rows(query, (spec.profile,))
    assert len(at_append) > 2  # the long text is cut into many chunks
    spec.raw_rows("DELETE FROM ck_search WHERE profile=?", (spec.profile,))
    spec.raw_rows("UPDATE ck_history_state SET live_count = 7 WHERE profile=?", (spec.profile,))
    store.doctor(repair=True)
    assert spec.raw_rows(query, (spec.profile,)) == at_append
    assert _where(store, "quokka") == [("live", 0), ("session", 2)]
    assert _where(store, "axolotl") == [("live", 0)]
    assert _where(store, "okapi") == [("live", 1)]
    assert _where(store, "tapir", "session") == [("session", 2)]
    assert _where(store, "pangolin", "session") == [("session", 3)]
