"""Every schema migration of a PostgreSQL store, in the order it applies them.

The shared ones first (:mod:`.migrations`), then PostgreSQL's own: the drawer's trigram
indexes and digest compression (made here: nothing else needs their code) and the
message-search index (:mod:`.search_schema`). Never reorder or rename a migration once made.
"""

from __future__ import annotations

from typing import Any

from . import search_schema
from .migrations import BACKFILL, Migration, for_dialect

_PG = ("postgresql",)


def _may_fail(backend: Any, sql: str) -> bool:
    """Run ``sql`` inside the migration's transaction; if the server refuses it, undo only it
    (a savepoint) and return False."""
    pg: Any = backend._psycopg
    backend.execute("SAVEPOINT ck_optional")
    try:
        backend.execute(sql)
    except pg.Error:
        backend.execute("ROLLBACK TO SAVEPOINT ck_optional")
        return False
    return True


def _trigram_indexes(backend: Any) -> bool:
    """Trigram indexes (``pg_trgm``) on session names and digests, so a drawer search that few
    sessions match reads only those. Where the extension cannot be created (not installed, or
    the role may not), searches scan, as before; the migration is recorded either way."""
    if not _may_fail(backend, "CREATE EXTENSION IF NOT EXISTS pg_trgm"):
        return True
    backend.execute(
        "CREATE INDEX IF NOT EXISTS ck_sessions_name_trgm ON ck_sessions"
        " USING gin (name_lc gin_trgm_ops)"
    )
    backend.execute(
        "CREATE INDEX IF NOT EXISTS ck_session_digest_trgm ON ck_session_digest"
        " USING gin (digest gin_trgm_ops)"
    )
    return True


def _lz4_digests(backend: Any) -> bool:
    """New digests are compressed with lz4 instead of the default pglz: a drawer search reads
    each digest it looks through whole, and lz4 gives it back about three times as fast (the
    newest 100 digests of a 10,000-session drawer: 0.35 ms instead of 1 ms). Digests already
    stored keep their compression until they are written again. A server built without lz4
    (or older than PostgreSQL 14) keeps pglz; the migration is recorded either way."""
    _may_fail(backend, "ALTER TABLE ck_session_digest ALTER COLUMN digest SET COMPRESSION lz4")
    return True


def _profile_trigram_indexes(backend: Any) -> bool:
    """The trigram indexes keyed by profile first (``btree_gin``): on a server holding many
    profiles, a search asked only the trigram index would read and re-check every profile's
    matching digests, so a rare query of a small drawer paid for the largest one beside it
    (a miss-like query of a 100-session profile next to a 10,000-session one: 5 ms instead of
    0.6). Where ``btree_gin`` or ``pg_trgm`` cannot be had, the indexes stay as they are; the
    migration is recorded either way."""
    have = {
        r[0]
        for r in backend.query(
            "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()"
            " AND indexname IN ('ck_sessions_name_trgm', 'ck_session_digest_trgm')"
        )
    }
    if not have or not _may_fail(backend, "CREATE EXTENSION IF NOT EXISTS btree_gin"):
        return True
    for table, column, old, new in PROFILE_TRIGRAM_INDEXES:
        backend.execute(
            f"CREATE INDEX IF NOT EXISTS {new} ON {table} USING gin (profile, {column} gin_trgm_ops)"
        )
        backend.execute(f"DROP INDEX IF EXISTS {old}")
    return True


def _search_trigrams(backend: Any) -> bool:
    """Migration 0015: the message-search rows' trigram index, with the extensions it needs
    where the server gives them (each may be refused: not installed, no right); recorded with
    or without them (searches then scan)."""
    for ext in ("pg_trgm", "btree_gin"):
        _may_fail(backend, f"CREATE EXTENSION IF NOT EXISTS {ext}")
    stmt = search_schema.pg_trigram_statement(backend)
    if stmt is not None:
        backend.execute(stmt)
    return True


#: (table, column, index before 0012, index from 0012 on)
PROFILE_TRIGRAM_INDEXES = (
    ("ck_sessions", "name_lc", "ck_sessions_name_trgm", "ck_sessions_name_ptrgm"),
    ("ck_session_digest", "digest", "ck_session_digest_trgm", "ck_session_digest_ptrgm"),
)


#: Trigram indexes for the drawer search.
TRIGRAMS = Migration("0009_pg_trigram_search", dialects=_PG, run=_trigram_indexes)
#: lz4 for digests.
DIGEST_LZ4 = Migration("0011_pg_digest_lz4", dialects=_PG, run=_lz4_digests)
#: Trigram indexes that look in one profile's rows.
PROFILE_TRIGRAMS = Migration("0012_pg_profile_trigrams", dialects=_PG, run=_profile_trigram_indexes)
#: The message-search rows, their trigram index, and the vectors' table.
SEARCH_ROWS = Migration(search_schema.ROWS, search_schema.PG_ROW_TABLE, dialects=_PG)
SEARCH_TRGM = Migration(search_schema.PG_TRGM, dialects=_PG, run=_search_trigrams)
SEARCH_VECTORS = Migration(search_schema.VECTORS, search_schema.PG_VECTOR_TABLE, dialects=_PG)

#: The registry, in order.
MIGRATIONS: tuple[Migration, ...] = (
    *for_dialect("postgresql"),
    *(TRIGRAMS, DIGEST_LZ4, PROFILE_TRIGRAMS),
    *(SEARCH_ROWS, SEARCH_TRGM, BACKFILL, SEARCH_VECTORS),
)
