"""SQLite backend: the embedded default. One file, WAL journal, created with mode 0600; see
:class:`SQLiteBackend` for what opening checks."""

from __future__ import annotations

import os
import sqlite3
import stat
import time
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from ..errors import ChatkeepError, StoreError
from . import sqlite_migrations as registry
from .backend import Backend
from .migrations import Migration
from .schema import Schema
from .search_schema import FTS_STATEMENTS, search_ready
from .search_tail import FLUSH_ROWS, flush, set_mark
from .search_tail import STATEMENTS as TAIL_STATEMENTS
from .sqlite_order import TRIGGERS, SQLiteDrawerSearch, order_rids
from .sqlite_search import NAME_TABLE, TEXT_TABLE, optimize_trigram_tables

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
    returns the files changed. Files of another user are left alone (chmod would fail)."""
    changed = []
    for p in store_files(path):
        try:
            st = os.stat(p)
            if st.st_mode & 0o077 and st.st_uid == os.getuid():
                os.chmod(p, stat.S_IMODE(st.st_mode) & 0o700)  # a read-only store stays so
                changed.append(p)
        except OSError:
            continue
    return changed


def _writable(path: str) -> bool:
    """Whether this process may write the store file and its directory (for the journals)."""
    parent = os.path.dirname(os.path.abspath(path))
    return os.access(path, os.W_OK) and os.access(parent, os.W_OK | os.X_OK)


def _was_emptied(path: str) -> bool:
    """Whether an existing store file is 0 bytes (with no write-ahead log holding its pages):
    a store that was cut off looks exactly like a new empty SQLite file. It is opened as a new
    store (as an empty SQLite file always was), and ``chatkeep doctor`` says what it found."""
    try:
        wal = os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0
        return os.path.isfile(path) and os.path.getsize(path) == 0 and not wal
    except OSError:
        return False


class SQLiteSchema(Schema):
    """The schema upkeep of an SQLite store: its registry (:mod:`.sqlite_migrations`), the
    trigram tables and triggers its ``run`` callables made, and the check of the file's
    pages (:mod:`.sqlite_rescue`)."""

    column_probe = "SELECT 1 FROM pragma_table_info(?) WHERE name = ?"
    object_probe = "SELECT 1 FROM sqlite_master WHERE name = ?"

    def migrations(self) -> tuple[Migration, ...]:
        return registry.MIGRATIONS

    def rebuilt_by(self, migration: Migration) -> tuple[str, ...]:
        """The trigram tables and their triggers (made by ``run`` callables)."""
        if migration.name == registry.SEARCH_TRGM.name:  # its triggers, unless 0018 replaced them
            tail = registry.SEARCH_TAIL.name in self.applied_migrations()
            return FTS_STATEMENTS[:1] if tail else FTS_STATEMENTS
        return {
            registry.SESSION_TEXT.name: TEXT_TABLE,
            registry.SESSION_NAMES.name: NAME_TABLE,
            registry.SESSION_ORDER.name: TRIGGERS,
            registry.SEARCH_TAIL.name: TAIL_STATEMENTS,
        }.get(migration.name, ())

    def after_rebuild(self) -> None:
        """The names' mirror back in step with ``ck_sessions`` (rows of index rows that are
        gone out, missing ones in), the trigram rows in the drawer's order and both trigram
        indexes rebuilt from their content tables (one of them may have been re-created
        empty)."""
        backend = self.backend
        have = {r[0] for r in backend.query("SELECT name FROM sqlite_master WHERE type='table'")}
        if "ck_session_name" in have:
            backend.execute(
                "DELETE FROM ck_session_name WHERE NOT EXISTS (SELECT 1 FROM ck_sessions s"
                " WHERE s.profile = ck_session_name.profile AND s.ord = ck_session_name.ord)"
            )
            backend.execute(
                "INSERT OR IGNORE INTO ck_session_name (profile, ord, name_lc)"
                " SELECT profile, ord, name_lc FROM ck_sessions"
            )
        if "ck_search_fts" in have:
            backend.execute("INSERT INTO ck_search_fts (ck_search_fts) VALUES ('rebuild')")
            if "ck_search_mark" in have:
                set_mark(backend)  # it holds every row now
        if registry.SESSION_ORDER.name in self.applied_migrations():
            order_rids(backend)  # renumbers into buckets and rebuilds both indexes
            return
        for fts in ("ck_session_name_trgm", "ck_session_trgm"):
            if fts in have:
                backend.execute(f"INSERT INTO {fts} ({fts}) VALUES ('rebuild')")

    def page_damage(self) -> list[tuple[str, str]]:
        from .sqlite_rescue import page_damage

        return page_damage(self.backend)


class SQLiteBackend(Backend):
    """One SQLite file (or ``:memory:``).

    Opening never creates directories: the parent directory must exist (the caller, i.e.
    :func:`chatkeep.open`, creates only the default data directory). A missing file is created
    with mode 0600. A file that is not SQLite, or an SQLite database of another application
    (tables, none of them chatkeep's), is refused with a :class:`StoreError` before anything is
    written to it. A file this process cannot write is opened read-only: reading works, a write
    raises ``StoreError``. Schema migrations run only when one is missing.
    """

    dialect = "sqlite"
    drawer: SQLiteDrawerSearch
    #: The class of :attr:`schema` (a subclass of this backend may name its own).
    schema_class: type[SQLiteSchema] = SQLiteSchema
    local = True
    blob_type = "BLOB"
    bytes_len = "length"

    def __init__(self, path: str) -> None:
        super().__init__()
        self.drawer = SQLiteDrawerSearch(self)
        self.schema = self.schema_class(self)
        self.path = path
        self._tail_added = 0  # message-search rows added since the tail was looked at
        self.description = f"sqlite://{path}" if path != ":memory:" else ":memory:"
        self.read_only = False
        #: The file existed and was empty (0 bytes) when opened: reported by the doctor.
        self.opened_empty = path != ":memory:" and _was_emptied(path)
        if path != ":memory:":
            self._create_file(path)
            tighten_permissions(path)  # an existing store readable by others becomes private
            self.read_only = not _writable(path)
        try:
            self._conn = self._connect(path, immutable=False)
            tables = self._tables()
        except sqlite3.OperationalError as exc:
            if not self.read_only:
                raise self._open_error(exc) from exc
            # a read-only WAL file in a directory we cannot write (no -shm file can be made):
            # read it as immutable, which needs no shared-memory file
            if getattr(self, "_conn", None) is not None:
                self._conn.close()
            try:
                self._conn = self._connect(path, immutable=True)
                tables = self._tables()
            except sqlite3.Error as again:
                raise self._open_error(again) from again
        except sqlite3.Error as exc:
            raise self._open_error(exc) from exc
        foreign = sorted(t for t in tables if not t.startswith(("ck_", "sqlite_")))
        if foreign and not any(t.startswith("ck_") for t in tables):
            self._conn.close()
            shown = ", ".join(foreign[:5]) + (", …" if len(foreign) > 5 else "")
            raise StoreError(
                f"{path} is another application's SQLite database ({len(foreign)} tables: "
                f"{shown}), not a chatkeep store; nothing was changed",
                hint="pass the path of a chatkeep store or of a new file with --store",
            )
        try:
            if not self.read_only:
                if path != ":memory:":
                    self._use_wal()
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute("PRAGMA foreign_keys=OFF")
            # 32 MiB of page cache (SQLite's default is 2 MiB): a search in a big drawer then
            # finds its index pages still cached after the writes between two searches
            self._conn.execute("PRAGMA cache_size=-32768")
        except sqlite3.Error as exc:
            raise self._open_error(exc) from exc
        if sqlite3.sqlite_version_info >= (3, 44):  # ordered aggregates; before, the
            # ordered subquery of the base class gives the order (SQLite does not flatten it)
            self.joined_history_sql = (
                "SELECT count(*), group_concat(value, ',' ORDER BY pos) FROM ck_history"
                " WHERE profile=?"
            )
        if self._needs_migration(tables):
            if self.read_only:
                raise StoreError(
                    f"the store {path} needs a schema upgrade but is read-only",
                    hint="open it once with write permission on the file and its directory",
                )
            self.schema.migrate()
        self.schema.find_newer_schema()
        self._use_trigram_index()

    def _use_wal(self) -> None:
        """Put the file in WAL mode unless it is already. Switching takes SQLite's exclusive
        lock and answers "database is locked" at once, without waiting, while another connection
        opens the same new file (two commands started together): it is tried again until the
        busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                if self._conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    self._conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    @staticmethod
    def _create_file(path: str) -> None:
        parent = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(parent):
            raise StoreError(
                f"cannot create the SQLite store {path}: the directory {parent} does not exist",
                hint=f"check the path for a typo, or create the directory first (mkdir -p {parent})",
            )
        if os.path.isdir(path):
            raise StoreError(
                f"{path} is a directory, not a store file",
                hint=f"pass a file path, e.g. {os.path.join(path, 'chatkeep.db')}",
            )
        if os.path.exists(path):
            return
        try:
            fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
            os.close(fd)
        except OSError as exc:
            raise StoreError(
                f"cannot create the SQLite store {path}: {exc.strerror or exc}",
                hint=f"check that you may write to {parent}, or pass another --store",
            ) from exc

    def _connect(self, path: str, *, immutable: bool) -> sqlite3.Connection:
        target: str = path
        uri = False
        if self.read_only:
            target = f"file:{quote(os.path.abspath(path))}?mode=ro" + (
                "&immutable=1" if immutable else ""
            )
            uri = True
        return sqlite3.connect(
            target,
            timeout=BUSY_TIMEOUT_S,
            isolation_level=None,
            check_same_thread=False,
            uri=uri,
        )

    def _tables(self) -> set[str]:
        rows = self._conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
        return {r[0] for r in rows}

    def _needs_migration(self, tables: set[str]) -> bool:
        """Whether a migration is missing (so opening needs a write); the optional FTS5 index
        (it stays missing on an SQLite without FTS5) never makes a read-only open fail."""
        if "ck_migrations" not in tables:
            return True
        try:
            done = {r[0] for r in self._conn.execute("SELECT name FROM ck_migrations").fetchall()}
        except sqlite3.OperationalError:
            raise
        except sqlite3.DatabaseError:  # its pages do not read: `doctor` reports and rebuilds it
            return False
        missing = [m.name for m in self.schema.migrations() if m.name not in done]
        if self.read_only and set(missing) <= registry.OPTIONAL:
            return False
        return bool(missing)

    def _open_error(self, exc: BaseException) -> StoreError:
        text = str(exc)
        if isinstance(exc, sqlite3.DatabaseError) and "not a database" in text:
            return StoreError(
                f"{self.path} is not an SQLite database (file is not a database)",
                hint="it may be another kind of file or a damaged store; pass the path of a "
                "chatkeep store, or of a new file, with --store",
            )
        if "readonly" in text or "read-only" in text:
            return StoreError(
                f"the store {self.path} is read-only: {text}",
                hint="reading commands work on it; writing needs write permission on the file "
                "and its directory",
            )
        return StoreError(
            f"cannot open the SQLite store at {self.path}: {text}",
            hint="check that the file and its directory can be read (and written, to change "
            "it), or pass another --store",
        )

    # -- damaged pages (:mod:`.sqlite_rescue`; the check: :meth:`SQLiteSchema.page_damage`) ---
    def salvage_report(self) -> tuple[dict[str, int], list[Any]]:
        from .sqlite_rescue import salvage_report

        return salvage_report(self)

    def rescue_into(self, target: str) -> tuple[dict[str, int], list[Any]]:
        from .sqlite_rescue import rescue_into

        return rescue_into(self, target)

    def rescue(self) -> tuple[str, list[Any]]:
        from .sqlite_rescue import rescue

        return rescue(self)

    def _use_trigram_index(self) -> None:
        """Search through the trigram index of migration 0007 (read-only, not upgraded: 0003)."""
        with self.transaction("", write=False):
            have = {
                r[0]
                for r in self.query(
                    "SELECT name FROM sqlite_master"
                    " WHERE name IN ('ck_session_text', 'ck_session_fts', 'ck_session_name',"
                    " 'ck_sessions_text_au')"
                )
            }
        search_ready(self)
        self.drawer.use_indexes(have)

    def search_rows_added(self, n: int) -> None:
        """The tail is looked at once this connection has added :data:`FLUSH_ROWS` rows
        since it last looked (rows other processes add count when they look)."""
        if not self.search_tail:
            return
        self._tail_added += n
        if self._tail_added >= FLUSH_ROWS:
            flush(self)
            self._tail_added = 0

    def refresh_statistics(self) -> None:
        optimize_trigram_tables(self)

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        if self._traces:
            self._note(sql)
        self._conn.execute(sql, tuple(params))

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self._traces:
            self._note(sql)
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
        if known is not None and code is not None and code & 0xFF != 8:  # 8: read-only, below
            return StoreError(f"{known[0]}: {self.path} ({exc})", hint=known[1])
        if isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc):
            return StoreError(
                f"the store {self.path} is read-only; this command needs to write",
                hint="reading commands (history, sessions list/show, stats, export) work; to "
                "write, get write permission on the file and its directory",
            )
        if isinstance(exc, sqlite3.DatabaseError) and "not a database" in str(exc):
            return self._open_error(exc)
        if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
            return StoreError(
                f"the store {self.path} stayed locked for more than {BUSY_TIMEOUT_S:.0f} s",
                hint="another process holds a long write; retry when it finishes",
            )
        lost = str(exc).partition("no such table: ")[2]
        if isinstance(exc, sqlite3.OperationalError) and lost.startswith("ck_"):
            return StoreError(
                f"the store {self.path} lost its table {lost} (it was dropped or damaged)",
                hint="run `chatkeep doctor --repair`: it rebuilds the table and recovers the"
                " sessions from their stored bodies",
            )
        if isinstance(exc, sqlite3.DatabaseError):
            return StoreError(
                f"SQLite error on {self.path}: {exc}",
                hint="the file may be damaged or not a chatkeep store; run `chatkeep stats` or restore a backup",
            )
        return None
