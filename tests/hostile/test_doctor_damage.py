"""Damage `chatkeep doctor` used to call healthy: a session listed twice, garbage write
counters, a schema from a newer chatkeep, a store file cut to 0 bytes. The damage is done with
raw SQL on a separate connection (or on the file)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

import chatkeep
from clirun import run
from support.pg import PG_URL, require_pg


def _kinds(report: dict) -> set[str]:  # type: ignore[type-arg]
    return {p["kind"] for p in report["problems"]}


def test_duplicated_index_row_is_found_and_repaired(spec: Any) -> None:
    """A session whose index row is duplicated is reported; repair keeps one row and the body."""
    with spec.open() as store:
        store.history.append({"role": "user", "content": "kept"})
        row = store.sessions.save("once")
        assert row is not None
    spec.raw_rows(
        "INSERT INTO ck_sessions (profile, ord, id, created_at, pinned, name_lc, legacy, value)"
        " SELECT profile, ord + 1000, id, created_at, pinned, name_lc, legacy, value"
        " FROM ck_sessions WHERE profile=?",
        (spec.profile,),
    )
    with spec.open() as store:
        assert "duplicate-index" in _kinds(store.doctor())
        assert store.doctor(repair=True)["healthy"]
        assert [r["id"] for r in store.sessions.list()] == [row["id"]]
        body = store.sessions.get(row["id"])
        assert body is not None and body["history"][0]["content"] == "kept"


def test_garbage_write_counters_are_found_and_repaired(spec: Any) -> None:
    """Write counters that are not counts are reported and reset; the store keeps working."""
    with spec.open() as store:
        store.local.set("systemPrompt", "be brief")
    bad = "garbage" if spec.kind == "sqlite" else -5
    spec.raw_rows("UPDATE ck_versions SET kv=? WHERE profile=?", (bad, spec.profile))
    with spec.open() as store:
        assert store.local.get("systemPrompt") == "be brief"
        assert "versions" in _kinds(store.doctor())
        assert store.doctor(repair=True)["healthy"]
        store.local.set("systemPrompt", "be kind")
        assert store.local.get("systemPrompt") == "be kind"


def test_newer_schema_opens_read_only_sqlite(sqlite_spec: Any) -> None:
    """A store with a migration this code does not know reads, refuses every write with a
    hint to upgrade, and `chatkeep doctor` reports it (exit 4)."""
    spec = sqlite_spec
    with spec.open() as store:
        store.history.append({"role": "user", "content": "hello"})
    spec.raw_rows("INSERT INTO ck_migrations (name, applied_at) VALUES ('9999_future', 1)")
    before = spec.dump()
    with spec.open() as store:
        assert store.history.read()[0]["content"] == "hello"
        with pytest.raises(chatkeep.StoreError) as err:
            store.history.append({"role": "user", "content": "lost?"})
        assert "newer chatkeep" in err.value.message and "upgrade" in err.value.hint
    out = run(Path(spec.url), "doctor", "--repair", ok=False)
    assert out.returncode == 4 and "newer-schema" in out.stdout
    assert spec.dump() == before


def test_newer_schema_opens_read_only_postgres() -> None:
    """The same on PostgreSQL (in a database of its own: the schema is shared by profiles)."""
    require_pg()
    import psycopg

    name = "ck_newer_" + uuid.uuid4().hex[:12]
    with psycopg.connect(PG_URL, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = PG_URL.rsplit("/", 1)[0] + "/" + name
    try:
        with chatkeep.open(url) as store:
            store.history.append({"role": "user", "content": "hello"})
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("INSERT INTO ck_migrations (name, applied_at) VALUES ('9999_future', 1)")
        with chatkeep.open(url) as store:
            assert store.history.read()[0]["content"] == "hello"
            with pytest.raises(chatkeep.StoreError, match="newer chatkeep"):
                store.history.append({"role": "user", "content": "lost?"})
            report = store.doctor(repair=True)
            assert "newer-schema" in _kinds(report) and not report["healthy"]
    finally:
        with psycopg.connect(PG_URL, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_store_cut_to_zero_bytes_is_reported(tmp_path: Path) -> None:
    """A store file truncated to 0 bytes is reported by `chatkeep doctor` (exit 4, with the
    cause), not called healthy."""
    db = tmp_path / "s.db"
    with chatkeep.open(str(db)) as store:
        store.history.append({"role": "user", "content": "hello"})
    os.truncate(db, 0)
    out = run(db, "doctor", ok=False)
    assert out.returncode == 4 and "empty-file" in out.stdout and "0 bytes" in out.stdout
