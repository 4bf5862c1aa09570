"""Backend base class: one connection, one FIFO in-process lock, explicit transactions.

A backend hands out :class:`~.sql.Tx` objects through :meth:`Backend.transaction`. Write
transactions are exclusive per profile across processes (SQLite ``BEGIN IMMEDIATE``;
PostgreSQL a transaction-scoped advisory lock on the profile), which is what makes the
history lock and the session lock hold between two CLI processes or the panel and the CLI.
The same thread re-entering joins the running transaction.

Driver errors are translated into :class:`~chatkeep.errors.StoreError` here, in
:meth:`Backend.translate` of each subclass, and nowhere else.

The drawer search's tuning (its digest table, how a digest is inserted, the SQL finding a
query's matches) is not here: each backend makes one :class:`~.drawer_search.DrawerSearch`,
:attr:`Backend.drawer`. The message search's flags and hooks are the backend's own.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from ..errors import ChatkeepError, StoreError
from .drawer_search import DrawerSearch
from .locks import FifoRLock
from .migrations import Migration, for_dialect
from .sql import Tx, now_ms
from .trace import Trace


class Backend(ABC):
    dialect = ""
    bytes_len = "length"
    substring_fn = "instr"  # position of a substring, 0 when absent
    #: Whether the database lives in this process (rows read are not sent over a network).
    local = False
    #: Whether the message-search rows are kept (migrations 0014 and 0016 applied), and
    #: whether SQLite's trigram index answers them (0015): :mod:`.search_schema`.
    search_rows = search_fts = search_vectors = search_tail = False
    #: The drawer search's tuning (:mod:`.drawer_search`), made once by each backend.
    drawer: DrawerSearch

    #: The live history's row count and texts, ordered by position, joined with "," in one
    #: value (the ordered subquery gives the order; SQLite does not flatten it).
    joined_history_sql = (
        "SELECT count(*), group_concat(value, ',') FROM"
        " (SELECT value FROM ck_history WHERE profile=? ORDER BY pos)"
    )

    #: A saved body's row count and texts, ordered by position, joined with "," in one value
    #: (parameters: profile, session id).
    joined_items_sql = (
        "SELECT count(*), group_concat(value, ',') FROM (SELECT value FROM ck_session_items"
        " WHERE profile=? AND sid=? ORDER BY pos)"
    )

    def search_rows_added(self, n: int) -> None:
        """At the end of a write transaction that wrote ``n`` message-search rows: index what
        the text index is to take from them (SQLite: :mod:`.search_tail`). Nothing
        elsewhere."""
        return None

    def plan_each_statement(self) -> None:
        """Inside a transaction, before its statements: plan each one for its own parameters
        (PostgreSQL: a message search, an import). Nothing to do elsewhere."""
        return None

    def __init__(self) -> None:
        self.lock = FifoRLock()
        self._local = threading.local()
        self._closed = False
        #: Migrations this database has that this code does not know (a newer chatkeep wrote
        #: it): the store is then opened read-only (see :meth:`find_newer_schema`).
        self.newer_schema: list[str] = []
        self._traces: list[Trace] = []

    # -- diagnostics (:mod:`.trace`) ----------------------------------------------------------
    @contextmanager
    def trace(self) -> Iterator[Trace]:
        """Record the statements and transactions this connection runs inside the block."""
        seen = Trace()
        self._traces.append(seen)
        try:
            yield seen
        finally:
            self._traces.remove(seen)

    def _note(self, sql: str, transaction: str = "") -> None:
        """Tell the open traces of one statement (and of the transaction it opens)."""
        for seen in self._traces:
            seen.statements.append(sql)
            if transaction:
                seen.transactions.append(transaction)

    # -- to implement -----------------------------------------------------------------------
    @abstractmethod
    def execute(self, sql: str, params: Sequence[Any] = ()) -> None: ...

    @abstractmethod
    def query(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

    @abstractmethod
    def _begin(self, write: bool, profile: str) -> None: ...

    @abstractmethod
    def _commit(self) -> None: ...

    @abstractmethod
    def _rollback(self) -> None: ...

    @abstractmethod
    def _close(self) -> None: ...

    @abstractmethod
    def translate(self, exc: BaseException) -> ChatkeepError | None:
        """The chatkeep error for a driver error, or None when it is not a driver error."""

    blob_type = "BLOB"
    description = ""
    read_only = False

    def binary(self, data: bytes) -> Any:
        return data

    # -- transactions -----------------------------------------------------------------------
    @contextmanager
    def transaction(self, profile: str, *, write: bool = True) -> Iterator[Tx]:
        if self._closed:
            raise StoreError("the store is closed", hint="open it again with chatkeep.open()")
        self.lock.acquire()
        try:
            depth = getattr(self._local, "depth", 0)
            if depth:
                current: Tx = self._local.tx
                if write and not self._local.write:
                    raise StoreError(
                        "a write was attempted inside a read-only transaction",
                        hint="do not call locked store operations from inside a mutator",
                    )
                if current.profile != profile:
                    raise StoreError("nested transaction on another profile")
                self._local.depth = depth + 1
                try:
                    yield current
                finally:
                    self._local.depth = depth
                return
            if write and self.newer_schema:
                raise self.newer_schema_error()
            try:
                self._begin(write, profile)
            except BaseException as exc:
                raise self._translated(exc) from exc
            if self._traces:
                self._note("BEGIN", "write" if write else "read")
            tx = Tx(self, profile)
            tx.write = write
            self._local.depth, self._local.tx, self._local.write = 1, tx, write
            try:
                yield tx
            except BaseException as exc:
                self._local.depth = 0
                try:
                    self._rollback()
                except Exception:  # the original error matters more
                    pass
                err = self._translated(exc)
                if err is exc:
                    raise
                raise err from exc
            self._local.depth = 0
            try:
                if tx.search_written:
                    self.drawer.tidy_search()
                if tx.search_added:
                    self.search_rows_added(tx.search_added)
                self._commit()
                if self._traces:
                    self._note("COMMIT")
            except BaseException as exc:
                try:
                    self._rollback()
                except Exception:  # the original error matters more
                    pass
                raise self._translated(exc) from exc
        finally:
            self.lock.release()

    def read_one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        """The first column of the first row of one read statement, or None: a single
        statement is atomic by itself, so no explicit transaction is opened (inside one on
        this thread, it joins it)."""
        if self._closed:
            raise StoreError("the store is closed", hint="open it again with chatkeep.open()")
        with self.lock:
            if self._traces and not getattr(self._local, "depth", 0):
                for seen in self._traces:  # a lone statement: its own transaction
                    seen.transactions.append("autocommit")
            try:
                rows = self.query(sql, params)
            except BaseException as exc:  # autocommit: a failed statement leaves no transaction
                raise self._translated(exc) from exc
        return rows[0][0] if rows else None

    def _translated(self, exc: BaseException) -> BaseException:
        if isinstance(exc, ChatkeepError):
            return exc
        mapped = self.translate(exc)
        return mapped if mapped is not None else exc

    #: Rows one write adds from which it counts as a bulk write (an import).
    bulk_rows = 100

    def refresh_statistics(self) -> None:
        """After a bulk write (an import, a large ``add_many``): bring the search indexes and
        the planner's statistics up to date (nothing to do here; SQLite and PostgreSQL
        override it)."""
        return None

    def migrations(self) -> tuple[Migration, ...]:
        """Every migration this backend applies, in order: its registry module
        (:mod:`.sqlite_migrations`, :mod:`.postgres_migrations`); here, the shared ones."""
        return for_dialect(self.dialect)

    def migrate(self) -> None:
        """Apply the named migrations not applied yet, in order, **each in its own
        transaction** with its bookkeeping row: a failure leaves every earlier one applied and
        this one not at all."""
        if self._all_applied():  # the usual open: one read, no write transaction at all
            return
        with self.transaction("", write=True):
            self.execute(
                "CREATE TABLE IF NOT EXISTS ck_migrations"
                " (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)"
            )
        for migration in self.migrations():
            with self.transaction("", write=True):
                if self.query("SELECT 1 FROM ck_migrations WHERE name=?", (migration.name,)):
                    continue
                for stmt in migration.statements:
                    if self._column_there(stmt):
                        continue  # the bookkeeping row was lost, the schema change was not
                    self.execute(stmt.replace("{blob}", self.blob_type))
                if migration.run is not None and migration.run(self) is False:
                    continue
                self.execute(
                    "INSERT INTO ck_migrations (name, applied_at) VALUES (?, ?)",
                    (migration.name, now_ms()),
                )

    #: Whether ``table`` has ``column``: one row when it does (parameters: table, column).
    column_probe = ""

    def _column_there(self, stmt: str) -> bool:
        """Whether ``stmt`` adds a column that is already there: ``ADD COLUMN`` is the one
        schema change without ``IF NOT EXISTS`` on both databases, so a store whose
        ``ck_migrations`` table was lost can apply its migrations again."""
        if not _adds_column(stmt):
            return False
        words = stmt.split()
        return bool(self.query(self.column_probe, (words[2], words[5])))

    #: One row when a table, index or trigger of this name exists (parameter: the name);
    #: empty where the backend does not check (nothing is then reported missing).
    object_probe = ""

    def rebuilt_by(self, migration: Migration) -> tuple[str, ...]:
        """Statements re-creating what ``migration``'s ``run`` made (override), beyond its
        ``CREATE … IF NOT EXISTS`` and ``ADD COLUMN`` statements."""
        return ()

    def schema_statements(self) -> list[str]:
        """In order, the statements that re-create every table, column, index and trigger the
        applied migrations made: each one does nothing where its object is there."""
        done = set(self.applied_migrations())
        out: list[str] = []
        for m in self.migrations():
            if m.name in done:
                out += [s for s in m.statements if _object_of(s) or _adds_column(s)]
                out += self.rebuilt_by(m)
        return out

    def missing_schema(self) -> list[tuple[str, str]]:
        """(kind, name) of each table, index or trigger of the applied migrations that is not
        in the database (dropped behind chatkeep's back); a table's own indexes and triggers
        go with it and are not listed again."""
        if not self.object_probe:
            return []
        with self.transaction("", write=False):
            statements = self.schema_statements()
            wanted = [o for o in map(_object_of, statements) if o is not None]
            gone = [(k, n) for k, n in wanted if not self.query(self.object_probe, (n,))]
        tables = {n for k, n in gone if k == "table"}
        seen: set[str] = set()
        out = []
        for kind, name in gone:
            on = _table_of(statements, name)
            if name in seen or (kind != "table" and on in tables):
                continue
            seen.add(name)
            out.append((kind, name))
        return out

    def rebuild_schema(self) -> None:
        """Re-create what :meth:`missing_schema` lists (the rows a dropped table held are not
        brought back here: the doctor recovers what it can from the rows left), then give
        each saved session whose search digest is gone a new one, made from its body."""
        with self.transaction("", write=True):
            for stmt in self.schema_statements():
                if self._column_there(stmt):
                    continue
                self.execute(stmt.replace("{blob}", self.blob_type))
            self.after_rebuild()
        from .salvage import digests_again  # lazy: only a repair needs it
        from .search_schema import reindex_all, search_ready

        digests_again(self)
        with self.transaction("", write=True):
            search_ready(self)
            reindex_all(self)

    def after_rebuild(self) -> None:
        """Bring derived tables back in step after :meth:`rebuild_schema` (override)."""
        return None

    def page_damage(self) -> list[tuple[str, str]]:
        """(table, what the database says) for each table whose pages do not read (SQLite:
        zeroed or overwritten pages of the file); empty where the backend does not check."""
        return []

    def _all_applied(self) -> bool:
        try:
            with self.transaction("", write=False):
                done = {r[0] for r in self.query("SELECT name FROM ck_migrations")}
        except StoreError:  # a new database: no bookkeeping table yet
            return False
        return all(m.name in done for m in self.migrations())

    def find_newer_schema(self) -> None:
        """After opening: a migration row this code does not know means a newer chatkeep
        changed the schema, so this one must not write (it could break what the newer one
        relies on): the store is then read-only, and every write says to upgrade."""
        try:
            with self.transaction("", write=False):
                done = {r[0] for r in self.query("SELECT name FROM ck_migrations")}
        except StoreError:
            return
        known = {m.name for m in self.migrations()}
        self.newer_schema = sorted(str(n) for n in done - known)
        if self.newer_schema:
            self.read_only = True

    def newer_schema_error(self) -> StoreError:
        shown = ", ".join(self.newer_schema[:3]) + (", …" if len(self.newer_schema) > 3 else "")
        return StoreError(
            f"the store {self.description} was changed by a newer chatkeep (schema {shown});"
            " this version opens it read-only: nothing was written",
            hint="upgrade chatkeep (pip install -U chatkeep) to write to it; reading works",
        )

    def applied_migrations(self) -> list[str]:
        """Names of the migrations applied to this database, in the order applied."""
        return [
            r[0] for r in self.query("SELECT name FROM ck_migrations ORDER BY applied_at, name")
        ]

    def close(self) -> None:
        with self.lock:
            if not self._closed:
                self._closed = True
                self._close()


def _object_of(stmt: str) -> tuple[str, str] | None:
    """(kind, name) of the table, index or trigger a ``CREATE`` statement makes, else None."""
    words = stmt.split()
    up = [w.upper() for w in words[:8]]
    if not up or up[0] != "CREATE":
        return None
    i = 2 if up[1] in ("VIRTUAL", "UNIQUE") else 1
    kind = up[i].lower()
    if kind not in ("table", "index", "trigger"):
        return None
    j = i + 4 if up[i + 1 : i + 4] == ["IF", "NOT", "EXISTS"] else i + 1
    return kind, words[j].split("(")[0]


def _adds_column(stmt: str) -> bool:
    """Whether ``stmt`` is ``ALTER TABLE <table> ADD COLUMN <column> …``."""
    words = [w.upper() for w in stmt.split()[:6]]
    return len(words) == 6 and words[:2] + words[3:5] == ["ALTER", "TABLE", "ADD", "COLUMN"]


def _table_of(statements: list[str], name: str) -> str | None:
    """The table the index or trigger ``name`` is on (``ON <table>`` in its statement)."""
    for stmt in statements:
        obj = _object_of(stmt)
        if obj is not None and obj[1] == name and obj[0] != "table":
            words = stmt.split()
            upper = [w.upper() for w in words]
            if "ON" in upper:
                return words[upper.index("ON") + 1].split("(")[0]
    return None
