"""PostgreSQL backend (psycopg 3, optional extra ``chatkeep[postgres]``).

Write transactions take ``pg_advisory_xact_lock`` on the profile, so writers of one profile
are serialized across processes and machines exactly as SQLite's ``BEGIN IMMEDIATE`` does;
reads run in REPEATABLE READ snapshots and never wait.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..errors import ChatkeepError, StoreError
from . import postgres_migrations as registry
from .backend import Backend
from .drawer_search import DrawerSearch
from .migrations import Migration
from .schema import Schema
from .search_schema import pg_trigram_statement, search_ready


def _lock_key(profile: str) -> int:
    digest = hashlib.sha256(("chatkeep:" + profile).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def _like(needle: str) -> str:
    """A LIKE pattern for "contains ``needle``" (backslash is the default escape)."""
    return "%" + needle.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _redact(url: str) -> str:
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return scheme + "://…@" + rest.split("@", 1)[1]
    return url


class PostgresDrawerSearch(DrawerSearch):
    """The drawer search on PostgreSQL: ``LIKE`` on names and digests, which the trigram
    indexes of migrations 0009 and 0012 answer where the server has ``pg_trgm``."""

    def reuse_search_plans(self) -> None:
        """``SET LOCAL plan_cache_mode = force_generic_plan`` (PostgreSQL 12 and later). A
        search's statements are prepared after a few calls (psycopg), but the server kept
        planning them afresh on every call (1.4–1.8 ms each, more than running them): the
        plan made for any parameters is the same plan, only estimated dearer, so the server
        never chose it by itself. Only this transaction's statements are affected."""
        if self.backend._conn.info.server_version >= 120000:
            self.backend._conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")

    def indexed_search(self, needle: str) -> bool:
        return len(needle) >= 3  # pg_trgm finds no trigram in a shorter needle: it would scan

    def match_ords_sql(self, needle: str, profile: str) -> tuple[str, tuple[Any, ...]]:
        """``LIKE '%…%'``, which the trigram indexes answer (a plain scan without them)."""
        like = _like(needle)
        return (
            "SELECT ord, pinned, created_at FROM ck_sessions WHERE profile=? AND id IS NOT NULL"
            " AND name_lc LIKE ? UNION SELECT s.ord, s.pinned, s.created_at"
            " FROM ck_session_digest d JOIN ck_sessions s"
            " ON s.profile = d.profile AND s.id = d.id WHERE d.profile=? AND d.digest LIKE ?",
            (profile, like, profile, like),
        )


class PostgresSchema(Schema):
    """The schema upkeep of a PostgreSQL store: its registry (:mod:`.postgres_migrations`)
    and the trigram indexes its ``run`` callables made where the server could."""

    column_probe = (
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema()"
        " AND table_name = ? AND column_name = ?"
    )
    object_probe = (
        "SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relname = ?"
    )

    def migrations(self) -> tuple[Migration, ...]:
        return registry.MIGRATIONS

    def rebuilt_by(self, migration: Migration) -> tuple[str, ...]:
        """The profile-keyed trigram indexes of migration 0012, where the server has the
        extensions they need (without them the migration made none)."""
        if migration.name == registry.SEARCH_TRGM.name:
            stmt = pg_trigram_statement(self.backend)
            return () if stmt is None else (stmt,)
        if migration.name != registry.PROFILE_TRIGRAMS.name:
            return ()
        have = self.backend.query(
            "SELECT count(*) FROM pg_extension WHERE extname IN ('pg_trgm', 'btree_gin')"
        )
        if have[0][0] != 2:
            return ()
        return tuple(
            f"CREATE INDEX IF NOT EXISTS {new} ON {table} USING gin (profile, {column} gin_trgm_ops)"
            for table, column, _old, new in registry.PROFILE_TRIGRAM_INDEXES
        )


class PostgresBackend(Backend):
    dialect = "postgresql"
    #: The class of :attr:`schema` (a subclass of this backend may name its own).
    schema_class: type[PostgresSchema] = PostgresSchema
    blob_type = "BYTEA"
    bytes_len = "octet_length"
    substring_fn = "strpos"
    joined_history_sql = (
        "SELECT count(*), string_agg(value, ',' ORDER BY pos) FROM ck_history WHERE profile=?"
    )
    joined_items_sql = (
        "SELECT count(*), string_agg(value, ',' ORDER BY pos) FROM ck_session_items"
        " WHERE profile=? AND sid=?"
    )

    def __init__(self, url: str) -> None:
        super().__init__()
        self.drawer = PostgresDrawerSearch(self)
        self.schema = self.schema_class(self)
        self.description = _redact(url)
        try:
            import psycopg  # lazy: optional dependency, only for PostgreSQL stores
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise StoreError(
                "PostgreSQL support is not installed",
                hint="pip install 'chatkeep[postgres]'",
            ) from exc
        self._psycopg = psycopg
        self._url = url
        self._conn = self._connect()
        self.schema.migrate()
        self.schema.find_newer_schema()
        with self.transaction("", write=False):
            search_ready(self)

    def refresh_statistics(self) -> None:
        """``ANALYZE`` the tables an import fills (message-search rows included): until
        autovacuum gets to them, the planner would take a drawer of 10,000 imported sessions
        for an empty one (and scan)."""
        try:
            with self.transaction("", write=True):
                self.execute(
                    "ANALYZE ck_sessions, ck_session_digest, ck_kv, ck_history, ck_archive"
                    + (", ck_search" if self.search_rows else "")
                )
                # the imported digests, names and message text wait in the trigram indexes'
                # pending lists, which every search would read through until autovacuum
                # merges them (message search: 67 ms median after 100,000 entries, not 15)
                names = [i for _t, _c, *pair in registry.PROFILE_TRIGRAM_INDEXES for i in pair]
                self.query(
                    "SELECT gin_clean_pending_list(to_regclass(i)) FROM unnest(ARRAY["
                    + ", ".join(f"'{i}'" for i in [*names, "ck_search_trgm"])
                    + "]) AS i"
                    " WHERE to_regclass(i) IS NOT NULL"
                )
        except StoreError:  # best effort: the import itself is committed already
            pass

    def plan_each_statement(self) -> None:
        """``SET LOCAL plan_cache_mode = force_custom_plan`` (PostgreSQL 12 and later). Once a
        statement is prepared (psycopg, after a few calls), the server may settle on a plan
        made for any parameters, and keep it while its statistics stay as they were. A message
        search's ``body ILIKE $2`` cannot then tell a rare word from a common one and read the
        profile's rows newest first, filtering each (a miss or a CJK phrase in a 200,000-row
        profile of a database shared with 200 others: 660–710 ms), where the trigram index
        answers it in 10–35 ms. An import's check of which ids are taken was planned while the
        tables were empty, as a scan: with no ``ANALYZE`` since (autovacuum off or behind),
        each batch of 500 sessions took longer than the last (2 s at 5,000 sessions, 10 s at
        25,000). Planning afresh costs under half a millisecond. (The drawer's statements are
        the other way round: :meth:`PostgresDrawerSearch.reuse_search_plans`.) Only this
        transaction's statements are affected."""
        if self._conn.info.server_version >= 120000:
            self._conn.execute("SET LOCAL plan_cache_mode = force_custom_plan")

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(self._url, autocommit=True, connect_timeout=10)
        except self._psycopg.Error as exc:
            raise StoreError(
                f"cannot connect to PostgreSQL at {self.description}: {str(exc).strip()}",
                hint="check that the server runs and the URL (host, port, database, user) is right",
            ) from exc

    def execute(self, sql: str, params: Sequence[Any] = ()) -> None:
        if self._traces:
            self._note(sql)
        self._conn.execute(sql.replace("?", "%s"), tuple(params))  # type: ignore[arg-type]

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        if self._traces:
            self._note(sql)
        return self._conn.execute(sql.replace("?", "%s"), tuple(params)).fetchall()  # type: ignore[arg-type]

    def _begin(self, write: bool, profile: str) -> None:
        if self._conn.broken or self._conn.closed:
            # the server went away since the last transaction (restart, network cut):
            # that transaction was rolled back by the server; start afresh on a new connection
            self._conn = self._connect()
        if write:
            self._conn.execute("BEGIN")
            self._conn.execute("SELECT pg_advisory_xact_lock(%s)", (_lock_key(profile),))
        else:
            self._conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def _commit(self) -> None:
        self._conn.execute("COMMIT")

    def _rollback(self) -> None:
        if not (self._conn.broken or self._conn.closed):
            self._conn.execute("ROLLBACK")

    def _close(self) -> None:
        self._conn.close()

    def translate(self, exc: BaseException) -> ChatkeepError | None:
        state = getattr(exc, "sqlstate", None) or ""
        if state.startswith("53"):  # insufficient resources: disk full, out of memory, …
            return StoreError(
                f"the PostgreSQL server ran out of a resource ({self.description}): "
                f"{str(exc).strip()}",
                hint=(
                    "free disk space (or memory) on the database server; the unfinished write "
                    "was rolled back and nothing acknowledged was lost"
                ),
            )
        if state == "25006":  # read_only_sql_transaction
            return StoreError(
                f"the PostgreSQL database is read-only ({self.description}): {str(exc).strip()}",
                hint=(
                    "reading works; to write, make the database writable again (a standby "
                    "server, or default_transaction_read_only set on the database or role)"
                ),
            )
        if isinstance(exc, self._psycopg.OperationalError):
            return StoreError(
                f"PostgreSQL connection problem ({self.description}): {str(exc).strip()}",
                hint=(
                    "check that the server is running and reachable; the unfinished write was "
                    "rolled back and the next command reconnects"
                ),
            )
        lost = str(exc).partition('relation "')[2].partition('"')[0]
        if state == "42P01" and lost.startswith("ck_"):  # undefined_table
            return StoreError(
                f"the store {self.description} lost its table {lost} (it was dropped)",
                hint="run `chatkeep doctor --repair`: it re-creates the table and recovers the"
                " sessions from their stored bodies",
            )
        if isinstance(exc, self._psycopg.Error):
            return StoreError(f"PostgreSQL error: {str(exc).strip()}")
        return None
