"""SQLite backend: the embedded default. One file, WAL journal, created with mode 0600."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Sequence
from typing import Any

from ..errors import ChatkeepError, StoreError
from .backend import Backend
from .sql import Migration

BUSY_TIMEOUT_S = 60.0

#: SQLite primary result codes → (what happened, a hint that is true for it).
_SQLITE_CODES: dict[int, tuple[str, str]] = {
    13: (
        "the disk holding the store is full (or a file-size limit was reached)",
        "free disk space, then run the command again; nothing was written",
    ),
    8: (
        "the store is read-only",
        "make the file and its directory writable by this user, then run the command again",
    ),
    10: (
        "a disk I/O error happened while using the store",
        "check the disk and free space, then run the command again; nothing was written",
    ),
    14: (
        "the store's file cannot be opened",
        "check that the file and its directory exist and are readable and writable",
    ),
    11: (
        "the store's file is damaged",
        "run `chatkeep doctor`, or restore a backup",
    ),
    26: (
        "the file is not a chatkeep store (not an SQLite database)",
        "pass the right --store, or move this file away",
    ),
}


def store_files(path: str) -> list[str]:
    """The database file and the WAL journal files beside it that exist."""
    return [p for p in (path, path + "-wal", path + "-shm") if os.path.exists(p)]


def tighten_permissions(path: str) -> list[str]:
    """Make the store's files readable by their owner only (group and other bits removed);
    returns the files changed.
    Files of another user are left alone (chmod would fail)."""
    changed = []
    for p in store_files(path):
        try:
            st = os.stat(p)
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                os.chmod(p, stat.S_IMODE(st.st_mode) & 0o700)  # owner bits kept (a read-only
                # store stays read-only)
                changed.append(p)
        except OSError:
            continue
    return changed


def _create_session_fts(backend: Backend) -> bool:
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


#: SQLite only: session digests in a trigram full-text index.
SESSION_FTS = Migration("0003_sqlite_session_fts", dialects=("sqlite",), run=_create_session_fts)


class SQLiteBackend(Backend):
    dialect = "sqlite"
    blob_type = "BLOB"
    bytes_len = "length"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.path = path
        self.description = f"sqlite://{path}" if path != ":memory:" else ":memory:"
        try:
            if path != ":memory:":
                parent = os.path.dirname(os.path.abspath(path))
                if not os.path.isdir(parent):
                    os.makedirs(parent, mode=0o700, exist_ok=True)
                if not os.path.exists(path):
                    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
                    os.close(fd)
                else:
                    tighten_permissions(path)
            self._conn = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
            )
            if path != ":memory:":
                self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=OFF")
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"cannot open the SQLite store at {path}: {exc}",
                hint="check that the directory exists and is writable, or pass another --store",
            ) from exc
        if sqlite3.sqlite_version_info >= (3, 44):  # ordered aggregates; before, the
            # ordered subquery of the base class gives the order (SQLite does not flatten it)
            self.joined_history_sql = (
                "SELECT count(*), group_concat(value, ',' ORDER BY pos) FROM ck_history"
                " WHERE profile=?"
            )
        self.migrate()
        self._use_trigram_index()

    def migrations(self) -> tuple[Migration, ...]:
        return (*super().migrations(), SESSION_FTS)

    def _use_trigram_index(self) -> None:
        """Search the FTS5 trigram table when migration ``0003_sqlite_session_fts`` made it."""
        with self.transaction("", write=False):
            have = self.query("SELECT name FROM sqlite_master WHERE name='ck_session_fts'")
        if have:
            self.digest_table = "ck_session_fts"

    def digest_search_sql(self, needle: str) -> tuple[str, str]:
        if self.digest_table != "ck_session_fts" or "%" in needle or "_" in needle:
            return super().digest_search_sql(needle)
        # the trigram index answers LIKE '%…%' itself (ASCII case folding is moot: both sides
        # are lower-cased already)
        return (
            "SELECT id FROM ck_session_fts WHERE profile=? AND digest LIKE ?",
            f"%{needle}%",
        )

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        self._conn.execute(sql, tuple(params))

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._conn.execute(sql, tuple(params)).fetchall()

    def _begin(self, write: bool, profile: str) -> None:
        self._conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")

    def _commit(self) -> None:
        self._conn.execute("COMMIT")

    def _rollback(self) -> None:
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")

    def _close(self) -> None:
        self._conn.close()

    def translate(self, exc: BaseException) -> ChatkeepError | None:
        code = getattr(exc, "sqlite_errorcode", None)
        known = _SQLITE_CODES.get(code & 0xFF) if isinstance(code, int) else None
        if isinstance(exc, sqlite3.Error) and known is not None:
            what, hint = known
            return StoreError(f"{what}: {self.path} ({exc})", hint=hint)
        if isinstance(exc, OSError):
            return StoreError(f"cannot use the store {self.path}: {exc}", hint=_SQLITE_CODES[10][1])
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return StoreError(
                f"the store {self.path} stayed locked for more than {BUSY_TIMEOUT_S:.0f} s",
                hint="another process holds a long write; retry when it finishes",
            )
        if isinstance(exc, sqlite3.DatabaseError):
            return StoreError(
                f"SQLite error on {self.path}: {exc}",
                hint="the file may be damaged or not a chatkeep store; run `chatkeep stats` or restore a backup",
            )
        return None
