"""SQLite's drawer-search indexes: the FTS5 trigram tables made by migrations 0003, 0007 and
0009, the phrase queries that answer a search from them, and their upkeep after an import.

``ck_session_text`` holds each session's digest keyed by ``(profile, id)`` and is indexed by
the external-content table ``ck_session_trgm``; ``ck_session_name`` mirrors the index rows'
names (triggers on ``ck_sessions``) and is indexed by ``ck_session_name_trgm``. Both trigram
tables are case-sensitive: digests and names are lower-cased by Python already, so a phrase
query of a needle's trigrams matches exactly the texts that contain the needle.
"""

from __future__ import annotations

import sqlite3

from ..errors import StoreError
from .sql import Migration

TYPE_CHECKING = False  # `typing` costs start-up time; only type checkers need it
if TYPE_CHECKING:
    from typing import Any

    from .backend import Backend


def _create_session_fts(backend: Backend) -> bool:
    """Move session digests into an FTS5 trigram table (it answers substring ``LIKE`` from the
    index); ``False`` when this SQLite has no FTS5 or no trigram tokenizer (the plain table
    stays in use and the migration is tried again on a later open)."""
    try:
        backend.execute(
            "CREATE VIRTUAL TABLE IF NOT EXISTS ck_session_fts USING fts5("
            "profile UNINDEXED, id UNINDEXED, digest, tokenize='trigram')"
        )
    except sqlite3.OperationalError:
        return False
    backend.execute(
        "INSERT INTO ck_session_fts (profile, id, digest)"
        " SELECT profile, id, digest FROM ck_session_digest"
    )
    backend.execute("DELETE FROM ck_session_digest")
    return True


#: SQLite only: session digests in a trigram full-text index.
SESSION_FTS = Migration("0003_sqlite_session_fts", dialects=("sqlite",), run=_create_session_fts)

_TEXT_TABLE = (
    "CREATE TABLE IF NOT EXISTS ck_session_text (rid INTEGER PRIMARY KEY, profile TEXT NOT NULL,"
    " id TEXT NOT NULL, digest TEXT NOT NULL, UNIQUE (profile, id))",
    # case-sensitive: both sides are lower-cased by Python already, and no folding of its own
    # can make a phrase match what a substring test would not
    "CREATE VIRTUAL TABLE IF NOT EXISTS ck_session_trgm USING fts5(digest,"
    " content='ck_session_text', content_rowid='rid', tokenize='trigram case_sensitive 1')",
    "CREATE TRIGGER IF NOT EXISTS ck_session_text_ai AFTER INSERT ON ck_session_text BEGIN"
    " INSERT INTO ck_session_trgm (rowid, digest) VALUES (new.rid, new.digest); END",
    "CREATE TRIGGER IF NOT EXISTS ck_session_text_ad AFTER DELETE ON ck_session_text BEGIN"
    " INSERT INTO ck_session_trgm (ck_session_trgm, rowid, digest)"
    " VALUES ('delete', old.rid, old.digest); END",
    "CREATE TRIGGER IF NOT EXISTS ck_session_text_au AFTER UPDATE ON ck_session_text BEGIN"
    " INSERT INTO ck_session_trgm (ck_session_trgm, rowid, digest)"
    " VALUES ('delete', old.rid, old.digest);"
    " INSERT INTO ck_session_trgm (rowid, digest) VALUES (new.rid, new.digest); END",
)


def _create_session_text(backend: Backend) -> bool:
    """Move session digests from ``ck_session_fts`` (whose ids are not indexed: deleting or
    replacing one session's digest scanned every digest) into ``ck_session_text``, a plain
    table keyed by ``(profile, id)``, indexed by the external-content trigram table
    ``ck_session_trgm`` that triggers keep in step. ``False`` while migration 0003 could not
    run (no FTS5 here): the plain ``ck_session_digest`` stays in use."""
    if not backend.query("SELECT 1 FROM sqlite_master WHERE name='ck_session_fts'"):
        return False
    for stmt in _TEXT_TABLE:
        backend.execute(stmt)
    backend.execute(
        "INSERT INTO ck_session_text (profile, id, digest)"
        " SELECT profile, id, digest FROM ck_session_fts"
    )
    backend.execute("DROP TABLE ck_session_fts")
    return True


#: SQLite only: digests keyed by session id, with the trigram index beside them.
SESSION_TEXT = Migration("0007_sqlite_session_text", dialects=("sqlite",), run=_create_session_text)

_NAME_TABLE = (
    # the virtual table first: it is what fails on an SQLite without FTS5 trigrams
    "CREATE VIRTUAL TABLE IF NOT EXISTS ck_session_name_trgm USING fts5(name_lc,"
    " content='ck_session_name', content_rowid='rid', tokenize='trigram case_sensitive 1')",
    "CREATE TABLE IF NOT EXISTS ck_session_name (rid INTEGER PRIMARY KEY, profile TEXT NOT NULL,"
    " ord BIGINT NOT NULL, name_lc TEXT NOT NULL, UNIQUE (profile, ord))",
    "CREATE TRIGGER IF NOT EXISTS ck_session_name_ai AFTER INSERT ON ck_session_name BEGIN"
    " INSERT INTO ck_session_name_trgm (rowid, name_lc) VALUES (new.rid, new.name_lc); END",
    "CREATE TRIGGER IF NOT EXISTS ck_session_name_ad AFTER DELETE ON ck_session_name BEGIN"
    " INSERT INTO ck_session_name_trgm (ck_session_name_trgm, rowid, name_lc)"
    " VALUES ('delete', old.rid, old.name_lc); END",
    "CREATE TRIGGER IF NOT EXISTS ck_session_name_au AFTER UPDATE ON ck_session_name BEGIN"
    " INSERT INTO ck_session_name_trgm (ck_session_name_trgm, rowid, name_lc)"
    " VALUES ('delete', old.rid, old.name_lc);"
    " INSERT INTO ck_session_name_trgm (rowid, name_lc) VALUES (new.rid, new.name_lc); END",
    # the index rows' names follow ck_sessions through its own triggers
    "CREATE TRIGGER IF NOT EXISTS ck_sessions_name_ai AFTER INSERT ON ck_sessions BEGIN"
    " INSERT INTO ck_session_name (profile, ord, name_lc)"
    " VALUES (new.profile, new.ord, new.name_lc); END",
    "CREATE TRIGGER IF NOT EXISTS ck_sessions_name_ad AFTER DELETE ON ck_sessions BEGIN"
    " DELETE FROM ck_session_name WHERE profile = old.profile AND ord = old.ord; END",
    "CREATE TRIGGER IF NOT EXISTS ck_sessions_name_au AFTER UPDATE ON ck_sessions"
    " WHEN new.name_lc IS NOT old.name_lc OR new.ord IS NOT old.ord"
    " OR new.profile IS NOT old.profile BEGIN"
    " UPDATE ck_session_name SET profile = new.profile, ord = new.ord, name_lc = new.name_lc"
    " WHERE profile = old.profile AND ord = old.ord; END",
)


def _create_session_names(backend: Backend) -> bool:
    """Session names (``ck_sessions.name_lc``) in a trigram index too, so a search that few
    names match reads only those: ``ck_session_name`` mirrors them through triggers and
    ``ck_session_name_trgm`` indexes it. ``False`` without FTS5 trigrams (names are scanned)."""
    try:
        for stmt in _NAME_TABLE:
            backend.execute(stmt)
    except sqlite3.OperationalError:
        return False
    backend.execute(
        "INSERT INTO ck_session_name (profile, ord, name_lc)"
        " SELECT profile, ord, name_lc FROM ck_sessions"
    )
    return True


SESSION_NAMES = Migration(
    "0009_sqlite_session_names", dialects=("sqlite",), run=_create_session_names
)
#: may stay missing (an SQLite without FTS5 trigrams)
_OPTIONAL = {SESSION_FTS.name, SESSION_TEXT.name, SESSION_NAMES.name}


def trigram_match_sql(
    backend: Any, needle: str, profile: str
) -> tuple[str, tuple[Any, ...]] | None:
    """The subquery of the ords whose name or digest contains ``needle``, answered by the
    trigram tables from the index alone; ``None`` (scan instead) for a needle shorter than a
    trigram or holding a NUL, and for a store without the tables (or not upgraded yet)."""
    if len(needle) < 3 or "\x00" in needle or backend.digest_table != "ck_session_text":
        return None
    phrase = '"' + needle.replace('"', '""') + '"'
    digests = (
        "SELECT s.ord FROM ck_session_trgm f CROSS JOIN ck_session_text t"
        " ON t.rid = f.rowid CROSS JOIN ck_sessions s ON s.profile = t.profile"
        " AND s.id = t.id WHERE ck_session_trgm MATCH ? AND t.profile=?"
    )
    if backend.names_indexed:
        names = (
            "SELECT n.ord FROM ck_session_name_trgm f CROSS JOIN ck_session_name n"
            " ON n.rid = f.rowid WHERE ck_session_name_trgm MATCH ? AND n.profile=?"
        )
        nparams: tuple[Any, ...] = (phrase, profile)
    else:
        names = "SELECT ord FROM ck_sessions WHERE profile=? AND instr(name_lc, ?) > 0"
        nparams = (profile, needle)
    return f"{names} UNION {digests}", (*nparams, phrase, profile)


def optimize_trigram_tables(backend: Any) -> None:
    """After an import: merge each trigram index into one segment (thousands of rows inserted
    one by one leave many, and every search probes each; at 10,000 sessions a rare word's
    lookup goes from 0.4 ms to 0.06 ms). Best effort: the import is committed already."""
    tables = ["ck_session_trgm"] if backend.digest_table == "ck_session_text" else []
    tables += ["ck_session_name_trgm"] if backend.names_indexed else []
    if not tables or backend.read_only:
        return
    try:
        with backend.transaction("", write=True):
            for table in tables:
                backend.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    except StoreError:
        pass
