"""SQL shared by the SQLite and PostgreSQL backends, and the transaction object they hand out.

Layout (every row scoped by ``profile``; no query reads another profile's rows):

``ck_kv``            one row per area key; value = stored JSON text (:mod:`.codec`)
``ck_history``       one row per live history entry, ordered by ``pos``; ``chars`` = text length;
                     ``unseen`` = the entry has image parts and no ``imagesSeen: true``
``ck_archive``       entries dropped by the live window, in the order they were dropped
``ck_history_state`` live entry count and text length, archive length (kept, not counted)
``ck_blobs``         content-addressed image bytes (sha256 of the data URL)
``ck_blob_refs``     who references which blob (``k:<key>``, ``h:<pos>``, ``a:<seq>``); a blob is
                     deleted when its last reference goes
``ck_session_digest`` the ``textDigest`` of each saved session, out of the ``savedSessions`` row,
                     so listing, saving and renaming never read or rewrite every digest and a
                     drawer search is one SQL query; reading the ``savedSessions`` key puts the
                     digests back into its rows. On SQLite with FTS5 the digests live in
                     ``ck_session_text`` instead, indexed by the trigram table
                     ``ck_session_trgm`` (names: ``ck_session_name``/``_trgm``, by triggers);
                     on PostgreSQL ``pg_trgm`` indexes them, so a search that matches few
                     sessions does not scan every digest
``ck_sessions``      the ``savedSessions`` list, one row per item (:mod:`.index_rows`), so one
                     session's save, rename or delete writes one row
``ck_session_items`` one row per entry of each saved-session body (:mod:`.body_rows`), so
                     appending to a session inserts rows and never rewrites its body
``ck_versions``      per-profile write counters (keys, history): per-process caches check them
``ck_migrations``    applied schema migrations, by name

Appending inserts one history row and one state update: its cost does not depend on the
history length. Reading small keys touches only ``ck_kv`` rows of those keys.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from ..constants import SESSION_BODY_PREFIX, SESSIONS_INDEX_KEY
from ..errors import CorruptValue
from ..limits import check_value
from . import body_rows, codec, history_rows, index_rows
from .blob_rows import BlobRows
from .body_rows import BODY_MARK, BodyRows, encode_rows, is_body_key, rows_of_stored
from .codec import Blob
from .history_rows import HistoryRows
from .index_rows import ROWS_MARK, IndexRows, row_columns
from .search_index import NOT_GIVEN, SearchRows


class Migration:
    """One named schema change, applied once per database in its own transaction together
    with its ``ck_migrations`` row. ``dialects`` limits it to some backends; ``run`` is a
    callable for changes that are more than plain statements (it returns ``False`` when the
    change is not possible on this server, which leaves it unrecorded, to be tried again).
    Never changed once made."""

    __slots__ = ("name", "statements", "dialects", "run")

    def __init__(
        self,
        name: str,
        statements: tuple[str, ...] = (),
        dialects: tuple[str, ...] = ("sqlite", "postgresql"),
        run: Callable[[Any], bool] | None = None,
    ) -> None:
        self.name = name
        self.statements = statements
        self.dialects = dialects
        self.run = run

    def __repr__(self) -> str:
        return f"Migration({self.name!r})"


#: The shared registry, in order. Backends may add their own (see ``Backend.migrations``).
MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        "0001_initial",
        (
            "CREATE TABLE IF NOT EXISTS ck_kv (profile TEXT NOT NULL, key TEXT NOT NULL,"
            " value TEXT NOT NULL, PRIMARY KEY (profile, key))",
            "CREATE TABLE IF NOT EXISTS ck_history (profile TEXT NOT NULL, pos BIGINT NOT NULL,"
            " chars BIGINT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (profile, pos))",
            "CREATE TABLE IF NOT EXISTS ck_archive (profile TEXT NOT NULL, seq BIGINT NOT NULL,"
            " archived_at BIGINT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (profile, seq))",
            "CREATE TABLE IF NOT EXISTS ck_history_state (profile TEXT PRIMARY KEY,"
            " live_count BIGINT NOT NULL, live_chars BIGINT NOT NULL)",
            "CREATE TABLE IF NOT EXISTS ck_blobs (profile TEXT NOT NULL, hash TEXT NOT NULL,"
            " prefix TEXT, data {blob} NOT NULL, PRIMARY KEY (profile, hash))",
            "CREATE TABLE IF NOT EXISTS ck_blob_refs (profile TEXT NOT NULL, owner TEXT NOT NULL,"
            " hash TEXT NOT NULL, PRIMARY KEY (profile, owner, hash))",
            "CREATE INDEX IF NOT EXISTS ck_blob_refs_hash ON ck_blob_refs (profile, hash)",
        ),
    ),
    Migration(
        "0002_session_digests",
        (
            "CREATE TABLE IF NOT EXISTS ck_session_digest (profile TEXT NOT NULL, id TEXT NOT NULL,"
            " digest TEXT NOT NULL, PRIMARY KEY (profile, id))",
        ),
    ),
    Migration(
        # rows written before this migration count as "may hold unseen images": the first
        # seen stamp reads them once and clears the flag of those that do not
        "0004_history_unseen_flag",
        (
            "ALTER TABLE ck_history ADD COLUMN unseen INTEGER NOT NULL DEFAULT 1",
            "CREATE INDEX IF NOT EXISTS ck_history_unseen ON ck_history (profile, pos)"
            " WHERE unseen = 1",
        ),
    ),
    Migration(
        "0005_profile_versions",
        (
            "CREATE TABLE IF NOT EXISTS ck_versions (profile TEXT PRIMARY KEY,"
            " kv BIGINT NOT NULL DEFAULT 0, history BIGINT NOT NULL DEFAULT 0)",
        ),
    ),
    Migration(
        "0006_session_index_rows",
        index_rows.MIGRATION,
        run=index_rows.convert_all_profiles,
    ),
    Migration("0008_session_order", index_rows.ORDER_MIGRATION),
    Migration("0013_archive_count", history_rows.ARCHIVE_COUNT_MIGRATION),
    Migration("0020_session_items", body_rows.MIGRATION),
    Migration("0021_session_items_fill", run=body_rows.convert_all_bodies),
)


#: Values per ``IN (…)`` list: well under every driver's limit on query parameters.
IN_CHUNK = 500


def _chunks(values: Iterable[Any]) -> Iterator[list[Any]]:
    """``values`` in lists of at most :data:`IN_CHUNK`, for ``IN (…)`` queries."""
    items = list(values)
    for i in range(0, len(items), IN_CHUNK):
        yield items[i : i + IN_CHUNK]


def now_ms() -> int:
    return int(time.time() * 1000)


class Tx(BlobRows, HistoryRows, IndexRows, BodyRows, SearchRows):
    """One backend transaction for one profile. Created only by a backend."""

    chunks = staticmethod(_chunks)
    now_ms = staticmethod(now_ms)

    def __init__(self, backend: Any, profile: str) -> None:
        self._b = backend
        self.profile = profile
        self._bumped: set[str] = set()
        self.write = False  # set by the backend: whether this is a write transaction
        #: whether a session row or digest was written (the search indexes want tidying)
        self.search_written = False
        self.search_added = 0

    # -- raw access -------------------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._b.query(sql, (self.profile, *params))

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._b.execute(sql, (self.profile, *params))

    @staticmethod
    def marks(n: int) -> str:
        return ",".join("?" * n)

    # -- key/value --------------------------------------------------------------------------
    def kv_raw(self, keys: Sequence[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in _chunks(keys):
            for k, v in self.rows(
                f"SELECT key, value FROM ck_kv WHERE profile=? AND key IN ({self.marks(len(chunk))})",
                chunk,
            ):
                out[k] = v
        for k, v in out.items():
            if v == BODY_MARK and is_body_key(k):
                out[k] = self.items_joined(k[len(SESSION_BODY_PREFIX) :])
        if out.get(SESSIONS_INDEX_KEY) == ROWS_MARK:
            out[SESSIONS_INDEX_KEY] = self.index_joined()
        return out

    def kv_get(self, keys: Sequence[str], corrupt: list[str] | None = None) -> dict[str, Any]:
        """Decoded values of ``keys`` that exist; unreadable ones are left out (and listed)."""
        out: dict[str, Any] = {}
        for k, text in self.kv_raw(keys).items():
            try:
                out[k] = self.decode(text)
            except CorruptValue:
                if corrupt is not None:
                    corrupt.append(k)
        if isinstance(out.get(SESSIONS_INDEX_KEY), list):
            digests = self.digest_all()
            for row in out[SESSIONS_INDEX_KEY]:
                if isinstance(row, dict) and row.get("id") in digests:
                    row["textDigest"] = digests[row["id"]]
        return out

    def index_light(self) -> Any:
        """The ``savedSessions`` value as stored: rows without their digests (None if absent)."""
        text = self.kv_raw([SESSIONS_INDEX_KEY]).get(SESSIONS_INDEX_KEY)
        if text is None:
            return None
        try:
            return self.decode(text)
        except CorruptValue:
            return None

    def _put_index(self, value: Any) -> None:
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
            self._kv_write(SESSIONS_INDEX_KEY, text, blobs)
        for sid, digest in carried.items():
            self.digest_add(sid, digest)

    # -- session digests --------------------------------------------------------------------
    def digest_put(self, session_id: str, digest: str) -> None:
        """Replace one session's digest (on the FTS5 table the delete scans every digest: its
        id is not indexed, so fresh ids go through :meth:`digest_add`)."""
        self.run(
            f"DELETE FROM {self._b.drawer.digest_table} WHERE profile=? AND id=?", (session_id,)
        )
        self.digest_add(session_id, digest)

    def digest_add(self, session_id: str, digest: str, row: Any = None) -> None:
        """Insert the digest of a session that has none yet (no delete first: an id not in the
        index has no digest row, since every index write removes the rows of unlisted ids).
        ``row``: the session's index row when it is not written yet (it orders the digest)."""
        self.search_written = True
        order = None
        if row is not None:
            _sid, created, pinned, _name, _legacy = row_columns(row)
            order = (pinned, created)  # as the index row will store them
        sql, extra = self._b.drawer.digest_insert(order)
        self.run(sql, (session_id, digest, *extra))

    def digest_ids(self) -> list[str]:
        return [
            r[0] for r in self.rows(f"SELECT id FROM {self._b.drawer.digest_table} WHERE profile=?")
        ]

    def digest_all(self) -> dict[str, str]:
        """Every session's digest, with the text of rows appended since (not folded yet)."""
        out = dict(
            self.rows(f"SELECT id, digest FROM {self._b.drawer.digest_table} WHERE profile=?")
        )
        for sid, (after, more) in self.digests_extensions().items():
            if sid in out:
                out[sid] = self.digest_extended(out[sid], after, more)
        return out

    def digest_delete(self, ids: Sequence[str]) -> None:
        self.search_written = self.search_written or bool(ids)
        for chunk in _chunks(ids):
            self.run(
                f"DELETE FROM {self._b.drawer.digest_table} WHERE profile=? AND id IN ({self.marks(len(chunk))})",
                chunk,
            )

    def kv_put_encoded(
        self, key: str, text: str, blobs: dict[str, Blob], refs: Iterable[str] = ()
    ) -> None:
        if key == SESSIONS_INDEX_KEY:  # refs: blobs the text references, stored already
            try:
                value = codec.decode(text, lambda hs: {h: blobs[h].url() for h in hs if h in blobs})
            except CorruptValue:
                value = None
            self._put_index(value)
            return
        if is_body_key(key):
            rows = rows_of_stored(text)
            if rows is not None:
                self.body_replace(key, rows, blobs, refs)
                return
        self._kv_write(key, text, blobs, refs)

    def bump(self, what: str) -> None:
        """Count one more write of ``what`` (``kv`` or ``history``) for this profile, once per
        transaction: per-process caches compare these counters instead of re-reading."""
        if what in self._bumped:
            return
        self._bumped.add(what)
        self.run(
            f"INSERT INTO ck_versions (profile, {what}) VALUES (?, 1)"
            f" ON CONFLICT (profile) DO UPDATE SET {what} = ck_versions.{what} + 1"
        )

    def versions(self) -> tuple[int, int]:
        """(kv, history) write counters of this profile; they only ever grow."""
        r = self.rows("SELECT kv, history FROM ck_versions WHERE profile=?")
        if r and not all(isinstance(v, int) for v in r[0]):  # damaged (the doctor says so):
            return (-time.monotonic_ns(),) * 2  # a value no cache holds: every cache reads again
        return (int(r[0][0]), int(r[0][1])) if r else (0, 0)

    def _kv_write(
        self,
        key: str,
        text: str,
        blobs: dict[str, Blob],
        refs: Iterable[str] = (),
        value: Any = NOT_GIVEN,
    ) -> None:
        self.bump("kv")
        self.put_blobs(blobs)
        self.run(
            "INSERT INTO ck_kv (profile, key, value) VALUES (?,?,?)"
            " ON CONFLICT (profile, key) DO UPDATE SET value = excluded.value",
            (key, text),
        )
        owner = "k:" + key
        old = self.drop_refs([owner])
        held = set(blobs).union(refs)
        self.add_refs(owner, held)
        self.gc(old - held)
        self.search_key_written(key, text, blobs, value)

    def kv_put(self, key: str, value: Any, *, checked: bool = False) -> None:
        """Write ``value`` under ``key``; ``checked``: the caller has checked its limits (a
        validated session body), so they are not walked again."""
        if key == SESSIONS_INDEX_KEY:
            self._put_index(value)
            return
        if is_body_key(key) and isinstance(value, list):
            if not checked:
                check_value(value)  # the limits of the whole value, as for any other key
            rows, blobs = encode_rows(value, key, checked=True)
            self.body_replace(key, rows, blobs, value=value)
            return
        text, blobs = codec.encode(value, codec.text_blobs_for(key), checked=checked)
        self._kv_write(key, text, blobs, value=value)

    def kv_delete(self, keys: Sequence[str]) -> None:
        if not keys:
            return
        self.bump("kv")
        for chunk in _chunks(keys):
            self.run(
                f"DELETE FROM ck_kv WHERE profile=? AND key IN ({self.marks(len(chunk))})", chunk
            )
        self.gc(self.drop_refs(["k:" + k for k in keys]))
        self.search_keys_deleted(keys)
        self.items_delete([k[len(SESSION_BODY_PREFIX) :] for k in keys if is_body_key(k)])
        if SESSIONS_INDEX_KEY in keys:
            self.index_drop_rows()
            self.digest_delete(self.digest_ids())

    def kv_keys(self, prefix: str = "") -> list[str]:
        rows = self.rows("SELECT key FROM ck_kv WHERE profile=? ORDER BY key")
        return [r[0] for r in rows if r[0].startswith(prefix)]

    # -- whole profile ----------------------------------------------------------------------
    def profile_is_empty(self) -> bool:
        for table in ("ck_kv", "ck_history", "ck_archive"):
            if self.rows(f"SELECT 1 FROM {table} WHERE profile=? LIMIT 1"):
                return False
        return True

    def wipe_profile(self) -> None:
        self.bump("kv")  # the counter row itself is kept: counters only ever grow
        self.bump("history")
        for table in (
            "ck_kv",
            "ck_history",
            "ck_archive",
            "ck_history_state",
            "ck_blob_refs",
            "ck_blobs",
            "ck_sessions",
            "ck_session_items",
            self._b.drawer.digest_table,
        ):
            self.run(f"DELETE FROM {table} WHERE profile=?")
        self.search_wipe()

    def sizes(self) -> dict[str, int]:
        def one(sql: str) -> int:
            r = self.rows(sql)
            return int(r[0][0] or 0) if r else 0

        return {
            "kvBytes": one("SELECT sum(length(value)) FROM ck_kv WHERE profile=?")
            + one("SELECT sum(length(value)) FROM ck_sessions WHERE profile=?")
            + one("SELECT sum(length(value)) FROM ck_session_items WHERE profile=?")
            + one(f"SELECT sum(length(digest)) FROM {self._b.drawer.digest_table} WHERE profile=?"),
            "historyBytes": one("SELECT sum(length(value)) FROM ck_history WHERE profile=?"),
            "archiveBytes": one("SELECT sum(length(value)) FROM ck_archive WHERE profile=?"),
            "blobs": one("SELECT count(*) FROM ck_blobs WHERE profile=?"),
            "blobBytes": one(
                f"SELECT sum({self._b.bytes_len}(data)) FROM ck_blobs WHERE profile=?"
            ),
        }
