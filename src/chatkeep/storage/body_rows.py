"""Saved-session bodies as rows: one ``ck_session_items`` row per entry, behind ``session_<id>``.

A body is still read and written as one list value under its key (SPEC §4.1). Underneath, each
entry is its own row, ordered by ``pos``, holding the entry's stored text (:mod:`.codec`: images
and long texts as blob references) and ``dchars``, the length of the entry's text in the
session's search digest (``NULL``: not known, for rows moved from a body stored whole). The
``ck_kv`` row of the key then holds :data:`BODY_MARK`, so listing keys, exporting, the doctor
and the evicted list find every body as before, and reading the key (``tx.kv.raw``) joins the
rows back into the list's stored text: every reader sees the same entries.

Why rows: appending entries to a session (``store.sessions.extend``, every framework adapter)
inserts their rows and nothing else, and removing the newest entry is one ``DELETE … RETURNING``:
neither reads, decodes or writes back what the body already holds, so their cost does not grow
with the session. Writing a whole body (save, update, import) replaces its rows.

Bodies stored whole before this layout (the list's text in ``ck_kv``) still read as they are;
migration ``0021_session_items_fill`` moves them into rows, and an append or a pop meeting one
left behind (a store written since by other means) moves it first.

Every row written passes through :func:`insert_placed`, and every row removed through
:meth:`BodyRows.items_delete` or :meth:`BodyRows.items_pop`: the places anything derived from
body entries (a search index) keeps itself in step. Blob references of a body's rows all belong
to the key's owner ``k:session_<id>``, as they did when the body was one value.

:class:`BodyRows` is part of ``tx.sessions`` (:class:`~.session_rows.SessionRows`) of
:class:`~.sql.Tx`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ..constants import SESSION_BODY_PREFIX, TEXT_DIGEST_CAP
from ..entries import entry_text
from ..errors import CorruptValue
from . import codec
from .codec import Blob
from .tx_part import TxPart

#: ``ck_kv`` text of ``session_<id>`` when its entries live in ``ck_session_items``. A stored
#: string never encodes to it (strings starting with NUL are escaped with one more NUL).
BODY_MARK = '"\\u0000items"'

MIGRATION = (
    "CREATE TABLE IF NOT EXISTS ck_session_items (profile TEXT NOT NULL, sid TEXT NOT NULL,"
    " pos BIGINT NOT NULL, dchars BIGINT, pending INTEGER NOT NULL DEFAULT 0,"
    " value TEXT NOT NULL, PRIMARY KEY (profile, sid, pos))",
    # appended rows whose text the session's digest does not hold yet (see _fold)
    "CREATE INDEX IF NOT EXISTS ck_session_items_pending ON ck_session_items (profile, sid, pos)"
    " WHERE pending = 1",
)

#: Rows per multi-row ``INSERT`` (5 parameters each: well under every driver's limit).
_BATCH = 100

Row = tuple[str, int | None]  # (stored text, digest characters or None)


def is_body_key(key: str) -> bool:
    return key.startswith(SESSION_BODY_PREFIX) and len(key) > len(SESSION_BODY_PREFIX)


def digest_piece(entry: Any) -> str:
    """An entry's text as the session's search digest holds it (lower-cased, no NULs)."""
    return entry_text(entry).lower().replace("\x00", "")


def digest_of(pieces: Iterable[str]) -> str:
    """A session's search digest from its entries' :func:`digest_piece` texts: joined with
    ``\n``, capped at :data:`~chatkeep.constants.TEXT_DIGEST_CAP` characters. (Lower-casing
    each piece is lower-casing the whole: a line break ends the context of a final sigma.)"""
    return "\n".join(pieces)[:TEXT_DIGEST_CAP]


def _stored_dchars(item: Any) -> int | None:
    """``dchars`` of an entry in its stored form (``None`` when a long text of it is a blob
    reference: its length is not known without reading the blob)."""
    text = entry_text(item)
    return None if codec.MARK in text else len(text.lower().replace("\x00", ""))


def rows_of_stored(text: str) -> list[Row] | None:
    """The rows of a body stored whole (its list's text), or ``None`` when it is not a list
    (or does not parse): such a value stays as it is."""
    try:
        items = codec.loads_stored(text)
    except CorruptValue:
        return None
    if not isinstance(items, list):
        return None
    return [(codec.dumps(item), _stored_dchars(item)) for item in items]


def encode_rows(
    entries: Sequence[Any],
    key: str,
    *,
    checked: bool = False,
    pieces: Sequence[str] | None = None,
) -> tuple[list[Row], dict[str, Blob]]:
    """The rows of ``entries`` and the blobs they reference (``checked``: the limits of the
    whole list were checked already; ``pieces``: the entries' :func:`digest_piece` texts, when
    the caller has them)."""
    rows: list[Row] = []
    blobs: dict[str, Blob] = {}
    text_blobs = codec.text_blobs_for(key)
    if pieces is None:
        pieces = [digest_piece(entry) for entry in entries]
    for entry, piece in zip(entries, pieces, strict=True):
        text, entry_blobs = codec.encode(entry, text_blobs, checked=checked)
        rows.append((text, len(piece)))
        if entry_blobs:
            blobs.update(entry_blobs)
    return rows, blobs


def insert_rows(
    execute: Callable[[str, Sequence[Any]], None],
    profile: str,
    sid: str,
    start: int,
    rows: Sequence[Row],
    pending: bool = False,
) -> None:
    """Insert ``rows`` as the entries of ``sid`` from position ``start`` on. ``pending``:
    their text is not in the session's digest yet (an append)."""
    placed = [(sid, start + k, dchars, text) for k, (text, dchars) in enumerate(rows)]
    insert_placed(execute, profile, placed, pending)


def insert_placed(
    execute: Callable[[str, Sequence[Any]], None],
    profile: str,
    rows: Sequence[tuple[str, int, int | None, str]],
    pending: bool = False,
) -> None:
    """Insert ``(sid, pos, dchars, stored text)`` rows, of one session or several: the one
    place body rows are written (a hundred per statement)."""
    for i in range(0, len(rows), _BATCH):
        chunk = rows[i : i + _BATCH]
        params: list[Any] = []
        for sid, pos, dchars, text in chunk:
            params += [profile, sid, pos, dchars, int(pending), text]
        execute(
            "INSERT INTO ck_session_items (profile, sid, pos, dchars, pending, value) VALUES "
            + ",".join(["(?,?,?,?,?,?)"] * len(chunk)),
            params,
        )


def convert_all_bodies(backend: Any) -> bool:
    """Migration step: every body stored whole, in every profile, moves into rows."""
    found = backend.query(
        "SELECT profile, key, value FROM ck_kv WHERE substr(key, 1, 8) = ? AND value <> ?",
        (SESSION_BODY_PREFIX, BODY_MARK),
    )
    for profile, key, text in found:
        rows = rows_of_stored(text) if isinstance(text, str) and is_body_key(key) else None
        if rows is None:
            continue
        sid = key[len(SESSION_BODY_PREFIX) :]
        backend.execute("DELETE FROM ck_session_items WHERE profile=? AND sid=?", (profile, sid))
        insert_rows(backend.execute, profile, sid, 0, rows)
        backend.execute(
            "UPDATE ck_kv SET value=? WHERE profile=? AND key=?", (BODY_MARK, profile, key)
        )
    return True


class BodyRows(TxPart):
    """Row-level operations on saved-session bodies (part of ``tx.sessions``)."""

    if TYPE_CHECKING:

        def digest_put(self, session_id: str, digest: str) -> None: ...

    # -- reading ------------------------------------------------------------------------------
    def items_joined(self, sid: str) -> str:
        """The stored text of a body kept as rows: its rows' texts as one JSON list."""
        r = self.tx.rows(self._b.joined_items_sql, (sid,))  # one row fetched, joined in SQL
        return "[" + str(r[0][1]) + "]" if r and r[0][0] else "[]"

    def items_texts(self, sid: str) -> list[str] | None:
        """The stored texts of the rows of ``sid``'s body, in order; ``None`` when the body is
        not kept as rows (absent, or stored whole)."""
        if self.kv_form(SESSION_BODY_PREFIX + sid) != BODY_MARK:
            return None
        got = self.tx.rows(
            "SELECT value FROM ck_session_items WHERE profile=? AND sid=? ORDER BY pos", (sid,)
        )
        return [v for (v,) in got]

    def kv_form(self, key: str) -> str | None:
        """The ``ck_kv`` text of a body key (:data:`BODY_MARK` for rows), ``None`` if absent."""
        r = self.tx.rows("SELECT value FROM ck_kv WHERE profile=? AND key=?", (key,))
        return r[0][0] if r else None

    def _ensure_rows(self, key: str) -> bool:
        """Whether the body under ``key`` is (now) kept as rows: a body stored whole is moved
        into rows first; an absent key, or a value that is not a readable list, is not."""
        form = self.kv_form(key)
        if form is None or form == BODY_MARK:
            return form is not None
        rows = rows_of_stored(form) if isinstance(form, str) else None
        if rows is None:
            return False
        sid = key[len(SESSION_BODY_PREFIX) :]
        self.items_delete([sid])
        insert_rows(self._b.execute, self.profile, sid, 0, rows)
        self._set_mark(key)
        return True

    def _set_mark(self, key: str) -> None:
        self.tx.run(
            "INSERT INTO ck_kv (profile, key, value) VALUES (?,?,?)"
            " ON CONFLICT (profile, key) DO UPDATE SET value = excluded.value",
            (key, BODY_MARK),
        )

    # -- writing ------------------------------------------------------------------------------
    def items_delete(self, sids: Sequence[str]) -> None:
        """Remove every row of the bodies of ``sids``."""
        for chunk in self.tx.chunks(sids):
            self.tx.run(
                f"DELETE FROM ck_session_items WHERE profile=? AND sid IN ({self.tx.marks(len(chunk))})",
                chunk,
            )

    def items_pop(self, sid: str) -> Row | None:
        """Remove the newest row of ``sid`` and return it (one statement)."""
        got = self._b.query(
            "DELETE FROM ck_session_items WHERE profile=? AND sid=? AND pos = (SELECT max(pos)"
            " FROM ck_session_items WHERE profile=? AND sid=?) RETURNING value, dchars, pos",
            (self.profile, sid, self.profile, sid),
        )
        if not got:
            return None
        self.tx.search.entry_removed(sid, int(got[0][2]))
        return (got[0][0], got[0][1])

    def body_replace(
        self,
        key: str,
        rows: list[Row],
        blobs: dict[str, Blob],
        refs: Iterable[str] = (),
        value: list[Any] | None = None,
    ) -> None:
        """Write a whole body: its rows replace the old ones; references follow (a blob no row
        references any more is collected). ``refs``: blobs the rows reference that are
        stored already (a body copied in its stored form); ``value``: the entries the rows
        encode, when the caller has them (the search index then does not parse the rows)."""
        sid = key[len(SESSION_BODY_PREFIX) :]
        self.tx.bump("kv")
        self.tx.blobs.put(blobs)
        self.items_delete([sid])
        insert_rows(self._b.execute, self.profile, sid, 0, rows)
        self._set_mark(key)
        joined = "[" + ",".join(text for text, _ in rows) + "]"
        if value is None:
            self.tx.search.key_written(key, joined, blobs)
        else:
            self.tx.search.key_written(key, joined, blobs, value)
        owner = "k:" + key
        old = self.tx.blobs.drop_refs([owner])
        held = set(blobs).union(refs)
        self.tx.blobs.add_refs(owner, held)
        self.tx.blobs.gc(old - held)

    def body_append(self, sid: str, entries: Sequence[Any]) -> bool | None:
        """Append ``entries`` (validated) to the body of ``sid``: their rows are inserted, marked
        pending for the session's digest (:meth:`digests_fold`). ``None``: no such body;
        ``False``: its stored value is not a list that reads (left as it is)."""
        key = SESSION_BODY_PREFIX + sid
        if not self._ensure_rows(key):
            return None if self.kv_form(key) is None else False
        r = self.tx.rows("SELECT max(pos) FROM ck_session_items WHERE profile=? AND sid=?", (sid,))
        start = 0 if not r or r[0][0] is None else int(r[0][0]) + 1
        rows, blobs = encode_rows(entries, key, checked=True)
        self.tx.bump("kv")
        self.tx.blobs.put(blobs)
        insert_rows(self._b.execute, self.profile, sid, start, rows, pending=True)
        self.tx.blobs.add_refs("k:" + key, blobs)
        self.tx.search.body_extended(sid, start, entries)
        return True

    def body_pop(self, sid: str) -> tuple[bool, Any]:
        """Remove the newest entry of the body of ``sid``: ``(True, entry)``, or ``(False,
        None)`` when the body is absent, empty or not a readable list."""
        key = SESSION_BODY_PREFIX + sid
        if not self._ensure_rows(key):
            return False, None
        self.digests_fold([sid])
        got = self.items_pop(sid)
        if got is None:
            return False, None
        text, dchars = got
        entry = self.tx.blobs.decode(text)  # before any blob of it is collected
        self.tx.bump("kv")
        gone = [h for h in codec.blob_hashes(text) if not self._items_hold(sid, h)]
        for h in gone:
            self._b.execute(
                "DELETE FROM ck_blob_refs WHERE profile=? AND owner=? AND hash=?",
                (self.profile, "k:" + key, h),
            )
        self.tx.blobs.gc(gone)
        self._digest_after_pop(sid, dchars)
        return True, entry

    def _items_hold(self, sid: str, blob_hash: str) -> bool:
        fn = self._b.substring_fn
        return bool(
            self.tx.rows(
                f"SELECT 1 FROM ck_session_items WHERE profile=? AND sid=? AND {fn}(value, ?) > 0"
                " LIMIT 1",
                (sid, codec.MARK_JSON + blob_hash),
            )
        )

    # -- the search digest ----------------------------------------------------------------------
    def digests_pending(self) -> bool:
        """Whether appended rows wait to be folded into their sessions' digests."""
        return bool(
            self.tx.rows("SELECT 1 FROM ck_session_items WHERE profile=? AND pending = 1 LIMIT 1")
        )

    def digests_extensions(self, sids: Sequence[str] | None = None) -> dict[str, tuple[bool, str]]:
        """For each session with pending rows (of ``sids``; ``None``: all): whether rows come
        before them, and their text as the digest holds it (``\n``-joined)."""
        sql = "SELECT sid, pos, value FROM ck_session_items WHERE profile=? AND pending = 1"
        params: tuple[Any, ...] = ()
        if sids is not None:
            if not sids:
                return {}
            sql += f" AND sid IN ({self.tx.marks(len(sids))})"
            params = tuple(sids)
        found: dict[str, list[tuple[int, str]]] = {}
        for sid, pos, text in self.tx.rows(sql, params):
            found.setdefault(sid, []).append((int(pos), text))
        out: dict[str, tuple[bool, str]] = {}
        for sid, rows in found.items():
            rows.sort()
            entries = self.tx.blobs.decode("[" + ",".join(t for _p, t in rows) + "]")
            out[sid] = (rows[0][0] > 0, "\n".join(digest_piece(e) for e in entries))
        return out

    @staticmethod
    def digest_extended(old: str, after: bool, more: str) -> str:
        """``old`` grown by ``more`` (``after``: the session held entries before them)."""
        if len(old) >= TEXT_DIGEST_CAP:
            return old
        return (old + ("\n" if after else "") + more)[:TEXT_DIGEST_CAP]

    def digests_fold(self, sids: Sequence[str] | None = None) -> None:
        """Write the pending rows' text into their sessions' digests (sessions without one, in
        the evicted list, get none) and mark the rows done. Appends leave this to the next
        search, so an append never rewrites a digest: one fold covers every append since."""
        for sid, (after, more) in self.digests_extensions(sids).items():
            old = self._digest_of(sid)
            if old is not None:
                new = self.digest_extended(old, after, more)
                if new != old:
                    self.digest_put(sid, new)
        self.items_digested(sids)

    def items_digested(self, sids: Sequence[str] | None = None) -> None:
        """Mark the pending rows (of ``sids``; ``None``: all) as held by their digests (a
        digest made from the whole body holds them)."""
        if sids is None:
            self.tx.run("UPDATE ck_session_items SET pending = 0 WHERE profile=? AND pending = 1")
            return
        for chunk in self.tx.chunks(sids):
            self.tx.run(
                "UPDATE ck_session_items SET pending = 0 WHERE profile=? AND pending = 1"
                f" AND sid IN ({self.tx.marks(len(chunk))})",
                chunk,
            )

    def _digest_of(self, sid: str) -> str | None:
        r = self.tx.rows(
            f"SELECT digest FROM {self._b.drawer.digest_table} WHERE profile=? AND id=?", (sid,)
        )
        return r[0][0] if r else None

    def _digest_after_pop(self, sid: str, popped: int | None) -> None:
        """Cut the digest back by the popped entry's text: the remaining body's digest is a
        prefix of the old one. Computed again from the rows when a length is not known or the
        stored digest does not add up (written by other means)."""
        old = self._digest_of(sid)
        if old is None:
            return
        n, total, known = self.tx.rows(
            "SELECT count(*), coalesce(sum(dchars), 0), count(dchars) FROM ck_session_items"
            " WHERE profile=? AND sid=?",
            (sid,),
        )[0]
        n, total, known = int(n), int(total), int(known)
        new_total = total + max(n - 1, 0)
        if popped is not None and known == n:
            old_total = new_total + popped + (1 if n else 0)
            if len(old) == min(old_total, TEXT_DIGEST_CAP):
                new = old[: min(new_total, TEXT_DIGEST_CAP)]
                if new != old:
                    self.digest_put(sid, new)
                return
        body = self.tx.blobs.decode(self.items_joined(sid))
        pieces = "\n".join(digest_piece(e) for e in body) if isinstance(body, list) else ""
        self.digest_put(sid, pieces[:TEXT_DIGEST_CAP])
