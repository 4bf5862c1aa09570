"""The sessions index as one row per session (``ck_sessions``), behind the ``savedSessions`` key.

``savedSessions`` is still read and written as one list value (SPEC §4.1); underneath, each list
item is its own row, ordered by ``ord``, with the columns a write or a search needs (``id``,
``created_at``, ``pinned``, ``name_lc``, ``legacy`` = the item embeds a ``history``). The ``ck_kv``
row of the key then holds only :data:`ROWS_MARK`; a value that is not a list is kept in ``ck_kv``
as before. Saving, updating, renaming, pinning or deleting one session writes that session's row
(and its digest) only, so their cost does not grow with the drawer; a drawer search selects the
matching rows in SQL. Blob references of rows (only legacy rows embed images) belong to the key's
owner ``k:savedSessions`` and are reset whenever the whole list is written.

:class:`IndexRows` is part of ``tx.sessions`` (:class:`~.session_rows.SessionRows`) of
:class:`~.sql.Tx`.
"""

from __future__ import annotations

from json import loads
from typing import Any

from ..constants import SESSIONS_INDEX_KEY
from ..errors import CorruptValue
from . import codec
from .batch_rows import OWNER, BatchRows, row_columns
from .codec import Blob

#: ``ck_kv`` text of ``savedSessions`` when its items live in ``ck_sessions``. A stored string
#: never encodes to it (strings starting with NUL are escaped with one more NUL).
ROWS_MARK = '"\\u0000rows"'

MIGRATION = (
    "CREATE TABLE IF NOT EXISTS ck_sessions (profile TEXT NOT NULL, ord BIGINT NOT NULL,"
    " id TEXT, created_at BIGINT NOT NULL, pinned INTEGER NOT NULL, name_lc TEXT NOT NULL,"
    " legacy INTEGER NOT NULL, value TEXT NOT NULL, PRIMARY KEY (profile, ord))",
    "CREATE INDEX IF NOT EXISTS ck_sessions_id ON ck_sessions (profile, id)",
    # the per-call "any legacy row left?" probe of sessions.index() reads this index only
    "CREATE INDEX IF NOT EXISTS ck_sessions_legacy ON ck_sessions (profile) WHERE legacy = 1",
)

#: Migration 0008: the drawer's order as an index (a page of the list reads only its rows),
#: and rows whose id repeats an earlier row's marked ``legacy`` (rows written from then on are
#: marked as they are written), so "does the index need its migration?" is one indexed probe.
ORDER_MIGRATION = (
    "CREATE INDEX IF NOT EXISTS ck_sessions_order"
    " ON ck_sessions (profile, pinned DESC, created_at DESC, ord DESC)",
    "UPDATE ck_sessions SET legacy = 1 WHERE legacy = 0 AND EXISTS (SELECT 1 FROM ck_sessions o"
    " WHERE o.profile = ck_sessions.profile AND o.id = ck_sessions.id AND o.ord <> ck_sessions.ord)",
)
#: The drawer's order: pinned first, then newest, then later in the list (a save within the
#: same millisecond as another is the newer one).
_ORDER = " ORDER BY {p}pinned DESC, {p}created_at DESC, {p}ord DESC"
#: Pages' worth of rows of the drawer's order a search looks through directly at most: a query
#: that many sessions match fills its page from the newest rows without reading the index.
SCAN_PAGES = 2
#: Rows of the drawer's order a search reads first, to tell how densely its needle is held.
PROBE_ROWS = 8
_ALL = 2**62  # "no limit" in a LIMIT clause both dialects accept


class IndexRows(BatchRows):
    """Row-level operations on the sessions index (part of ``tx.sessions``)."""

    # -- whole list ---------------------------------------------------------------------------
    def index_texts(self) -> list[tuple[int, str]]:
        """(ord, stored text) of every index row, in order."""
        return [
            (int(o), v)
            for o, v in self.tx.rows(
                "SELECT ord, value FROM ck_sessions WHERE profile=? ORDER BY ord"
            )
        ]

    def index_joined(self) -> str:
        """The stored text of the whole list (as ``ck_kv`` held it before rows existed)."""
        return "[" + ",".join(v for _o, v in self.index_texts()) + "]"

    def index_write_all(self, items: list[Any]) -> None:
        """Replace every row by ``items`` (already without digests) and mark the key."""
        self.tx.run("DELETE FROM ck_sessions WHERE profile=?")
        blobs: dict[str, Blob] = {}
        for k, item in enumerate(items):
            text, item_blobs = codec.encode(item)
            blobs.update(item_blobs)
            self._insert(k, item, text)
        self.tx.kv.write_row(SESSIONS_INDEX_KEY, ROWS_MARK, blobs)

    def index_drop_rows(self) -> None:
        self.tx.search_written = True
        self.tx.run("DELETE FROM ck_sessions WHERE profile=?")

    def index_is_rows(self) -> bool:
        r = self.tx.rows("SELECT value FROM ck_kv WHERE profile=? AND key=?", (SESSIONS_INDEX_KEY,))
        return bool(r) and r[0][0] == ROWS_MARK

    def index_ensure_rows(self) -> None:
        """Make the key a row list (an absent or non-list value counts as an empty list)."""
        if not self.index_is_rows():
            self.index_write_all([])

    # -- one row ------------------------------------------------------------------------------
    def _repeated(self, sid: str | None, ord_: int) -> bool:
        """Whether another row already holds ``sid`` (that row set needs the migration)."""
        return sid is not None and bool(
            self.tx.rows(
                "SELECT 1 FROM ck_sessions WHERE profile=? AND id=? AND ord<>? LIMIT 1", (sid, ord_)
            )
        )

    def _insert(self, ord_: int, item: Any, text: str) -> None:
        self.tx.search_written = True
        sid, when, pinned, name_lc, legacy = row_columns(item)
        legacy = legacy or int(self._repeated(sid, ord_))
        self.tx.run(
            "INSERT INTO ck_sessions (profile, ord, id, created_at, pinned, name_lc, legacy, value)"
            " VALUES (?,?,?,?,?,?,?,?)",
            (ord_, sid, when, pinned, name_lc, legacy, text),
        )

    def index_append(self, item: dict[str, Any]) -> None:
        """Add one row at the end of the list."""
        self.index_append_many([item])

    def index_find(self, session_id: str) -> tuple[int, dict[str, Any]] | None:
        """(ord, item) of the first row with ``session_id``, or None."""
        # sorted here: ORDER BY ord would make the planner walk the primary key, not the id index
        for o, text in sorted(
            self.tx.rows(
                "SELECT ord, value FROM ck_sessions WHERE profile=? AND id=?", (session_id,)
            )
        ):
            try:
                item = codec.decode(text, self.tx.blobs.fetch_urls)
            except CorruptValue:
                continue
            if isinstance(item, dict):
                return int(o), item
        return None

    def index_replace(self, ord_: int, item: dict[str, Any]) -> None:
        """Rewrite the row at ``ord_`` (its place in the list is kept)."""
        self.tx.search_written = True
        self.tx.bump("kv")
        text, blobs = codec.encode(item)
        self.tx.blobs.put(blobs)
        self.tx.blobs.add_refs(OWNER, blobs)
        sid, when, pinned, name_lc, legacy = row_columns(item)
        legacy = legacy or int(self._repeated(sid, ord_))
        self._b.execute(
            "UPDATE ck_sessions SET id=?, created_at=?, pinned=?, name_lc=?, legacy=?, value=?"
            " WHERE profile=? AND ord=?",
            (sid, when, pinned, name_lc, legacy, text, self.profile, ord_),
        )

    def index_delete_ids(self, ids: list[str]) -> None:
        self.tx.search_written = True
        self.tx.bump("kv")
        for sid in ids:
            self.tx.run("DELETE FROM ck_sessions WHERE profile=? AND id=?", (sid,))

    def index_count(self) -> int:
        return int(self.tx.rows("SELECT count(*) FROM ck_sessions WHERE profile=?")[0][0])

    def index_oldest_unpinned(self, keep: str, n: int) -> list[str]:
        """Ids of the ``n`` oldest unpinned rows other than ``keep`` (ties: list order)."""
        return [
            r[0]
            for r in self.tx.rows(
                "SELECT id FROM ck_sessions WHERE profile=? AND pinned=0 AND id IS NOT NULL"
                " AND id<>? ORDER BY created_at, ord LIMIT ?",
                (keep, n),
            )
        ]

    def index_has_id(self, session_id: str) -> bool:
        """Whether a row holds ``session_id`` (one indexed probe, nothing decoded)."""
        return bool(
            self.tx.rows(
                "SELECT 1 FROM ck_sessions WHERE profile=? AND id=? LIMIT 1", (session_id,)
            )
        )

    def index_has_legacy(self) -> bool:
        return bool(self.tx.rows("SELECT 1 FROM ck_sessions WHERE profile=? AND legacy=1 LIMIT 1"))

    def index_ids(self) -> list[str]:
        """Every usable session id (no row decoded)."""
        return [
            r[0]
            for r in self.tx.rows("SELECT id FROM ck_sessions WHERE profile=? AND id IS NOT NULL")
        ]

    def index_page(
        self, needle: str, limit: int | None, offset: int = 0, legacy: bool | None = None
    ) -> list[tuple[int, str]]:
        """(ord, text) of the rows with a usable id, in the drawer's order, whose lower-cased
        name or digest contains ``needle`` (every row when it is empty), skipping ``offset``
        and at most ``limit`` (``None``: all).

        Where the trigram rows are kept in the drawer's order (SQLite,
        :attr:`~.drawer_search.DrawerSearch.ordered_rids`) the index reads the page's first
        matches only, whatever the query. A needle no index answers (shorter than a trigram) is
        looked for in the drawer's order, in SQL, up to the page's last match. Otherwise a
        search first looks through the newest rows directly (a server: :meth:`_look_through`;
        an embedded file: :data:`SCAN_PAGES` pages' worth); when they fill the page it is
        done, so a query most sessions match costs the same in a drawer of any size. Otherwise
        the digest index answers it (``pg_trgm`` on PostgreSQL): a query few sessions match
        reads only those, and only the page's rows are joined to their values. ``legacy``:
        whether the profile holds legacy rows, when the caller knows."""
        limit = None if limit is None else min(limit, _ALL)
        offset = min(offset, _ALL)
        page = f" LIMIT {_ALL if limit is None else limit} OFFSET {offset}"
        base = "SELECT ord, value FROM ck_sessions WHERE profile=? AND id IS NOT NULL"
        fn = self._b.substring_fn
        if not needle:
            return [(int(o), v) for o, v in self.tx.rows(base + _ORDER.format(p="") + page)]
        if "\x00" in needle:  # names and digests are searched without their NULs
            return []
        if limit is not None and self._b.drawer.digest_keyed:
            want = min(offset + limit, _ALL)  # no page ends further (every LIMIT is a bigint)
            if self._b.drawer.ordered_rids:
                if legacy is None:
                    legacy = self.index_has_legacy()
                top = None if legacy else self._b.drawer.top_matches(needle, self.profile, want)
                if top is not None:
                    return top[offset:want]
            join = (
                f" FROM ck_sessions s LEFT JOIN {self._b.drawer.digest_table} d"
                " ON d.profile = s.profile AND d.id = s.id WHERE s.profile=? AND s.id IS NOT NULL"
            )
            if not self._b.drawer.indexed_search(needle):  # no index answers it (a short needle):
                return [  # the drawer in its order, read up to the page's last match
                    (int(o), v)
                    for o, v in self._b.query(
                        f"SELECT s.ord, s.value{join} AND ({fn}(s.name_lc, ?) > 0"
                        f" OR {fn}(d.digest, ?) > 0)" + _ORDER.format(p="s.") + page,
                        (self.profile, needle, needle),
                    )
                ]
            scan = min(SCAN_PAGES * want, _ALL)
            if self._b.local:  # an embedded file: Python's substring search is the faster
                seen = [
                    (o, v if needle in n or (d is not None and needle in d) else None)
                    for o, v, n, d in self._b.query(
                        f"SELECT s.ord, s.value, s.name_lc, d.digest{join}"
                        + _ORDER.format(p="s.")
                        + " LIMIT ?",
                        (self.profile, scan + 1),
                    )
                ]
                hits = [(int(o), v) for o, v in seen if v is not None]
                if len(hits) >= want or len(seen) <= scan:  # the page, or the whole drawer
                    return hits[offset:want]
            else:
                found = self._look_through(needle, join, want, scan, offset, page)
                if found is not None:
                    return found
        sql, params = self._index_page_sql(needle, page if limit is not None or offset else "")
        return [(int(o), v) for o, v, _p, _c in self._b.query(sql + _ORDER.format(p="t."), params)]

    def _index_page_sql(self, needle: str, page: str) -> tuple[str, tuple[Any, ...]]:
        """The digest index's matches of ``needle``, cut to ``page`` (a LIMIT … OFFSET …
        clause, or empty), as ``ord, value, pinned, created_at``, with the parameters: only
        the page's rows are read whole (CROSS JOIN fixes that order on SQLite)."""
        sql, params = self._b.drawer.match_ords_sql(needle, self.profile)
        if page:  # a page is cut from the matches' keys first
            sql = f"SELECT ord, pinned, created_at FROM ({sql}) m{_ORDER.format(p='')}{page}"
        return (
            f"SELECT s.ord, s.value, t.pinned, t.created_at FROM ({sql}) t"
            f" {self._b.drawer.cross_join} ck_sessions s ON s.profile = ? AND s.ord = t.ord",
            (*params, self.profile),
        )

    def _look_through(
        self, needle: str, join: str, want: int, scan: int, offset: int, page: str
    ) -> list[tuple[int, str]] | None:
        """The page (from ``offset`` up to ``want``) of ``needle``'s matches in the drawer's
        order (``page``: that LIMIT … OFFSET … clause), found from the drawer's newest rows read
        on the server (only the matching rows come over the wire), or ``None`` when the index
        is to be asked after all. The newest few rows tell how densely the needle is held:
        they fill the page, or the drawer ends,
        or enough of them hold it to fill the page within ``scan`` rows (read on, only as far
        as the page's last match), or too few do: then the trigram index answers in the same
        statement (a one-time filter skips it otherwise), so a rare search or a miss is one
        round trip. Every limit is written out (an int): a plan made for any limit would have
        to expect a tenth of the drawer, and be re-planned every time."""
        self._b.drawer.reuse_search_plans()
        fn = self._b.substring_fn
        hit = f"{fn}(name_lc, ?) > 0 OR {fn}(dg, ?) > 0"
        rows = f"SELECT s.ord, s.value, s.pinned, s.created_at, s.name_lc, d.digest AS dg{join}"
        first = min(want, PROBE_ROWS) + 1
        # fewer hits than this among the first rows: too few to fill the page within ``scan``
        # rows (hits * scan < want * first, with no product the server could overflow)
        sparse = -(-want * first // max(scan, 1))  # (a page of none: scan 0)
        index_sql, params = self._index_page_sql(needle, page)
        found = self._b.query(
            f"WITH p AS MATERIALIZED (SELECT ord, CASE WHEN {hit} THEN value END AS v, pinned,"
            f" created_at FROM ({rows}{_ORDER.format(p='s.')} LIMIT {first}) t)"
            " SELECT 0 AS part, ord, v, pinned, created_at, (SELECT count(*) FROM (SELECT 1"
            f" FROM ck_sessions WHERE profile=? AND id IS NOT NULL{_ORDER.format(p='')}"
            f" LIMIT {scan + 1}) c) AS n FROM p UNION ALL SELECT 1, t.*, 0 FROM ({index_sql}) t"
            f" WHERE (SELECT count(*) = {first} AND count(v) < {want}"
            f" AND count(v) < {sparse} FROM p)"
            " ORDER BY part, " + _ORDER.format(p="").removeprefix(" ORDER BY "),
            (needle, needle, self.profile, self.profile, *params),
        )
        probe = [r for r in found if r[0] == 0]
        hits = [(int(r[1]), r[2]) for r in probe if r[2] is not None]
        if len(probe) < first or len(hits) >= want:  # the whole drawer, or the page
            return hits[offset:want]
        if len(hits) < sparse:  # too few hold it: the index answered
            return [(int(r[1]), r[2]) for r in found if r[0] == 1]
        hits += [
            (int(o), v)
            for o, v in self._b.query(
                f"SELECT ord, value FROM ({rows}{_ORDER.format(p='s.')}"
                f" LIMIT {scan - first} OFFSET {first}) t WHERE {hit}"
                f"{_ORDER.format(p='')} LIMIT {want - len(hits)}",
                (self.profile, needle, needle),
            )
        ]
        drawer = probe[0][5]  # its rows, counted up to one more than the look-through's
        return hits[offset:want] if len(hits) >= want or drawer <= scan else None


def convert_all_profiles(backend: Any) -> bool:
    """Migration step: every profile's ``savedSessions`` list moves from ``ck_kv`` into rows."""
    for profile, text in backend.query(
        "SELECT profile, value FROM ck_kv WHERE key=?", (SESSIONS_INDEX_KEY,)
    ):
        try:
            items = loads(text)  # markers unresolved: rows keep the stored form as it is
        except ValueError:
            continue
        if not isinstance(items, list):
            continue
        for k, item in enumerate(items):
            sid, when, pinned, name_lc, legacy = row_columns(item)
            backend.execute(
                "INSERT INTO ck_sessions (profile, ord, id, created_at, pinned, name_lc, legacy,"
                " value) VALUES (?,?,?,?,?,?,?,?)",
                (profile, k, sid, when, pinned, name_lc, legacy, codec.dumps(item)),
            )
        backend.execute(
            "UPDATE ck_kv SET value=? WHERE profile=? AND key=?",
            (ROWS_MARK, profile, SESSIONS_INDEX_KEY),
        )
    return True
