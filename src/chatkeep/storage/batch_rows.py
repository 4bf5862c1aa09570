"""Sessions written a batch at a time (an import's :meth:`~.sessions.Sessions.add_many`): index
rows, then digests, each in multi-row statements, in rowid order.

FTS5 writes what it has indexed as a new segment whenever a rowid is lower than the one before
it; SQLite numbers the trigram rows in the drawer's order (:mod:`.sqlite_order`), which an export
does not follow. Row by row, an import left nearly one segment per session (then merged them);
a batch sorted into rowid order goes in as one. Each row lands at the rowid a one-by-one save
gives it, so searches see the same drawer.

:class:`BatchRows` is a base of :class:`~.index_rows.IndexRows` (part of ``tx.sessions``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..constants import SESSIONS_INDEX_KEY
from . import codec
from .tx_part import TxPart

OWNER = "k:" + SESSIONS_INDEX_KEY
_BIG = 2**62
#: New sessions one batch writes together (held in memory meanwhile: rows and digests).
BATCH_ROWS = 500
#: Parameters one statement carries at most: SQLite before 3.32 allows no more than 999. (FTS5
#: also writes a segment at the end of each statement; chunks this size cost no more time, and
#: the ``optimize`` after an import merges what they leave.)
_PARAMS = 999
_LAST_SECOND = (1 << 33) - 1  # the last second SQLite's rowid buckets tell apart
#: Digest characters a :class:`SessionBatch` holds at most before it writes (memory stays
#: bounded whatever the import).
BATCH_CHARS = 8_000_000


#: An index row's columns: id (``None``: not usable), created_at, pinned, name_lc, legacy.
Columns = tuple[str | None, int, int, str, int]


def row_columns(item: Any) -> Columns:
    if not isinstance(item, dict):
        return None, 0, 0, "", 0
    raw_id = item.get("id")
    # an id no key can be made of (not a string, empty, NUL, too long) is stored as NULL and
    # marks the row legacy: the next index read migrates it to a fresh id (the row's value
    # keeps the original). A NUL cannot go into a PostgreSQL text column at all.
    usable = isinstance(raw_id, str) and raw_id and "\x00" not in raw_id and len(raw_id) <= 192
    sid = raw_id if usable else None
    created = item.get("createdAt")
    num = created if isinstance(created, int | float) and not isinstance(created, bool) else 0
    when = int(max(-_BIG, min(_BIG, num))) if num == num else 0  # NaN cannot be stored anyway
    pinned = 1 if item.get("pinned") else 0
    name_lc = str(item.get("name", "")).lower().replace("\x00", "")
    return sid, when, pinned, name_lc, int("history" in item or not usable)


class BatchRows(TxPart):
    """Multi-row writes of index rows and digests (part of ``tx.sessions``)."""

    if TYPE_CHECKING:

        def index_ensure_rows(self) -> None: ...

    def index_append_many(
        self, items: list[dict[str, Any]], columns: list[Columns] | None = None
    ) -> None:
        """Add rows at the end of the list in multi-row statements, in the drawer's order: the
        triggers put their names into the trigram index in one go (``columns``: their
        :func:`row_columns`, when the caller has them)."""
        if not items:
            return
        cols = columns if columns is not None else [row_columns(item) for item in items]
        self.index_ensure_rows()
        self.tx.bump("kv")
        r = self.tx.rows("SELECT max(ord) FROM ck_sessions WHERE profile=?")
        nxt = 0 if not r or r[0][0] is None else int(r[0][0]) + 1
        ids = [c[0] for c in cols if c[0] is not None]
        seen = {  # ids other rows hold already: a row repeating one is legacy
            v[0]
            for k in range(0, len(ids), BATCH_ROWS)
            for v in self.tx.rows(
                "SELECT id FROM ck_sessions WHERE profile=? AND id IN"
                f" ({self.tx.marks(len(ids[k : k + BATCH_ROWS]))})",
                ids[k : k + BATCH_ROWS],
            )
        }
        values: list[Any] = []
        keys: list[tuple[int, int]] = []
        for item, (sid, when, pinned, name_lc, legacy) in zip(items, cols, strict=True):
            text, blobs = codec.encode(item)
            if blobs:
                self.tx.blobs.put(blobs)
                self.tx.blobs.add_refs(OWNER, blobs)
            values.append((nxt, sid, when, pinned, name_lc, int(legacy or sid in seen), text))
            keys.append((1 - pinned, -max(0, min(when // 1000, _LAST_SECOND))))
            seen.add(sid)
            nxt += 1
        self.tx.search_written = True
        # in the drawer's order, by SQLite's buckets (:mod:`.sqlite_order`; a bucket's rows as
        # listed): the name rows then get ascending rowids, and FTS5 writes a segment
        # whenever a rowid is lower than the one before it
        order = sorted(range(len(values)), key=keys.__getitem__)
        self._insert_rows(
            "ck_sessions (profile, ord, id, created_at, pinned, name_lc, legacy, value)",
            [values[k] for k in order],
        )

    def _insert_rows(self, into: str, values: list[Any]) -> None:
        """Multi-row ``INSERT INTO {into}`` of this profile's ``values`` (tuples without the
        profile), as many to a statement as :data:`_PARAMS` allows."""
        step = max(1, _PARAMS // (len(values[0]) + 1)) if values else 1
        for k in range(0, len(values), step):
            chunk = values[k : k + step]
            row = "(?," + self.tx.marks(len(chunk[0])) + ")"
            self._b.execute(
                f"INSERT INTO {into} VALUES " + ",".join([row] * len(chunk)),
                [v for t in chunk for v in (self.profile, *t)],
            )

    def digest_add_many(
        self, digests: list[tuple[str, str, dict[str, Any]]], columns: list[Columns] | None = None
    ) -> None:
        """Insert the digests of sessions that have none yet, as ``(id, digest, index row)``, in
        multi-row statements in rowid order (the trigram index takes them in one go), each
        where :meth:`~.session_rows.SessionRows.digest_add` would put it (``columns``: the rows'
        :func:`row_columns`, when the caller has them)."""
        if not digests:
            return
        self.tx.search_written = True
        if columns is None:
            columns = [row_columns(row) for _i, _d, row in digests]
        orders = [(c[2], c[1]) for c in columns]
        rids = self._b.drawer.digest_rids(orders)
        table = self._b.drawer.digest_table
        if rids is None:
            self._insert_rows(f"{table} (profile, id, digest)", [(i, d) for i, d, _r in digests])
            return
        # in rowid order: FTS5 writes a segment whenever a rowid is lower than the one before
        values = sorted(
            [(i, d, rid) for (i, d, _r), rid in zip(digests, rids, strict=True)],
            key=lambda v: v[2],
        )
        self._insert_rows(f"{table} (profile, id, digest, rid)", values)


class SessionBatch:
    """New sessions' index rows and digests, held until :data:`BATCH_ROWS` of them (or
    :data:`BATCH_CHARS` of digest) are written together: the rows, then the digests (each then
    goes straight into its session's place in the search order)."""

    def __init__(self, sessions: BatchRows) -> None:
        self.sessions = sessions  # a transaction's ``tx.sessions``
        self.rows: list[dict[str, Any]] = []
        self.columns: list[Columns] = []
        self.digests: list[tuple[str, str, dict[str, Any]]] = []
        self.held = 0

    def add(self, row: dict[str, Any], digest: str) -> None:
        """Hold a new session's index row (its ``id`` not saved yet) and its digest."""
        self.rows.append(row)
        self.columns.append(row_columns(row))  # once, for the row and for its digest
        self.digests.append((row["id"], digest, row))
        self.held += len(digest)
        if len(self.rows) >= BATCH_ROWS or self.held >= BATCH_CHARS:
            self.flush()

    def flush(self) -> None:
        """Write what is held."""
        self.sessions.index_append_many(self.rows, self.columns)
        self.sessions.digest_add_many(self.digests, self.columns)
        self.rows, self.columns, self.digests, self.held = [], [], [], 0
