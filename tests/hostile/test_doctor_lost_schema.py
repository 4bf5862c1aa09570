"""Damage doctor must handle, not fail on (issue: a raw bytes settings row crashed `doctor`;
a lost `ck_migrations` table made `doctor`, `--repair` and `export` exit 4 with every data row
intact): the store opens, reads, exports, and doctor reports or repairs."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import chatkeep
from clirun import run
from support.pg import PG_URL, require_pg


def _fill(store: chatkeep.Store) -> None:
    store.local.set("systemPrompt", "custom prompt")
    store.history.append({"role": "user", "content": "owls hunt at night"})
    store.sessions.save("Owl notes")
    store.history.append({"role": "user", "content": "still live"})


def test_bytes_in_a_settings_row_is_quarantined_not_a_crash(tmp_path: Path) -> None:
    """A raw bytes value in a settings row: `doctor` reports it (exit 4, no traceback),
    `--repair` quarantines it, and the setting reads as its default."""
    db = tmp_path / "s.db"
    with chatkeep.open(str(db)) as store:
        _fill(store)
    with sqlite3.connect(db) as con:
        con.execute("UPDATE ck_kv SET value = X'00ff10' WHERE key = 'systemPrompt'")
    found = run(db, "doctor", ok=False)
    assert found.returncode == 4 and "k:systemPrompt" in found.stdout
    assert "Traceback" not in found.stderr
    run(db, "doctor", "--repair")
    assert "healthy" in run(db, "doctor").stdout
    settings = json.loads(run(db, "config", "list", "--json").stdout)["settings"]
    assert settings["systemPrompt"] == chatkeep.DEFAULTS["systemPrompt"]


def test_lost_migrations_table_sqlite(tmp_path: Path) -> None:
    """Without `ck_migrations`, the next open rebuilds it (schema changes already there are
    not applied twice): history, search, export and doctor work and nothing is lost."""
    db = tmp_path / "s.db"
    with chatkeep.open(str(db)) as store:
        _fill(store)
    with sqlite3.connect(db) as con:
        con.execute("DROP TABLE ck_migrations")
    assert "still live" in run(db, "history").stdout
    assert "Owl notes" in run(db, "sessions", "list", "owls").stdout
    out = tmp_path / "e.json"
    run(db, "export", "-o", str(out))
    assert "owls hunt at night" in out.read_text()
    assert "healthy" in run(db, "doctor").stdout


@pytest.fixture
def pg_database() -> Iterator[str]:
    """A database of its own (the schema and its bookkeeping are shared by profiles)."""
    require_pg()
    import psycopg

    name = "ck_lost_" + uuid.uuid4().hex[:12]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    try:
        yield PG_URL.rsplit("/", 1)[0] + "/" + name
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_lost_migrations_table_postgres(pg_database: str) -> None:
    """The same on PostgreSQL."""
    import psycopg

    with chatkeep.open(pg_database) as store:
        _fill(store)
    with psycopg.connect(pg_database, autocommit=True) as conn:
        conn.execute("DROP TABLE ck_migrations")
    with chatkeep.open(pg_database) as store:
        assert [e["content"] for e in store.history.read()] == ["owls hunt at night", "still live"]
        assert [r["name"] for r in store.sessions.list("owls")] == ["Owl notes"]
        assert "owls hunt at night" in json.dumps(store.export_data())
        assert store.doctor()["healthy"]
