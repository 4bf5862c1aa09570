"""Schema migrations: a named registry, each applied once in its own transaction."""

from __future__ import annotations

import sqlite3

import pytest

from chatkeep.storage.migrations import Migration
from chatkeep.storage.sqlite import SQLiteBackend, SQLiteSchema


def test_every_migration_is_recorded_by_name(spec) -> None:
    """A new store records each migration of its backend's registry once, in order."""
    store = spec.open()
    try:
        schema = store._backend.schema
        names = schema.applied_migrations()
        assert names[:2] == ["0001_initial", "0002_session_digests"]
        assert ("0003_sqlite_session_fts" in names) == (spec.kind == "sqlite")
        assert len(names) == len(set(names))
        schema.migrate()  # idempotent: nothing applied twice
        assert schema.applied_migrations() == names
    finally:
        store.close()


class _FailingSchema(SQLiteSchema):
    """A schema whose registry ends with a migration that fails halfway."""

    def migrations(self):
        return (
            *super().migrations(),
            Migration("9001_ok", ("CREATE TABLE ck_test_ok (x INTEGER)",)),
            Migration(
                "9002_broken",
                ("CREATE TABLE ck_test_half (x INTEGER)", "CREATE TABLE ck_test_half (y)"),
            ),
        )


class _Failing(SQLiteBackend):
    """A backend made with that schema."""

    schema_class = _FailingSchema


def test_a_failing_migration_leaves_earlier_ones_applied_and_itself_not_at_all(tmp_path) -> None:
    """Each migration is its own transaction: 9001 stays, 9002's first statement is rolled back."""
    path = tmp_path / "m.db"
    with pytest.raises(Exception):  # noqa: B017 - the driver's error, translated or not
        _Failing(str(path))
    conn = sqlite3.connect(path)
    try:
        names = [r[0] for r in conn.execute("SELECT name FROM ck_migrations")]
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()
    assert "9001_ok" in names and "9002_broken" not in names
    assert "ck_test_ok" in tables and "ck_test_half" not in tables
    reopened = SQLiteBackend(str(path))  # the ordinary registry opens the store fine
    try:
        assert type(reopened.schema) is SQLiteSchema
        assert "0003_sqlite_session_fts" in reopened.schema.applied_migrations()
    finally:
        reopened.close()
