"""Where a test's store lives (:class:`StoreSpec`): a module of its own, not the root
``conftest.py``, so that any test module can import it (``from conftest import …`` gets whichever
``conftest`` pytest loaded first in a whole run)."""

from __future__ import annotations

import sqlite3
from typing import Any

import chatkeep
from support.pg import PG_URL


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
