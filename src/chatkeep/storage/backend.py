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
:attr:`Backend.drawer`. The message search's flags and hooks are the backend's own. Nor is
the schema's upkeep (its migrations, the check for a newer chatkeep's schema, what the doctor
finds missing and re-creates): each backend makes one :class:`~.schema.Schema`,
:attr:`Backend.schema`.
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
from .schema import Schema
from .sql import Tx
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
    #: The schema's upkeep (:mod:`.schema`), made once by each backend before it migrates.
    schema: Schema

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
        #: it): the store is then opened read-only (set by
        #: :meth:`~.schema.Schema.find_newer_schema`); a write transaction is refused.
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
                raise self.schema.newer_schema_error()
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

    def close(self) -> None:
        with self.lock:
            if not self._closed:
                self._closed = True
                self._close()
