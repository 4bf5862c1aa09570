"""A dropped ``ck_sessions`` table (issue: every command, `doctor --repair` included, failed
with "no such table"; on PostgreSQL `doctor` did not even see it): `doctor` reports it,
reading commands name the repair, and `doctor --repair` re-creates the schema and recovers
the sessions from their bodies."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import chatkeep
from clirun import run
from support.pg import PG_URL, require_pg


def _fill(db: Path) -> None:
    with chatkeep.open(str(db)) as store:
        store.history.append({"role": "user", "content": "owls hunt at night"})
        store.sessions.save("Owl notes")
        store.history.append({"role": "user", "content": "moths fly at dusk"})
        store.sessions.save("Moth notes")


def test_dropped_sessions_table_is_reported_and_rebuilt(tmp_path: Path) -> None:
    """`doctor` reports the missing table (exit 4, no crash), `sessions list` fails with a
    hint naming `doctor --repair`, and the repair brings back every session, searchable."""
    db = tmp_path / "s.db"
    _fill(db)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_sessions")
    found = run(db, "doctor", ok=False)
    assert found.returncode == 4 and "missing-table" in found.stdout
    assert "ck_sessions" in found.stdout and "Traceback" not in found.stderr
    listing = run(db, "sessions", "list", ok=False)
    assert listing.returncode == 4 and "chatkeep doctor --repair" in listing.stderr
    repaired = run(db, "doctor", "--repair")
    assert "healthy" in repaired.stdout
    assert "healthy" in run(db, "doctor").stdout
    with chatkeep.open(str(db)) as store:
        ids = [r["id"] for r in store.sessions.list()]
        assert len(ids) == 2
        texts = sorted(e["content"] for i in ids for e in store.sessions.get(i)["history"])
        assert texts == sorted(["owls hunt at night", "owls hunt at night", "moths fly at dusk"])
        assert len(store.sessions.list("moths")) == 1
        store.sessions.save("After the repair")  # the rebuilt triggers keep names in step
        assert [r["name"] for r in store.sessions.list("after the")] == ["After the repair"]


def test_dropped_digest_table_is_rebuilt_with_every_digest(tmp_path: Path) -> None:
    """A dropped table of session texts (``ck_session_text``) comes back holding the digest
    of every session, made from its body: content search finds them all again."""
    db = tmp_path / "s.db"
    _fill(db)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_session_text")
    assert "missing-table" in run(db, "doctor", ok=False).stdout
    run(db, "doctor", "--repair")
    assert "healthy" in run(db, "doctor").stdout
    assert "Moth notes" in run(db, "sessions", "list", "moths fly").stdout
    assert "Owl notes" in run(db, "sessions", "list", "owls hunt").stdout


def test_dropped_trigram_table_is_rebuilt(tmp_path: Path) -> None:
    """A dropped search index table (``ck_session_trgm``) is re-created by the repair and
    indexes every digest again: content search finds the sessions."""
    db = tmp_path / "s.db"
    _fill(db)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_session_trgm")
    assert "missing-table" in run(db, "doctor", ok=False).stdout
    run(db, "doctor", "--repair")
    assert "healthy" in run(db, "doctor").stdout
    assert "Moth notes" in run(db, "sessions", "list", "moths fly").stdout


@contextmanager
def _own_pg_database() -> Iterator[str]:
    """A PostgreSQL database of this test's own (the schema is shared by every profile, so a
    table cannot be dropped in the one other tests use)."""
    require_pg()
    import psycopg

    name = "ck_dropped_" + uuid.uuid4().hex[:12]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield PG_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _drop_pg(url: str, table: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP TABLE {table}")


@pytest.mark.parametrize("table", ["ck_sessions", "ck_session_digest"])
def test_dropped_table_is_reported_and_rebuilt_postgres(table: str) -> None:
    """On PostgreSQL as on SQLite: `doctor` reports the missing table, a command that needs it
    fails with a hint naming the repair, and `doctor --repair` re-creates it (its indexes too)
    and brings every session back, found by its content."""
    with _own_pg_database() as url:
        with chatkeep.open(url) as store:
            store.history.append({"role": "user", "content": "owls hunt at night"})
            store.sessions.save("Owl notes")
            store.history.append({"role": "user", "content": "moths fly at dusk"})
            store.sessions.save("Moth notes")
        _drop_pg(url, table)
        with chatkeep.open(url) as store:
            report = store.doctor()
            assert not report["healthy"]
            assert ("missing-table", table) in {(p["kind"], p["where"]) for p in report["problems"]}
            if table == "ck_sessions":
                with pytest.raises(chatkeep.StoreError) as err:
                    store.sessions.list()
                assert "chatkeep doctor --repair" in (err.value.hint or "")
            fixed = store.doctor(repair=True)
            assert fixed["healthy"], fixed["problems"]
            assert store.doctor()["healthy"]
            ids = [r["id"] for r in store.sessions.list()]
            assert len(ids) == 2
            assert len(store.sessions.list("moths fly")) == 1
            assert len(store.sessions.list("owls hunt")) == 2
        out = run(url, "doctor")  # type: ignore[arg-type]
        assert "healthy" in out.stdout
        import psycopg

        with psycopg.connect(url) as conn:
            names = {r[0] for r in conn.execute("SELECT indexname FROM pg_indexes")}
        assert {"ck_sessions_id", "ck_sessions_order", "ck_sessions_name_ptrgm"} <= names
        assert "ck_session_digest_ptrgm" in names
