"""The drawer's rows of one profile: ``tx.sessions`` of :class:`~.sql.Tx`.

The sessions index as rows (:mod:`.index_rows`, written a batch at a time by
:mod:`.batch_rows`), the saved bodies as rows (:mod:`.body_rows`), and here the search digest
of each saved session (``ck_session_digest``, or the drawer's digest table of the backend) and
the ``savedSessions`` value as stored (:meth:`SessionRows.index_light`,
:meth:`SessionRows.put_index`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..constants import SESSIONS_INDEX_KEY
from ..errors import CorruptValue
from . import codec
from .batch_rows import row_columns
from .body_rows import BodyRows
from .index_rows import IndexRows


class SessionRows(IndexRows, BodyRows):
    """The sessions index, the saved bodies and the digests of one profile (``tx.sessions``)."""

    def index_light(self) -> Any:
        """The ``savedSessions`` value as stored: rows without their digests (None if absent)."""
        text = self.tx.kv.raw([SESSIONS_INDEX_KEY]).get(SESSIONS_INDEX_KEY)
        if text is None:
            return None
        try:
            return self.tx.blobs.decode(text)
        except CorruptValue:
            return None

    def put_index(self, value: Any) -> None:
        """Store the sessions index: digests carried by rows go to ``ck_session_digest``, rows
        without one keep theirs, and digests of rows no longer listed are deleted."""
        listed: set[str] = set()
        carried: dict[str, str] = {}
        light: Any = value
        if isinstance(value, list):
            light = []
            for row in value:
                if isinstance(row, dict) and isinstance(row.get("id"), str):
                    listed.add(row["id"])
                    if isinstance(row.get("textDigest"), str):
                        carried[row["id"]] = row["textDigest"]
                        row = {k: v for k, v in row.items() if k != "textDigest"}
                light.append(row)
        # one batched delete (old digests of carried rows, and of rows no longer listed), then
        # plain inserts: no per-row delete, which scans the whole FTS5 table on SQLite. The
        # rows go first, so each digest is written where the rows' order puts it (SQLite).
        self.digest_delete([i for i in self.digest_ids() if i not in listed or i in carried])
        if isinstance(light, list):
            self.index_write_all(light)
        else:
            self.index_drop_rows()
            text, blobs = codec.encode(light)
            self.tx.kv.write_row(SESSIONS_INDEX_KEY, text, blobs)
        for sid, digest in carried.items():
            self.digest_add(sid, digest)

    def digest_put(self, session_id: str, digest: str) -> None:
        """Replace one session's digest (on the FTS5 table the delete scans every digest: its
        id is not indexed, so fresh ids go through :meth:`digest_add`)."""
        self.tx.run(
            f"DELETE FROM {self._b.drawer.digest_table} WHERE profile=? AND id=?", (session_id,)
        )
        self.digest_add(session_id, digest)

    def digest_add(self, session_id: str, digest: str, row: Any = None) -> None:
        """Insert the digest of a session that has none yet (no delete first: an id not in the
        index has no digest row, since every index write removes the rows of unlisted ids).
        ``row``: the session's index row when it is not written yet (it orders the digest)."""
        self.tx.search_written = True
        order = None
        if row is not None:
            _sid, created, pinned, _name, _legacy = row_columns(row)
            order = (pinned, created)  # as the index row will store them
        sql, extra = self._b.drawer.digest_insert(order)
        self.tx.run(sql, (session_id, digest, *extra))

    def digest_ids(self) -> list[str]:
        return [
            r[0]
            for r in self.tx.rows(f"SELECT id FROM {self._b.drawer.digest_table} WHERE profile=?")
        ]

    def digest_all(self) -> dict[str, str]:
        """Every session's digest, with the text of rows appended since (not folded yet)."""
        out = dict(
            self.tx.rows(f"SELECT id, digest FROM {self._b.drawer.digest_table} WHERE profile=?")
        )
        for sid, (after, more) in self.digests_extensions().items():
            if sid in out:
                out[sid] = self.digest_extended(out[sid], after, more)
        return out

    def digest_delete(self, ids: Sequence[str]) -> None:
        self.tx.search_written = self.tx.search_written or bool(ids)
        for chunk in self.tx.chunks(ids):
            self.tx.run(
                f"DELETE FROM {self._b.drawer.digest_table} WHERE profile=? AND id IN ({self.tx.marks(len(chunk))})",
                chunk,
            )
