"""``add_many`` on SQLite: an import's batch reaches the trigram indexes in one piece, and each
digest and name lands where one-by-one saves would have put it (the drawer-ordered rowids)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import chatkeep
from factories import assistant, user


def _batch(n: int) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """``n`` sessions in no order of time (as an export lists them), some pinned."""
    seconds = random.Random(7).sample(range(1_600_000_000, 1_700_000_000), n)
    return [
        (
            {"id": f"{k:032x}", "name": f"talk {k}", "createdAt": s * 1000, "pinned": k % 7 == 0},
            [user(f"question {k} about kiwis"), assistant(f"answer {k}")],
        )
        for k, s in enumerate(seconds)
    ]


def _segments(path: Path, table: str) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchone()[0])


def _rids(path: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with sqlite3.connect(path) as db:
        text = db.execute("SELECT id, rid FROM ck_session_text ORDER BY id").fetchall()
        names = db.execute("SELECT ord, rid FROM ck_session_name ORDER BY ord").fetchall()
    return text, names


def test_add_many_indexes_a_batch_in_one_segment_at_one_by_one_rowids(tmp_path: Path) -> None:
    """A batch in no time order is one FTS5 segment per trigram index, rowids as saved singly."""
    batch = _batch(80)  # under the bulk size: no optimize afterwards
    with chatkeep.open(tmp_path / "many.db") as store:
        store.sessions.add_many(batch)
        found = [r["id"] for r in store.sessions.list("kiwis", limit=25)]
    assert _segments(tmp_path / "many.db", "ck_session_trgm") == 1
    assert _segments(tmp_path / "many.db", "ck_session_name_trgm") == 1
    with chatkeep.open(tmp_path / "one.db") as store:
        for item in batch:
            store.sessions.add_many([item])
        assert [r["id"] for r in store.sessions.list("kiwis", limit=25)] == found
    assert _rids(tmp_path / "many.db") == _rids(tmp_path / "one.db")


def _trgm_sql(path: Path) -> str:
    with sqlite3.connect(path) as db:
        row = db.execute("SELECT sql FROM sqlite_master WHERE name='ck_session_trgm'").fetchone()
    return str(row[0])


def test_a_digest_holding_every_trigram_apart_is_not_a_match(tmp_path: Path) -> None:
    """The digest index knows which sessions hold a trigram, not where: a digest holding all
    of the needle's trigrams, but not the needle, is no match (the digest itself is checked)."""
    rows = [
        ({"id": "a" * 32, "name": "one", "createdAt": 1}, [user("abcx bcdx"), assistant("ok")]),
        ({"id": "b" * 32, "name": "two", "createdAt": 2}, [user("the abcd here")]),
    ]
    with chatkeep.open(tmp_path / "d.db") as store:
        store.sessions.add_many(rows)
        for limit in (None, 1, 5):
            assert [r["id"] for r in store.sessions.list("abcd", limit=limit)] == ["b" * 32]
        assert [r["id"] for r in store.sessions.list("bcdx")] == ["a" * 32]
        assert [r["id"] for r in store.sessions.list('x "q')] == []
    assert "detail=none" in _trgm_sql(tmp_path / "d.db")


def test_migration_0022_remakes_a_digest_index_with_positions(tmp_path: Path) -> None:
    """A store whose digest index holds positions (made before 0022) gets it made again
    without them, from the digests; searches find the same sessions."""
    path = tmp_path / "old.db"
    batch = _batch(30)
    with chatkeep.open(path) as store:
        store.sessions.add_many(batch)
        before = [r["id"] for r in store.sessions.list("kiwis")]
    with sqlite3.connect(path) as db:
        sql = _trgm_sql(path).replace(", detail=none", "")
        db.execute("DROP TABLE ck_session_trgm")
        db.execute(sql)
        db.execute("INSERT INTO ck_session_trgm (ck_session_trgm) VALUES ('rebuild')")
        db.execute("DELETE FROM ck_migrations WHERE name = '0022_sqlite_digest_trgm'")
    assert "detail=none" not in _trgm_sql(path)
    with chatkeep.open(path) as store:
        assert [r["id"] for r in store.sessions.list("kiwis")] == before
        assert len(before) == 30
        store.sessions.add_many([({"id": "f" * 32, "name": "late"}, [user("kiwis too")])])
        assert "f" * 32 in {r["id"] for r in store.sessions.list("kiwis")}
    assert "detail=none" in _trgm_sql(path)
    with sqlite3.connect(path) as db:  # raises when the index does not match its digests
        db.execute("INSERT INTO ck_session_trgm (ck_session_trgm) VALUES ('integrity-check')")
