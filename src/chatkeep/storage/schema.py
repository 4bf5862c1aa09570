"""The upkeep of a backend's schema: which migrations it applies and applying them, the check
that a newer chatkeep changed the store, and what the doctor reads and re-creates (the tables,
columns, indexes and triggers gone behind chatkeep's back; the pages that do not read).

Each backend makes one such object, ``backend.schema``, before it migrates: :class:`Schema`
here holds what every backend shares, :class:`~.sqlite.SQLiteSchema` and
:class:`~.postgres.PostgresSchema` what differs. The migrations themselves are listed in each
backend's registry (:mod:`.sqlite_migrations`, :mod:`.postgres_migrations`). What a
transaction reads stays on the backend: ``newer_schema`` (set here) refuses its writes.
"""

from __future__ import annotations

from typing import Any

from ..errors import StoreError
from .migrations import Migration, for_dialect
from .sql import now_ms


class Schema:
    """The schema upkeep of one backend: the shared behaviour (no probe of its objects)."""

    #: Whether ``table`` has ``column``: one row when it does (parameters: table, column).
    column_probe = ""
    #: One row when a table, index or trigger of this name exists (parameter: the name);
    #: empty where the backend does not check (nothing is then reported missing).
    object_probe = ""

    def __init__(self, backend: Any) -> None:
        #: The backend whose schema this object keeps (its statements run there).
        self.backend = backend

    def migrations(self) -> tuple[Migration, ...]:
        """Every migration this backend applies, in order: its registry module
        (:mod:`.sqlite_migrations`, :mod:`.postgres_migrations`); here, the shared ones."""
        return for_dialect(self.backend.dialect)

    def migrate(self) -> None:
        """Apply the named migrations not applied yet, in order, **each in its own
        transaction** with its bookkeeping row: a failure leaves every earlier one applied and
        this one not at all."""
        if self._all_applied():  # the usual open: one read, no write transaction at all
            return
        backend = self.backend
        with backend.transaction("", write=True):
            backend.execute(
                "CREATE TABLE IF NOT EXISTS ck_migrations"
                " (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)"
            )
        for migration in self.migrations():
            with backend.transaction("", write=True):
                if backend.query("SELECT 1 FROM ck_migrations WHERE name=?", (migration.name,)):
                    continue
                for stmt in migration.statements:
                    if self._column_there(stmt):
                        continue  # the bookkeeping row was lost, the schema change was not
                    backend.execute(stmt.replace("{blob}", backend.blob_type))
                if migration.run is not None and migration.run(backend) is False:
                    continue
                backend.execute(
                    "INSERT INTO ck_migrations (name, applied_at) VALUES (?, ?)",
                    (migration.name, now_ms()),
                )

    def _column_there(self, stmt: str) -> bool:
        """Whether ``stmt`` adds a column that is already there: ``ADD COLUMN`` is the one
        schema change without ``IF NOT EXISTS`` on both databases, so a store whose
        ``ck_migrations`` table was lost can apply its migrations again."""
        if not _adds_column(stmt):
            return False
        words = stmt.split()
        return bool(self.backend.query(self.column_probe, (words[2], words[5])))

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
        backend = self.backend
        with backend.transaction("", write=False):
            statements = self.schema_statements()
            wanted = [o for o in map(_object_of, statements) if o is not None]
            gone = [(k, n) for k, n in wanted if not backend.query(self.object_probe, (n,))]
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
        backend = self.backend
        with backend.transaction("", write=True):
            for stmt in self.schema_statements():
                if self._column_there(stmt):
                    continue
                backend.execute(stmt.replace("{blob}", backend.blob_type))
            self.after_rebuild()
        from .salvage import digests_again  # lazy: only a repair needs it
        from .search_schema import reindex_all, search_ready

        digests_again(backend)
        with backend.transaction("", write=True):
            search_ready(backend)
            reindex_all(backend)

    def after_rebuild(self) -> None:
        """Bring derived tables back in step after :meth:`rebuild_schema` (override)."""
        return None

    def page_damage(self) -> list[tuple[str, str]]:
        """(table, what the database says) for each table whose pages do not read (SQLite:
        zeroed or overwritten pages of the file); empty where the backend does not check."""
        return []

    def _all_applied(self) -> bool:
        try:
            with self.backend.transaction("", write=False):
                done = {r[0] for r in self.backend.query("SELECT name FROM ck_migrations")}
        except StoreError:  # a new database: no bookkeeping table yet
            return False
        return all(m.name in done for m in self.migrations())

    def find_newer_schema(self) -> None:
        """After opening: a migration row this code does not know means a newer chatkeep
        changed the schema, so this one must not write (it could break what the newer one
        relies on): the backend is then read-only (its ``newer_schema`` lists those rows), and
        every write says to upgrade."""
        backend = self.backend
        try:
            with backend.transaction("", write=False):
                done = {r[0] for r in backend.query("SELECT name FROM ck_migrations")}
        except StoreError:
            return
        known = {m.name for m in self.migrations()}
        backend.newer_schema = sorted(str(n) for n in done - known)
        if backend.newer_schema:
            backend.read_only = True

    def newer_schema_error(self) -> StoreError:
        newer = self.backend.newer_schema
        shown = ", ".join(newer[:3]) + (", …" if len(newer) > 3 else "")
        return StoreError(
            f"the store {self.backend.description} was changed by a newer chatkeep"
            f" (schema {shown}); this version opens it read-only: nothing was written",
            hint="upgrade chatkeep (pip install -U chatkeep) to write to it; reading works",
        )

    def applied_migrations(self) -> list[str]:
        """Names of the migrations applied to this database, in the order applied."""
        return [
            r[0]
            for r in self.backend.query("SELECT name FROM ck_migrations ORDER BY applied_at, name")
        ]


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
