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
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from .blob_rows import BlobRows
from .history_rows import HistoryRows
from .kv_rows import KvRows
from .search_index import SearchRows
from .session_rows import SessionRows

#: Values per ``IN (…)`` list: well under every driver's limit on query parameters.
IN_CHUNK = 500


def _chunks(values: Iterable[Any]) -> Iterator[list[Any]]:
    """``values`` in lists of at most :data:`IN_CHUNK`, for ``IN (…)`` queries."""
    items = list(values)
    for i in range(0, len(items), IN_CHUNK):
        yield items[i : i + IN_CHUNK]


def now_ms() -> int:
    return int(time.time() * 1000)


class Tx:
    """One backend transaction for one profile. Created only by a backend.

    Its primitives are here (statements scoped to the profile, the write counters, the whole
    profile at once); its rows are reached through its parts, made once with it: ``kv`` (the
    key/value rows), ``blobs`` (blobs and their references), ``history`` (the live history and
    the archive), ``sessions`` (the drawer's index rows, saved bodies and digests) and
    ``search`` (the message-search rows)."""

    chunks = staticmethod(_chunks)
    now_ms = staticmethod(now_ms)

    def __init__(self, backend: Any, profile: str) -> None:
        self._b = backend
        self.profile = profile
        self._bumped: set[str] = set()
        self.write = False  # set by the backend: whether this is a write transaction
        #: whether a session row or digest was written (the search indexes want tidying)
        self.search_written = False
        #: search rows this transaction wrote (SQLite puts them into FTS5 at its end)
        self.search_added = 0
        self.kv = KvRows(self)
        self.blobs = BlobRows(self)
        self.history = HistoryRows(self)
        self.sessions = SessionRows(self)
        self.search = SearchRows(self)

    # -- raw access -------------------------------------------------------------------------
    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._b.query(sql, (self.profile, *params))

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._b.execute(sql, (self.profile, *params))

    @staticmethod
    def marks(n: int) -> str:
        return ",".join("?" * n)

    # -- write counters ---------------------------------------------------------------------
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
        self.search.wipe()

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
