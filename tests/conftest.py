"""Shared fixtures: a real store on every backend, each test in its own file or profile.

``backend`` is parametrized over ``sqlite`` (a fresh file per test) and ``postgres`` (the
server at ``CHATKEEP_TEST_PG``, default ``postgresql://postgres@127.0.0.1:5432/test``, a fresh
profile per test). Without a server the PostgreSQL cases are skipped, except when ``CI=true``:
then a missing server is a failure.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import chatkeep
from support.pg import PG_URL, pg_available, require_pg  # noqa: F401 - used by tests


class StoreSpec:
    """Where a test's store lives; ``open()`` gives a new connection to the same data."""

    def __init__(self, kind: str, url: str, profile: str) -> None:
        self.kind = kind
        self.url = url
        self.profile = profile

    def open(self) -> chatkeep.Store:
        return chatkeep.open(self.url, profile=self.profile)

    def raw_rows(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Run SQL on a separate, plain driver connection (``?`` placeholders)."""
        if self.kind == "sqlite":
            conn = sqlite3.connect(self.url)
            try:
                rows = conn.execute(sql, params).fetchall()
                conn.commit()
                return rows
            finally:
                conn.close()
        import psycopg

        with psycopg.connect(PG_URL, autocommit=True) as conn:
            cur = conn.execute(sql.replace("?", "%s"), params)
            return cur.fetchall() if cur.description else []

    def dump(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every stored row of this profile, for byte-identical comparisons."""
        out = {}
        for table, order in (
            ("ck_kv", "key"),
            ("ck_history", "pos"),
            ("ck_archive", "seq"),
            ("ck_history_state", "profile"),
            ("ck_blobs", "hash"),
            ("ck_blob_refs", "owner, hash"),
            ("ck_sessions", "ord"),
            ("ck_session_text" if self.kind == "sqlite" else "ck_session_digest", "id"),
        ):
            # the digest table's row key (rid, SQLite) is not content: left out
            cols = "profile, id, digest" if table.startswith("ck_session_") else "*"
            rows = self.raw_rows(
                f"SELECT {cols} FROM {table} WHERE profile=? ORDER BY {order}", (self.profile,)
            )
            out[table] = [
                tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows
            ]
        return out


@pytest.fixture(params=["sqlite", "postgres"])
def spec(request: pytest.FixtureRequest, tmp_path: Any) -> StoreSpec:
    if request.param == "postgres":
        require_pg()
        return StoreSpec("postgres", PG_URL, "t_" + uuid.uuid4().hex)
    return StoreSpec("sqlite", str(tmp_path / "chatkeep.db"), "default")


@pytest.fixture
def store(spec: StoreSpec) -> Iterator[chatkeep.Store]:
    s = spec.open()
    try:
        yield s
    finally:
        s.close()


@pytest.fixture
def sqlite_spec(tmp_path: Any) -> StoreSpec:
    return StoreSpec("sqlite", str(tmp_path / "chatkeep.db"), "default")


@pytest.fixture
def pg_spec() -> StoreSpec:
    require_pg()
    return StoreSpec("postgres", PG_URL, "t_" + uuid.uuid4().hex)
