"""The message-search index (SPEC §16): one row per chunk of every entry's text, wherever the
entry is kept, written by the same transaction that writes the entry.

``ck_search`` rows: ``place`` ``h`` (live history, ``pos`` = the row's ``ck_history.pos``),
``a`` (archive, ``pos`` = ``ck_archive.seq``), ``s`` (a saved session's body, ``owner`` = its
id, ``pos`` = the entry's index in the body) or ``e`` (the same for an evicted session);
``part`` the chunk's number, ``th`` a fingerprint of the entry's text (a rewritten body
re-indexes only the entries that changed), ``body`` the chunk (:mod:`.search_text`). A text
index over ``body`` answers substring queries: FTS5 with the trigram tokenizer on SQLite
(:mod:`.search_schema`), ``pg_trgm`` on PostgreSQL.

:class:`SearchRows` is ``tx.search`` of :class:`~.sql.Tx`; the row operations of the live history,
the archive and the key/value area call it, so every write path keeps the index exact: an
append, the live window's move to the archive (rows change place, no text is read again), a
session's save, update, load, import, eviction and restore, a repair, a delete (every row of
the session goes) and a profile wipe.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..constants import SESSION_BODY_PREFIX
from ..errors import CorruptValue
from . import codec
from .body_rows import BODY_MARK
from .codec import MARK, Blob
from .search_text import chunks, entry_fields, stored_text, text_hash
from .tx_part import TxPart

EVICTED_KEY_PREFIX = "evicted_"  # as :data:`.evicted.EVICTED_PREFIX` (that module imports Tx)
#: Places a row can be in, by the name a search hit gives them.
PLACES = {"live": "h", "archive": "a", "session": "s", "evicted": "e"}
NAMES = {v: k for k, v in PLACES.items()}

_INSERT = (
    "INSERT INTO ck_search (profile, place, owner, pos, part, role, created_at, th, body) VALUES "
)
_ROW = "(?,?,?,?,?,?,?,?,?)"
#: Rows one statement writes at most (nine parameters each: SQLite before 3.32 allows 999).
_ROWS_PER_STATEMENT = 111

Item = tuple[int, str, int | None, str, str]  # (pos, role, createdAt, th, text)


#: ``value`` of :meth:`SearchRows.key_written` when the caller has only the text.
NOT_GIVEN: Any = object()


def _as_is(s: str) -> str:
    """A string of a value not encoded: its text as it is."""
    return s


def entry_item(value: Any, pos: int, text: str) -> Item | None:
    """What one entry (the value itself) gives the index, from its text as
    :func:`~chatkeep.entries.entry_text` reads it (``None``: no text to index): what
    :meth:`SearchRows.items` gives for it, the text not read from the entry again."""
    text = text.replace("\x00", "")
    if not text:
        return None
    role, created = entry_fields(value)
    return pos, role, created, text_hash(role, text), text


class SearchRows(TxPart):
    """Upkeep of one profile's search rows (``tx.search``)."""

    # -- reading stored entries -----------------------------------------------------------------
    def _resolver(self, blobs: dict[str, Blob] | None) -> Any:
        """A function giving back a NUL-prefixed stored string: a long text from ``blobs`` or,
        when not there, from the blob table (text blobs only: never image bytes)."""

        def resolve(s: str) -> str:
            if not s.startswith(MARK):
                return s[1:]  # an escaped string that began with NUL
            h = s[len(MARK) :]
            blob = (blobs or {}).get(h)
            if blob is not None:
                return blob.url() if blob.prefix is None else ""
            found = self._b.query(
                "SELECT data FROM ck_blobs WHERE profile=? AND hash=? AND prefix IS NULL",
                (self.profile, h),
            )
            return bytes(found[0][0]).decode("utf-8", "replace") if found else ""

        return resolve

    def items(
        self, value: Any, pos: int, blobs: dict[str, Blob] | None, resolve: Any = None
    ) -> Item | None:
        """What one stored entry gives the index (``None``: no text to index); ``resolve``:
        how NUL-prefixed strings read (by default, as stored: :meth:`_resolver`)."""
        text = stored_text(value, resolve or self._resolver(blobs)).replace("\x00", "")
        if not text:
            return None
        role, created = entry_fields(value)
        return pos, role, created, text_hash(role, text), text

    def _insert_items(self, place: str, owner: str, items: Iterable[Item]) -> None:
        """Write the rows of ``items``, a few hundred to a statement."""
        self._insert_owned(place, [(owner, item) for item in items])

    def _insert_owned(self, place: str, items: Iterable[tuple[str, Item]]) -> None:
        """Write the rows of ``(owner, item)`` pairs (of one owner or several)."""
        rows = [
            (self.profile, place, owner, pos, part, role, created, th, chunk)
            for owner, (pos, role, created, th, text) in items
            for part, chunk in enumerate(chunks(text))
        ]
        for k in range(0, len(rows), _ROWS_PER_STATEMENT):
            chunk = rows[k : k + _ROWS_PER_STATEMENT]
            self._b.execute(_INSERT + ",".join([_ROW] * len(chunk)), [v for r in chunk for v in r])
        if rows:
            self.tx.search_added += len(rows)
            self.written_rows()

    def written_rows(self) -> None:
        """Hook: search rows were written (the semantic side queues their chunks)."""
        return None

    # -- the live history and the archive ------------------------------------------------------
    def put(
        self,
        place: str,
        pos: int,
        text: str,
        blobs: dict[str, Blob],
        *,
        replace: bool = False,
        value: Any = None,
    ) -> None:
        """Index one live (``h``) or archived (``a``) row just written as ``text``; ``value``:
        the entry that was encoded as ``text``, when the caller has it (not parsed again)."""
        if not self._b.search_rows:
            return
        if replace:
            self.drop(place, "", [pos])
        if value is not None:  # the value itself: its strings are what they say
            item = self.items(value, pos, None, _as_is)
        else:
            try:
                stored = codec.loads_stored(text)
            except CorruptValue:
                return
            item = self.items(stored, pos, blobs)
        if item is not None:
            self._insert_items(place, "", [item])

    def drop(self, place: str, owner: str, positions: Sequence[int] | None) -> None:
        """Remove the rows of ``positions`` (``None``: all) of one place and owner."""
        if not self._b.search_rows:
            return
        if positions is None:
            self._b.execute(
                "DELETE FROM ck_search WHERE profile=? AND place=? AND owner=?",
                (self.profile, place, owner),
            )
            return
        for chunk in self.tx.chunks(list(positions)):
            self._b.execute(
                "DELETE FROM ck_search WHERE profile=? AND place=? AND owner=?"
                f" AND pos IN ({self.tx.marks(len(chunk))})",
                (self.profile, place, owner, *chunk),
            )

    def archived(self, moved: Sequence[tuple[int, int]]) -> None:
        """Live rows moved to the archive, as (pos, seq) pairs in order: their search rows
        change place; the text is not read again."""
        if not self._b.search_rows or not moved:
            return
        (p0, s0), (p1, s1) = moved[0], moved[-1]
        if p1 - p0 == s1 - s0 == len(moved) - 1:  # the usual case: one statement
            self._b.execute(
                "UPDATE ck_search SET place='a', pos = pos - ? WHERE profile=? AND place='h'"
                " AND owner='' AND pos >= ? AND pos <= ?",
                (p0 - s0, self.profile, p0, p1),
            )
            return
        for pos, seq in moved:
            self._b.execute(
                "UPDATE ck_search SET place='a', pos=? WHERE profile=? AND place='h'"
                " AND owner='' AND pos=?",
                (seq, self.profile, pos),
            )

    # -- saved and evicted sessions ------------------------------------------------------------
    def key_written(
        self, key: str, text: str, blobs: dict[str, Blob], value: Any = NOT_GIVEN
    ) -> None:
        """A key was written: a session body is indexed again (only its changed entries), an
        ``evicted_<id>`` key moves that session's rows to the evicted place. ``value``: what
        was encoded as ``text``, when the caller has it (not parsed again then)."""
        if not self._b.search_rows:
            return
        if key.startswith(EVICTED_KEY_PREFIX):
            self._set_place(key[len(EVICTED_KEY_PREFIX) :], "s", "e")
        elif key.startswith(SESSION_BODY_PREFIX):
            if value is not NOT_GIVEN:  # the value itself: its strings are what they say
                self.session(key[len(SESSION_BODY_PREFIX) :], value, blobs, _as_is)
                return
            try:
                body = codec.loads_stored(text)
            except CorruptValue:
                body = None
            self.session(key[len(SESSION_BODY_PREFIX) :], body, blobs)

    def keys_deleted(self, keys: Iterable[str]) -> None:
        """Keys were deleted: a body's rows go with it; an evicted key brings its session's
        rows back to the drawer's place (restore)."""
        if not self._b.search_rows:
            return
        for key in keys:
            if key.startswith(SESSION_BODY_PREFIX):
                owner = key[len(SESSION_BODY_PREFIX) :]
                self._b.execute(
                    "DELETE FROM ck_search WHERE profile=? AND place IN ('s','e') AND owner=?",
                    (self.profile, owner),
                )
            elif key.startswith(EVICTED_KEY_PREFIX):
                self._set_place(key[len(EVICTED_KEY_PREFIX) :], "e", "s")

    def _set_place(self, owner: str, old: str, new: str) -> None:
        self._b.execute(
            "UPDATE ck_search SET place=? WHERE profile=? AND place=? AND owner=?",
            (new, self.profile, old, owner),
        )

    def _session_place(self, owner: str) -> str:
        found = self._b.query(
            "SELECT 1 FROM ck_kv WHERE profile=? AND key=?",
            (self.profile, EVICTED_KEY_PREFIX + owner),
        )
        return "e" if found else "s"

    def session(
        self, owner: str, body: Any, blobs: dict[str, Blob] | None, resolve: Any = None
    ) -> None:
        """Bring one session's rows in step with its stored ``body`` (parsed as stored, or
        the value itself with ``resolve`` :func:`_as_is`): entries whose text is unchanged at
        their index keep their rows."""
        entries = body if isinstance(body, list) else []
        have: dict[int, str] = {}
        for pos, th in self._b.query(
            "SELECT DISTINCT pos, th FROM ck_search WHERE profile=? AND place IN ('s','e')"
            " AND owner=?",
            (self.profile, owner),
        ):
            have[int(pos)] = th
        resolve = resolve or self._resolver(blobs)
        items = [self.items(v, i, blobs, resolve) for i, v in enumerate(entries)]
        wanted = {it[0]: it for it in items if it is not None}
        stale = [p for p, th in have.items() if p not in wanted or wanted[p][3] != th]
        for chunk in self.tx.chunks(stale):
            self._b.execute(
                "DELETE FROM ck_search WHERE profile=? AND place IN ('s','e') AND owner=?"
                f" AND pos IN ({self.tx.marks(len(chunk))})",
                (self.profile, owner, *chunk),
            )
        fresh = [it for p, it in wanted.items() if p not in have or have[p] != it[3]]
        if fresh:
            self._insert_items(self._session_place(owner), owner, fresh)

    def sessions_new(self, bodies: Iterable[tuple[str, list[Any], list[str]]]) -> None:
        """Index the bodies (the values themselves) of sessions in the drawer that have no
        rows yet, as ``(owner, entries, their texts)`` (each entry's
        :func:`~chatkeep.entries.entry_text`, read once by the caller): their rows in
        multi-row statements, whatever owner."""
        if not self._b.search_rows:
            return
        self._insert_owned(
            "s",
            [
                (owner, item)
                for owner, entries, texts in bodies
                for item in map(entry_item, entries, range(len(entries)), texts)
                if item is not None
            ],
        )

    def body_extended(self, owner: str, start: int, added: Sequence[Any]) -> None:
        """Entries appended to a session body from index ``start`` on (the values given, not
        their stored texts parsed again)."""
        if not self._b.search_rows:
            return
        items = [self.items(v, start + i, None, _as_is) for i, v in enumerate(added)]
        fresh = [it for it in items if it is not None]
        if fresh:
            self._insert_items(self._session_place(owner), owner, fresh)

    def entry_removed(self, owner: str, pos: int) -> None:
        """The entry at ``pos`` of session ``owner``'s body was removed (the newest one)."""
        if self._b.search_rows:
            self._b.execute(
                "DELETE FROM ck_search WHERE profile=? AND place IN ('s','e') AND owner=?"
                " AND pos=?",
                (self.profile, owner, pos),
            )

    def wipe(self) -> None:
        """Every row of the profile (its data is being replaced or removed)."""
        if self._b.search_rows:
            self._b.execute("DELETE FROM ck_search WHERE profile=?", (self.profile,))

    def reindex(self) -> int:
        """Index the whole profile again from its stored rows (a migration, a repair);
        returns the rows written."""
        if not self._b.search_rows:
            return 0
        self.wipe()
        for pos, _chars, text in self.tx.rows(
            "SELECT pos, chars, value FROM ck_history WHERE profile=? ORDER BY pos"
        ):
            self.put("h", int(pos), text, {})
        for seq, text in self.tx.rows(
            "SELECT seq, value FROM ck_archive WHERE profile=? ORDER BY seq"
        ):
            self.put("a", int(seq), text, {})
        for key, text in self.tx.rows(
            "SELECT key, value FROM ck_kv WHERE profile=? AND key LIKE ? ORDER BY key",
            (SESSION_BODY_PREFIX + "%",),
        ):
            if text == BODY_MARK:  # a body kept as rows (:mod:`.body_rows`)
                text = self.tx.sessions.items_joined(key[len(SESSION_BODY_PREFIX) :])
            self.key_written(key, text, {})
        found = self.tx.rows("SELECT count(*) FROM ck_search WHERE profile=?")
        return int(found[0][0])
