"""The schema migrations every backend shares, and what a migration is.

Each backend's registry lists every migration it applies, in order, in one module:
:mod:`.sqlite_migrations` and :mod:`.postgres_migrations` (the shared ones first). A
migration's statements or ``run`` callable live beside the code that reads what it makes (the
``ck_search`` table in :mod:`.search_schema`, the drawer's trigram tables in
:mod:`.sqlite_search`, …); the registry says which apply, under which name, in which order.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import body_rows, history_rows, index_rows, search_schema


class Migration:
    """One named schema change, applied once per database in its own transaction together
    with its ``ck_migrations`` row. ``dialects`` limits it to some backends; ``run`` is a
    callable for changes that are more than plain statements (it returns ``False`` when the
    change is not possible on this server, which leaves it unrecorded, to be tried again).
    Never changed once made."""

    __slots__ = ("name", "statements", "dialects", "run")

    def __init__(
        self,
        name: str,
        statements: tuple[str, ...] = (),
        dialects: tuple[str, ...] = ("sqlite", "postgresql"),
        run: Callable[[Any], bool] | None = None,
    ) -> None:
        self.name = name
        self.statements = statements
        self.dialects = dialects
        self.run = run

    def __repr__(self) -> str:
        return f"Migration({self.name!r})"


#: The migrations every backend applies, in order (each backend's registry lists them first).
SHARED: tuple[Migration, ...] = (
    Migration(
        "0001_initial",
        (
            "CREATE TABLE IF NOT EXISTS ck_kv (profile TEXT NOT NULL, key TEXT NOT NULL,"
            " value TEXT NOT NULL, PRIMARY KEY (profile, key))",
            "CREATE TABLE IF NOT EXISTS ck_history (profile TEXT NOT NULL, pos BIGINT NOT NULL,"
            " chars BIGINT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (profile, pos))",
            "CREATE TABLE IF NOT EXISTS ck_archive (profile TEXT NOT NULL, seq BIGINT NOT NULL,"
            " archived_at BIGINT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (profile, seq))",
            "CREATE TABLE IF NOT EXISTS ck_history_state (profile TEXT PRIMARY KEY,"
            " live_count BIGINT NOT NULL, live_chars BIGINT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS ck_blobs (profile TEXT NOT NULL, hash TEXT NOT NULL,"
            " prefix TEXT, data {blob} NOT NULL, PRIMARY KEY (profile, hash))",
            "CREATE TABLE IF NOT EXISTS ck_blob_refs (profile TEXT NOT NULL, owner TEXT NOT NULL,"
            " hash TEXT NOT NULL, PRIMARY KEY (profile, owner, hash))",
            "CREATE INDEX IF NOT EXISTS ck_blob_refs_hash ON ck_blob_refs (profile, hash)",
        ),
    ),
    Migration(
        "0002_session_digests",
        (
            "CREATE TABLE IF NOT EXISTS ck_session_digest (profile TEXT NOT NULL, id TEXT NOT NULL,"
            " digest TEXT NOT NULL, PRIMARY KEY (profile, id))",
        ),
    ),
    Migration(
        # rows written before this migration count as "may hold unseen images": the first
        # seen stamp reads them once and clears the flag of those that do not
        "0004_history_unseen_flag",
        (
            "ALTER TABLE ck_history ADD COLUMN unseen INTEGER NOT NULL DEFAULT 1",
            "CREATE INDEX IF NOT EXISTS ck_history_unseen ON ck_history (profile, pos)"
            " WHERE unseen = 1",
        ),
    ),
    Migration(
        "0005_profile_versions",
        (
            "CREATE TABLE IF NOT EXISTS ck_versions (profile TEXT PRIMARY KEY,"
            " kv BIGINT NOT NULL DEFAULT 0, history BIGINT NOT NULL DEFAULT 0)",
        ),
    ),
    Migration(
        "0006_session_index_rows",
        index_rows.MIGRATION,
        run=index_rows.convert_all_profiles,
    ),
    Migration("0008_session_order", index_rows.ORDER_MIGRATION),
    Migration("0013_archive_count", history_rows.ARCHIVE_COUNT_MIGRATION),
    Migration("0020_session_items", body_rows.MIGRATION),
    Migration("0021_session_items_fill", run=body_rows.convert_all_bodies),
)

#: Migration 0016 on both backends: every profile already stored indexed for message search
#: once (its place in each registry follows that backend's 0015).
BACKFILL = Migration(search_schema.BACKFILL, run=search_schema.backfill)


def for_dialect(dialect: str) -> tuple[Migration, ...]:
    """The shared migrations a backend of ``dialect`` applies, in order."""
    return tuple(m for m in SHARED if dialect in m.dialects)
