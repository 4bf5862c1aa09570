"""New saved sessions' bodies written a batch at a time (an import's
:meth:`~.sessions.Sessions.add_many`), each as :meth:`~.body_rows.BodyRows.body_replace` writes
one, in a few statements for many sessions instead of a dozen for each.

A session whose id left anything behind under its name (a body or evicted key, body rows,
search rows, blob references: a store written by other means) is written one by one, by
``body_replace``, which replaces what is there. For the others there is nothing to replace:
their entry rows, ``ck_kv`` marks and search rows go in as multi-row statements spanning
sessions, their blobs in one go.
"""

from __future__ import annotations

from typing import Any

from ..constants import SESSION_BODY_PREFIX
from ..entries import entry_text
from .batch_rows import BATCH_ROWS
from .body_rows import BODY_MARK, Row, digest_of, encode_rows, insert_placed
from .codec import Blob
from .search_index import EVICTED_KEY_PREFIX
from .sql import Tx

#: Bytes of stored text and blobs a :class:`BodyBatch` holds at most before it writes.
BATCH_BYTES = 32_000_000
#: Sessions one statement names at most (two keys each, or three parameters a row: under the
#: 999 parameters SQLite before 3.32 allows).
_CHUNK = 300

Held = tuple[str, list[Any], list[Row], dict[str, Blob], list[str]]


def _taken(tx: Tx, sids: list[str]) -> set[str]:
    """The ids among ``sids`` under which something is stored already."""
    found: set[str] = set()
    for k in range(0, len(sids), _CHUNK):
        chunk = sids[k : k + _CHUNK]
        keys = [p + s for s in chunk for p in (SESSION_BODY_PREFIX, EVICTED_KEY_PREFIX)]
        for (key,) in tx.rows(
            f"SELECT key FROM ck_kv WHERE profile=? AND key IN ({tx.marks(len(keys))})", keys
        ):
            found.add(key.split("_", 1)[1])
        marks = tx.marks(len(chunk))
        sqls = [f"SELECT DISTINCT sid FROM ck_session_items WHERE profile=? AND sid IN ({marks})"]
        if tx._b.search_rows:
            sqls.append(
                "SELECT DISTINCT owner FROM ck_search WHERE profile=? AND place IN ('s','e')"
                f" AND owner IN ({marks})"
            )
        for sql in sqls:
            found.update(r[0] for r in tx.rows(sql, chunk))
        owners = ["k:" + SESSION_BODY_PREFIX + s for s in chunk]
        for (owner,) in tx.rows(
            "SELECT DISTINCT owner FROM ck_blob_refs WHERE profile=?"
            f" AND owner IN ({tx.marks(len(owners))})",
            owners,
        ):
            found.add(owner[len("k:" + SESSION_BODY_PREFIX) :])
    return found


class BodyBatch:
    """Bodies of new sessions (validated), encoded as they come and written together once
    :data:`~.batch_rows.BATCH_ROWS` of them or :data:`BATCH_BYTES` are held."""

    def __init__(self, tx: Tx) -> None:
        self.tx = tx
        self.held: list[Held] = []
        self.size = 0

    def add(self, sid: str, entries: list[Any]) -> str:
        """Hold the body of ``sid`` (its limits checked: it was validated); returns its
        search digest. Each entry's text is read once: its rows' digest lengths, the digest
        and its message-search rows are all made from it."""
        texts = [entry_text(e) for e in entries]
        pieces = [t.lower().replace("\x00", "") for t in texts]  # as digest_piece reads them
        rows, blobs = encode_rows(entries, SESSION_BODY_PREFIX + sid, checked=True, pieces=pieces)
        self.held.append((sid, entries, rows, blobs, texts))
        self.size += sum(len(t) for t, _d in rows) + sum(len(b.data) for b in blobs.values())
        if len(self.held) >= BATCH_ROWS or self.size >= BATCH_BYTES:
            self.flush()
        return digest_of(pieces)

    def flush(self) -> None:
        """Write what is held."""
        held, self.held, self.size = self.held, [], 0
        if not held:
            return
        tx = self.tx
        taken = _taken(tx, [h[0] for h in held])
        for sid, entries, rows, own, _t in held:
            if sid in taken:  # replaces what is there, as a one-by-one write does
                tx.sessions.body_replace(SESSION_BODY_PREFIX + sid, rows, own, value=entries)
        fresh = [h for h in held if h[0] not in taken]
        if not fresh:
            return
        tx.bump("kv")
        blobs: dict[str, Blob] = {}
        for _s, _e, _r, theirs, _t in fresh:
            blobs.update(theirs)
        tx.blobs.put(blobs)
        placed = [
            (sid, pos, d, t) for sid, _e, rows, _b, _t in fresh for pos, (t, d) in enumerate(rows)
        ]
        insert_placed(tx._b.execute, tx.profile, placed)
        for k in range(0, len(fresh), _CHUNK):
            keys = [SESSION_BODY_PREFIX + h[0] for h in fresh[k : k + _CHUNK]]
            tx._b.execute(
                "INSERT INTO ck_kv (profile, key, value) VALUES "
                + ",".join(["(?,?,?)"] * len(keys)),
                [v for key in keys for v in (tx.profile, key, BODY_MARK)],
            )
        tx.search.sessions_new([(sid, entries, texts) for sid, entries, _r, _b, texts in fresh])
        for sid, _e, _r, theirs, _t in fresh:
            if theirs:
                tx.blobs.add_refs("k:" + SESSION_BODY_PREFIX + sid, theirs)
