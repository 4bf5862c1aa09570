"""SQLite's trigram rows in the drawer's order (migration 0010), so a search page stops early.

The rowids of ``ck_session_name`` and ``ck_session_text`` (the content tables of the two
trigram indexes) follow the drawer's order (pinned first, then newest): a row's rowid lies in
the *bucket* of its session, ``unpinned · 2⁶¹ + (2³³ − 1 − second(createdAt)) · 2²⁸``
(seconds clamped to ``[0, 2³³)``, the year 2242), at the first free place in it. Buckets only
coarsen the order: a session before another in the drawer never has a higher bucket. An FTS5
query walks its matches in rowid order (ascending: FTS5 reads forwards faster) and ``LIMIT``
stops it, so the first ``n`` matches of a word every session holds cost what they cost among
a hundred; only the ties in the last bucket reached are read on top, and the page is cut in
the exact order from those (:func:`top_matches`).

Triggers on ``ck_sessions`` keep rowids in their buckets: inserting, pinning or re-dating an
index row moves its name row and its session's digest row into the new bucket (re-indexing
that one text). :data:`DIGEST_INSERT` writes a digest straight into its session's bucket, so
a save indexes its text once; a digest written before its index row starts in bucket 0 and is
moved when the row arrives.

:class:`SQLiteDrawerSearch` is the SQLite backend's ``drawer``: it reads a search page from
these rows where migration 0010 ran, asks the trigram tables of :mod:`.sqlite_search` where
they answer, and scans the digests where this SQLite has no FTS5 trigrams.
"""

from __future__ import annotations

from typing import Any

from .backend import Backend
from .drawer_search import DrawerSearch
from .sqlite_search import (
    digest_match,
    merge_trigram_tables,
    sync_triggers,
    trigram_match_sql,
    trigrams_answer,
)

SPAN = 1 << 28  # rowids per bucket
PIN = 1 << 61
LAST_SECOND = (1 << 33) - 1  # the year 2242
CHUNK = 500  # buckets one query of :func:`free_rids` looks up


def bucket(row: str) -> str:
    """SQL: the first rowid of the bucket of index row ``row`` (a ``ck_sessions`` alias)."""
    return f"(({row}.pinned = 0) * {PIN} + {_second_from_end(row + '.created_at')} * {SPAN})"


def _second_from_end(created: str) -> str:
    """SQL: seconds from ``createdAt`` to the last second the buckets tell apart."""
    return f"({LAST_SECOND} - max(0, min(CAST({created} AS INTEGER) / 1000, {LAST_SECOND})))"


def _first_free(table: str, base: str) -> str:
    """SQL: the first rowid of ``table`` in the bucket starting at ``base`` after its rows."""
    return (
        f"(SELECT coalesce(max(rid) + 1, {base}) FROM {table}"
        f" WHERE rid >= {base} AND rid < {base} + {SPAN})"
    )


def _digest_bucket(profile: str, sid: str) -> str:
    """SQL: the bucket of the session a digest belongs to (of its index row; with legacy
    rows, which repeat an id, of one of them: searches do not use the order then), else 0."""
    return (
        f"coalesce((SELECT {bucket('s')} FROM ck_sessions s WHERE s.profile = {profile}"
        f" AND s.id = {sid} LIMIT 1), 0)"
    )


def _same_bucket(rid: str, base: str) -> str:
    return f"{rid} / {SPAN} = {base} / {SPAN}"


#: The bucket of a digest insert: of the pinned flag and ``createdAt`` given (?4, ?5; for a
#: session whose index row is written after it), else of the session's index row.
_INSERT_BUCKET = (
    f"coalesce(CASE WHEN ?4 IS NOT NULL THEN (?4 = 0) * {PIN}"
    f" + {_second_from_end('?5')} * {SPAN} END,"
    f" {_digest_bucket('?1', '?2')})"
)
#: A digest insert (parameters: profile, id, digest, pinned, createdAt) into its bucket.
DIGEST_INSERT = (
    "INSERT INTO ck_session_text (rid, profile, id, digest) VALUES ("
    + _first_free("ck_session_text", _INSERT_BUCKET)
    + ", ?1, ?2, ?3)"
)


def free_rids(backend: Any, orders: list[tuple[int, int]]) -> list[int]:
    """The rowids :data:`DIGEST_INSERT` would give digests inserted one after another whose
    sessions have these ``(pinned, createdAt)`` (as their index rows store them): each at the
    next free place of its bucket. One query per :data:`CHUNK` distinct buckets, so a batch's
    digests go into the trigram index in one statement (:meth:`~.index_rows.IndexRows.
    digest_add_many`) instead of one each."""
    bases = [
        (pinned == 0) * PIN + (LAST_SECOND - max(0, min(created // 1000, LAST_SECOND))) * SPAN
        for pinned, created in orders
    ]
    nxt: dict[int, int] = {}
    distinct = sorted(set(bases))
    for i in range(0, len(distinct), CHUNK):
        chunk = distinct[i : i + CHUNK]
        values = ",".join(["(?)"] * len(chunk))
        for base, top in backend.query(
            f"WITH b(base) AS (VALUES {values}) SELECT base, (SELECT max(rid)"
            f" FROM ck_session_text WHERE rid >= b.base AND rid < b.base + {SPAN}) FROM b",
            chunk,
        ):
            nxt[int(base)] = int(base) if top is None else int(top) + 1
    rids = []
    for base in bases:
        rids.append(nxt[base])
        nxt[base] += 1
    return rids


def _move_digest(row: str) -> str:
    """SQL: move the digest of index row ``row``'s session into that row's bucket."""
    base = bucket(row)
    return (
        f" UPDATE ck_session_text SET rid = {_first_free('ck_session_text', base)}"
        f" WHERE profile = {row}.profile AND id = {row}.id AND NOT {_same_bucket('rid', base)};"
    )


_NEW = bucket("new")
TRIGGERS = (
    # the name row of a new index row goes into its bucket
    "DROP TRIGGER IF EXISTS ck_sessions_name_ai",
    "CREATE TRIGGER ck_sessions_name_ai AFTER INSERT ON ck_sessions BEGIN"
    " INSERT INTO ck_session_name (rid, profile, ord, name_lc) VALUES ("
    + _first_free("ck_session_name", _NEW)
    + ", new.profile, new.ord, new.name_lc);"
    + _move_digest("new")
    + " END",
    "DROP TRIGGER IF EXISTS ck_sessions_name_au",
    "CREATE TRIGGER ck_sessions_name_au AFTER UPDATE ON ck_sessions"
    " WHEN new.name_lc IS NOT old.name_lc OR new.ord IS NOT old.ord"
    f" OR new.profile IS NOT old.profile OR {_NEW} <> {bucket('old')} BEGIN"
    " UPDATE ck_session_name SET profile = new.profile, ord = new.ord, name_lc = new.name_lc,"
    f" rid = CASE WHEN {_same_bucket('rid', _NEW)} THEN rid"
    f" ELSE {_first_free('ck_session_name', _NEW)} END"
    " WHERE profile = old.profile AND ord = old.ord; END",
    "CREATE TRIGGER IF NOT EXISTS ck_sessions_text_au AFTER UPDATE ON ck_sessions"
    f" WHEN new.id IS NOT old.id OR {_NEW} <> {bucket('old')} BEGIN" + _move_digest("new") + " END",
)

#: (content table, its trigram table, its text column, rid → bucket of every row)
_TABLES = (
    (
        "ck_session_name",
        "ck_session_name_trgm",
        "name_lc",
        f"SELECT c.rid, coalesce({bucket('s')}, 0) FROM ck_session_name c"
        " LEFT JOIN ck_sessions s ON s.profile = c.profile AND s.ord = c.ord",
    ),
    (
        "ck_session_text",
        "ck_session_trgm",
        "digest",
        f"SELECT c.rid, {_digest_bucket('c.profile', 'c.id')} FROM ck_session_text c",
    ),
)


def order_rids(backend: Backend) -> bool:
    """Renumber both content tables into their buckets and rebuild their trigram indexes once
    (the sync triggers are set aside meanwhile, so no text is indexed twice). ``False`` while
    migrations 0007 and 0009 could not run (no FTS5 trigrams): searches keep scanning."""
    have = {r[0] for r in backend.query("SELECT name FROM sqlite_master WHERE type='table'")}
    if not {"ck_session_text", "ck_session_name"} <= have:
        return False
    for content, fts, column, buckets in _TABLES:
        rows = sorted((int(b), int(r)) for r, b in backend.query(buckets))
        if not rows:  # a new store: nothing to renumber
            continue
        for suffix in ("ai", "ad", "au"):
            backend.execute(f"DROP TRIGGER IF EXISTS {content}_{suffix}")
        backend.execute(f"UPDATE {content} SET rid = -rid - 1")
        moves: list[tuple[int, int]] = []
        last, nxt = -1, 0
        for base, rid in rows:
            nxt = nxt + 1 if base == last else base
            last = base
            moves.append((nxt, -rid - 1))
        for new, old in moves:
            backend.execute(f"UPDATE {content} SET rid = ? WHERE rid = ?", (new, old))
        backend.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")
        backend.execute(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")
        for stmt in sync_triggers(fts, content, column):
            backend.execute(stmt)
    for stmt in TRIGGERS:
        backend.execute(stmt)
    return True


_COLUMNS = "f.rowid, s.pinned, s.created_at, s.ord, s.value"
_NAME_HITS = (
    f"SELECT {_COLUMNS} FROM ck_session_name_trgm f CROSS JOIN ck_session_name n"
    " ON n.rid = f.rowid CROSS JOIN ck_sessions s ON s.profile = n.profile AND s.ord = n.ord"
    " WHERE ck_session_name_trgm MATCH ? AND n.profile = ? AND s.id IS NOT NULL"
)
_TEXT_HITS = (
    f"SELECT {_COLUMNS} FROM ck_session_trgm f CROSS JOIN ck_session_text t"
    " ON t.rid = f.rowid CROSS JOIN ck_sessions s ON s.profile = t.profile AND s.id = t.id"
    " WHERE ck_session_trgm MATCH ? AND t.profile = ? AND instr(t.digest, ?) > 0"
)


def top_matches(backend: Any, needle: str, profile: str, want: int) -> list[tuple[int, str]] | None:
    """(ord, text) of the first ``want`` index rows (with a usable id) whose name or digest
    contains ``needle``, in the drawer's order: from the first ``want`` matches of names and
    of digests in rowid order, with the rest of the last bucket each reached (its rows' exact
    order is known only from their index rows). ``None`` when the trigram tables cannot
    answer (needle shorter than a trigram or holding a NUL, tables not renumbered yet): the
    caller searches the other way. The store must hold no legacy rows (one id, one row)."""
    if not backend.drawer.ordered_rids or not trigrams_answer(backend, needle) or want <= 0:
        return None
    phrase = '"' + needle.replace('"', '""') + '"'
    found: dict[int, tuple[int, int, int, str]] = {}
    for sql, params in (
        (_NAME_HITS, (phrase, profile)),
        (_TEXT_HITS, (digest_match(needle), profile, needle)),  # the digest checked too
    ):
        # one match more than wanted tells whether the last bucket reached goes on
        hits = backend.query(sql + " ORDER BY f.rowid LIMIT ?", (*params, want + 1))
        if len(hits) > want and hits[want - 1][0] // SPAN == hits[want][0] // SPAN:
            last = int(hits[want][0])
            hits += backend.query(
                sql + " AND f.rowid > ? AND f.rowid < ?",
                (*params, last, last - last % SPAN + SPAN),
            )
        for _rid, pinned, created, ord_, value in hits:
            found[ord_] = (-pinned, -created, -ord_, value)
    return [(-o, v) for _p, _c, o, v in sorted(found.values())[:want]]


class SQLiteDrawerSearch(DrawerSearch):
    """The drawer search on SQLite: what the store's trigram tables can answer, they answer
    (:meth:`use_indexes` says which it has); the rest scans."""

    cross_join = "CROSS JOIN"
    #: Whether session names have their trigram table (migration 0009).
    names_indexed = False

    def use_indexes(self, have: set[str]) -> None:
        """Search through the tables of this store (``have``: which of ``ck_session_text``,
        ``ck_session_fts``, ``ck_session_name`` and ``ck_sessions_text_au`` it holds)."""
        self.names_indexed = "ck_session_name" in have
        if "ck_sessions_text_au" in have:  # migration 0010: rows in the drawer's order
            self.ordered_rids = True
        if "ck_session_text" in have:
            self.digest_table = "ck_session_text"
        elif "ck_session_fts" in have:
            self.digest_table = "ck_session_fts"
            self.digest_keyed = False

    def digest_insert(self, order: tuple[int, int] | None) -> tuple[str, tuple[Any, ...]]:
        if not self.ordered_rids:
            return super().digest_insert(order)
        return DIGEST_INSERT, order or (None, None)

    def digest_rids(self, orders: list[tuple[int, int]]) -> list[int] | None:
        return free_rids(self.backend, orders) if self.ordered_rids else None

    def tidy_search(self) -> None:
        merge_trigram_tables(self.backend)

    def top_matches(self, needle: str, profile: str, want: int) -> list[tuple[int, str]] | None:
        return top_matches(self.backend, needle, profile, want)

    def indexed_search(self, needle: str) -> bool:
        return trigrams_answer(self.backend, needle)

    def match_ords_sql(self, needle: str, profile: str) -> tuple[str, tuple[Any, ...]]:
        found = trigram_match_sql(self.backend, needle, profile)
        return found if found is not None else super().match_ords_sql(needle, profile)
