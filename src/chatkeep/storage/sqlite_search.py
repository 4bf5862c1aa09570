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
from typing import Any

from ..errors import StoreError
from .backend import Backend


def create_session_fts(backend: Backend) -> bool:
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


def sync_triggers(fts: str, content: str, column: str) -> tuple[str, ...]:
    """The triggers keeping the external-content trigram table ``fts`` in step with the
    ``column`` of ``content`` (keyed by ``rid``)."""
    delete = (
        f" INSERT INTO {fts} ({fts}, rowid, {column}) VALUES ('delete', old.rid, old.{column});"
    )
    insert = f" INSERT INTO {fts} (rowid, {column}) VALUES (new.rid, new.{column});"
    return (
        f"CREATE TRIGGER IF NOT EXISTS {content}_ai AFTER INSERT ON {content} BEGIN{insert} END",
        f"CREATE TRIGGER IF NOT EXISTS {content}_ad AFTER DELETE ON {content} BEGIN{delete} END",
        f"CREATE TRIGGER IF NOT EXISTS {content}_au AFTER UPDATE ON {content}"
        f" BEGIN{delete}{insert} END",
    )


def _trigram_table(
    fts: str, content: str, column: str, create_content: str, options: str = ""
) -> tuple[str, ...]:
    """The statements making ``content`` (by ``create_content``) and the trigram table
    ``fts`` over its ``column`` (external content keyed by ``rid``; ``options``: more FTS5
    options), with the triggers that keep ``fts`` in step. Case-sensitive: both sides are
    lower-cased by Python already, and no folding of its own can make a phrase match what a
    substring test would not. The virtual table comes first: it is what fails on an SQLite
    without FTS5 trigrams."""
    return (
        f"CREATE VIRTUAL TABLE IF NOT EXISTS {fts} USING fts5({column},"
        f" content='{content}', content_rowid='rid', tokenize='trigram case_sensitive 1'"
        f"{options})",
        create_content,
        *sync_triggers(fts, content, column),
    )


#: The digests' trigram index keeps which rows hold each trigram, not where (FTS5
#: ``detail=none``, migration 0022): a third of the size, half the time to write. It cannot
#: answer a phrase, so a search asks it for the rows holding every trigram of the needle and
#: checks the digest itself (:func:`digest_match`).
DIGEST_DETAIL = ", detail=none"
TEXT_TABLE = _trigram_table(
    "ck_session_trgm",
    "ck_session_text",
    "digest",
    "CREATE TABLE IF NOT EXISTS ck_session_text (rid INTEGER PRIMARY KEY, profile TEXT NOT NULL,"
    " id TEXT NOT NULL, digest TEXT NOT NULL, UNIQUE (profile, id))",
    DIGEST_DETAIL,
)
#: Trigrams of a needle a digest query names at most (the digest itself is checked anyway).
_QUERY_TRIGRAMS = 12


def digest_match(needle: str) -> str:
    """The FTS5 query of the rows holding the trigrams of ``needle`` (three characters or
    more): its trigrams end to end and its last one, at most :data:`_QUERY_TRIGRAMS`. Rows it
    finds may not hold the needle itself: the caller checks the text (``instr``)."""
    grams = [needle[k : k + 3] for k in range(0, len(needle) - 2, 3)] + [needle[-3:]]
    kept = list(dict.fromkeys(grams))[:_QUERY_TRIGRAMS]
    return " AND ".join('"' + g.replace('"', '""') + '"' for g in kept)


def create_session_text(backend: Backend) -> bool:
    """Move session digests from ``ck_session_fts`` (whose ids are not indexed: deleting or
    replacing one session's digest scanned every digest) into ``ck_session_text``, a plain
    table keyed by ``(profile, id)``, indexed by the external-content trigram table
    ``ck_session_trgm`` that triggers keep in step. ``False`` while migration 0003 could not
    run (no FTS5 here): the plain ``ck_session_digest`` stays in use."""
    if not backend.query("SELECT 1 FROM sqlite_master WHERE name='ck_session_fts'"):
        return False
    for stmt in TEXT_TABLE:
        backend.execute(stmt)
    backend.execute(
        "INSERT OR IGNORE INTO ck_session_text (profile, id, digest)"
        " SELECT profile, id, digest FROM ck_session_fts"
    )
    backend.execute("DROP TABLE ck_session_fts")
    return True


def digest_detail(backend: Backend) -> bool:
    """A digest trigram index made with positions (before 0022) is made again without them
    (:data:`DIGEST_DETAIL`) from ``ck_session_text``; its triggers stay. ``False`` while 0007
    could not run (no FTS5 trigrams)."""
    found = backend.query("SELECT sql FROM sqlite_master WHERE name='ck_session_trgm'")
    if not found:
        return False
    if DIGEST_DETAIL.strip(", ") not in str(found[0][0]):
        backend.execute("DROP TABLE ck_session_trgm")
        backend.execute(TEXT_TABLE[0])
        backend.execute("INSERT INTO ck_session_trgm (ck_session_trgm) VALUES ('rebuild')")
    return True


NAME_TABLE = (
    *_trigram_table(
        "ck_session_name_trgm",
        "ck_session_name",
        "name_lc",
        "CREATE TABLE IF NOT EXISTS ck_session_name (rid INTEGER PRIMARY KEY,"
        " profile TEXT NOT NULL, ord BIGINT NOT NULL, name_lc TEXT NOT NULL, UNIQUE (profile, ord))",
    ),
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


def create_session_names(backend: Backend) -> bool:
    """Session names (``ck_sessions.name_lc``) in a trigram index too, so a search that few
    names match reads only those: ``ck_session_name`` mirrors them through triggers and
    ``ck_session_name_trgm`` indexes it. ``False`` without FTS5 trigrams (names are scanned)."""
    try:
        for stmt in NAME_TABLE:
            backend.execute(stmt)
    except sqlite3.OperationalError:
        return False
    backend.execute(
        "INSERT OR IGNORE INTO ck_session_name (profile, ord, name_lc)"
        " SELECT profile, ord, name_lc FROM ck_sessions"
    )
    return True


def trigrams_answer(backend: Any, needle: str) -> bool:
    """Whether the trigram tables can answer ``needle``: three characters or more, no NUL,
    and a store whose digests they index."""
    return (
        len(needle) >= 3
        and "\x00" not in needle
        and backend.drawer.digest_table == "ck_session_text"
    )


def trigram_match_sql(
    backend: Any, needle: str, profile: str
) -> tuple[str, tuple[Any, ...]] | None:
    """The subquery of ``ord, pinned, created_at`` of the rows (with a usable id) whose name
    or digest contains ``needle``, answered by the trigram tables from the index alone;
    ``None`` (scan instead) for a needle shorter than a trigram or holding a NUL, and for a
    store without the tables (or not upgraded yet)."""
    if not trigrams_answer(backend, needle):
        return None
    phrase = '"' + needle.replace('"', '""') + '"'
    digests = (
        "SELECT s.ord, s.pinned, s.created_at FROM ck_session_trgm f CROSS JOIN ck_session_text t"
        " ON t.rid = f.rowid CROSS JOIN ck_sessions s ON s.profile = t.profile"
        " AND s.id = t.id WHERE ck_session_trgm MATCH ? AND t.profile=? AND instr(t.digest, ?) > 0"
    )
    if backend.drawer.names_indexed:
        names = (
            "SELECT s.ord, s.pinned, s.created_at FROM ck_session_name_trgm f"
            " CROSS JOIN ck_session_name n ON n.rid = f.rowid CROSS JOIN ck_sessions s"
            " ON s.profile = n.profile AND s.ord = n.ord"
            " WHERE ck_session_name_trgm MATCH ? AND n.profile=? AND s.id IS NOT NULL"
        )
        nparams: tuple[Any, ...] = (phrase, profile)
    else:
        names = (
            "SELECT ord, pinned, created_at FROM ck_sessions WHERE profile=?"
            " AND id IS NOT NULL AND instr(name_lc, ?) > 0"
        )
        nparams = (profile, needle)
    return f"{names} UNION {digests}", (*nparams, digest_match(needle), profile, needle)


def _trigram_tables(backend: Any) -> list[str]:
    """The trigram tables this store's searches use."""
    tables = ["ck_session_trgm"] if backend.drawer.digest_table == "ck_session_text" else []
    return tables + (["ck_session_name_trgm"] if backend.drawer.names_indexed else [])


#: Pages of merged index data one tidy-up writes at most: after a session write, FTS5 merges
#: the small segments writes leave, a bounded piece at a time, so searches probe few segments
#: (a word held by 1 % of 10,000 sessions: 0.38 ms instead of 0.58 after 300 saves) and no
#: single save pays for a whole automatic merge (the slowest of 300 saves: 55 ms, not 448).
MERGE_PAGES = 64


def merge_trigram_tables(backend: Any) -> None:
    """Inside a write transaction: a bounded incremental merge of each trigram index, in a
    savepoint, so a failure undoes only the merge and the write goes on."""
    tables = _trigram_tables(backend)
    if not tables:
        return
    backend.execute("SAVEPOINT ck_tidy")
    try:
        for table in tables:
            backend.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('merge', {MERGE_PAGES})")
    except sqlite3.Error:
        backend.execute("ROLLBACK TO ck_tidy")
    backend.execute("RELEASE ck_tidy")


def optimize_trigram_tables(backend: Any) -> None:
    """After an import: merge each trigram index into one segment (thousands of rows inserted
    one by one leave many, and every search probes each; at 10,000 sessions a rare word's
    lookup goes from 0.4 ms to 0.06 ms). Best effort: the import is committed already."""
    tables = _trigram_tables(backend)
    if not tables or backend.read_only:
        return
    try:
        with backend.transaction("", write=True):
            for table in tables:
                backend.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
    except StoreError:
        pass
