"""SQLite's trigram index written behind the rows (migration 0018): what FTS5 does not hold
yet is still found, what it holds stays exact through deletes, flushes and repairs, and the
doctor finds nothing missing."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import chatkeep
from chatkeep.storage.search_tail import FLUSH_ROWS, HASH_BYTES, flush


def _fts_ids(db: str, word: str) -> list[int]:
    with sqlite3.connect(db) as con:
        return [
            r[0]
            for r in con.execute(
                "SELECT rowid FROM ck_search_fts WHERE ck_search_fts MATCH ? ORDER BY rowid",
                (f'"{word}"',),
            )
        ]


def _mark(db: str) -> tuple[int, int]:
    with sqlite3.connect(db) as con:
        upto = con.execute("SELECT upto FROM ck_search_mark").fetchone()[0]
        top = con.execute("SELECT max(rid) FROM ck_search").fetchone()[0]
    return int(upto), int(top or 0)


def test_tail_is_found_then_flushed_into_fts(tmp_path: Path) -> None:
    """Rows above the mark are found by a search before FTS5 holds them; once the tail is
    long enough, one write puts it all into FTS5 and the mark follows."""
    db = str(tmp_path / "s.db")
    with chatkeep.open(db) as store:
        store.history.append({"role": "user", "content": "a pangolin early"})
        upto, top = _mark(db)
        assert top > upto  # written behind: not in FTS5 yet
        assert _fts_ids(db, "pangolin") == []
        assert [h["index"] for h in store.search("pangolin", mode="text")] == [0]
        assert [h["index"] for h in store.search("ngoli", mode="text")] == [0]
        for i in range(FLUSH_ROWS):
            store.history.append({"role": "user", "content": f"filler {i}"})
        upto, top = _mark(db)
        assert top - upto < FLUSH_ROWS  # the tail went in
        assert len(_fts_ids(db, "pangolin")) == 1
        assert [h["index"] for h in store.search("pangolin", mode="text")] == [0]


def test_deletes_above_and_below_the_mark_keep_fts_exact(tmp_path: Path) -> None:
    """Removing a row FTS5 holds and one it does not yet: neither is found, and FTS5's own
    integrity check passes (it was told exactly of what it holds)."""
    db = str(tmp_path / "s.db")
    with chatkeep.open(db) as store:
        store.local.set("maxHistoryEntries", 1000)  # every row stays live
        store.history.append({"role": "user", "content": "old axolotl"})
        for i in range(FLUSH_ROWS):
            store.history.append({"role": "user", "content": f"filler {i}"})
        store.history.append({"role": "user", "content": "new axolotl"})
        assert len(store.search("axolotl", mode="text")) == 2
        assert store.history.remove_at(FLUSH_ROWS + 1)  # in the tail
        assert store.history.remove_at(0)  # in FTS5
        assert store.search("axolotl", mode="text") == []
        store.history.append({"role": "user", "content": "axolotl again"})
        assert [h["snippet"] for h in store.search("axolotl", mode="text")] == [
            "<mark>axolotl</mark> again"
        ]
        assert _fts_ids(db, "axolotl") == []  # the new row is in the tail
        with store._backend.transaction(store.profile):
            flush(store._backend, least=1)  # FTS5 then holds every row there is
    assert _mark(db)[0] == _mark(db)[1]
    assert len(_fts_ids(db, "axolotl")) == 1
    with sqlite3.connect(db) as con:  # FTS5 against its content, row by row
        con.execute("INSERT INTO ck_search_fts (ck_search_fts, rank) VALUES ('integrity-check', 1)")


def test_import_writes_its_rows_into_fts_at_its_end(tmp_path: Path) -> None:
    """A multi-session import leaves no tail: its rows went into FTS5 together."""
    db = str(tmp_path / "s.db")
    with chatkeep.open(db) as store:
        store.sessions.add_many(
            ({"id": f"s{i}", "name": f"S{i}"}, [{"role": "user", "content": f"quetzal {i}"}])
            for i in range(FLUSH_ROWS + 5)
        )
        upto, top = _mark(db)
        assert upto == top
        assert len(_fts_ids(db, "quetzal")) == FLUSH_ROWS + 5
        assert len(store.search("quetzal", mode="text", limit=500)) == FLUSH_ROWS + 5


def test_fts5_keeps_more_in_memory_and_an_import_is_indexed_whole(tmp_path: Path) -> None:
    """FTS5 holds up to :data:`HASH_BYTES` of pending index in memory (migration 0023); a
    large import is found whole, by FTS5 and by the search."""
    db = str(tmp_path / "s.db")
    with chatkeep.open(db) as store:
        with sqlite3.connect(db) as con:
            got = con.execute("SELECT v FROM ck_search_fts_config WHERE k = 'hashsize'")
            assert got.fetchone()[0] == HASH_BYTES
        words = " ".join(f"w{k:05d}" for k in range(4000))  # ~28,000 distinct trigrams each
        store.sessions.add_many(
            ({"id": f"s{i}", "name": f"S{i}"}, [{"role": "user", "content": f"axolotl{i} {words}"}])
            for i in range(120)
        )
        assert _mark(db)[0] == _mark(db)[1]
        assert len(_fts_ids(db, "axolotl")) == 120
        assert len(_fts_ids(db, "axolotl7 ")) == 1
        assert len(store.search("axolotl", mode="text", limit=500)) == 120


def test_doctor_finds_nothing_missing_and_repairs_a_dropped_mark(tmp_path: Path) -> None:
    """The replaced triggers are not reported missing; a dropped mark table comes back with
    the index rebuilt, every row found."""
    db = str(tmp_path / "s.db")
    with chatkeep.open(db) as store:
        store.history.append({"role": "user", "content": "the okapi"})
        assert store._backend.schema.missing_schema() == []
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_search_mark")
    with chatkeep.open(db) as store:
        assert ("table", "ck_search_mark") in store._backend.schema.missing_schema()
        store.doctor(repair=True)
        assert store._backend.schema.missing_schema() == []
        assert [h["index"] for h in store.search("okapi", mode="text")] == [0]
        store.history.append({"role": "user", "content": "another okapi"})
        assert len(store.search("okapi", mode="text")) == 2
