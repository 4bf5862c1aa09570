"""What is left of an SQLite store whose file has damaged pages (zeroed, overwritten).

SQLite stops a statement at the first page it cannot read ("database disk image is
malformed"), so one bad page made ``chatkeep doctor`` and ``chatkeep export`` refuse the whole
store. This module finds the damage and reads around it:

:func:`damaged_tables`  ``PRAGMA quick_check`` of each table (with its indexes): the tables
                        whose pages do not read, and SQLite's own words for each
:func:`salvage`         every row that still reads, table by table: a forward scan by rowid
                        that steps over unreadable stretches (probing further and further
                        ahead, then reading back towards the damage), then each row the
                        table's indexes still list is fetched by its rowid — so a row is lost
                        only when its own page is gone, and then its key is usually known from
                        an index. Each row read goes to a callback; what could not be read is
                        returned, row by row (by key) or, where no index names them, as the
                        stretch between two keys that was unreadable
:func:`rescue_file`     a new store file holding every readable row (the schema made by the
                        migrations, the search indexes rebuilt from the rows), for ``export``
                        to read and for ``doctor --repair`` to copy over the damaged one

Only the ``ck_`` tables holding data are read: the search tables derived from them are
rebuilt, never copied.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from .legacy_index import body_key, text_digest
from .sql import now_ms

__all__ = ["Lost", "damaged_tables", "describe", "holds", "rescue_file", "salvage", "where"]

LOW, HIGH = -(2**63), 2**63 - 1

#: Tables rebuilt from others (or made by the migrations), never copied.
DERIVED = {"ck_migrations", "ck_session_name"}

#: What each table holds, in the user's words.
HOLDS = {
    "ck_kv": "settings and saved-session bodies",
    "ck_history": "the live history",
    "ck_archive": "the archived history",
    "ck_history_state": "the history's counts (recomputed by the repair)",
    "ck_blobs": "images and long texts",
    "ck_blob_refs": "image references (re-linked by the repair)",
    "ck_sessions": "the saved-sessions list",
    "ck_session_items": "saved-session entries",
    "ck_session_text": "the search index of session texts (rebuilt by the repair)",
    "ck_session_digest": "the search index of session texts (rebuilt by the repair)",
    "ck_session_name": "the search index of session names (rebuilt by the repair)",
    "ck_versions": "write counters (reset by the repair)",
    "ck_migrations": "the schema's history (re-made by the repair)",
}


class Lost:
    """Rows of ``table`` that could not be read: one row (``key`` names it, from an index) or
    an unreadable stretch between two rows (``after``/``before``: their keys, ``None`` at an
    end of the table), whose rows no index could name."""

    __slots__ = ("table", "key", "after", "before")

    def __init__(
        self,
        table: str,
        key: dict[str, Any] | None = None,
        after: dict[str, Any] | None = None,
        before: dict[str, Any] | None = None,
    ) -> None:
        self.table, self.key, self.after, self.before = table, key, after, before

    @property
    def profile(self) -> str | None:
        """The profile the row belongs to, when known."""
        for known in (self.key, self.after, self.before):
            if known and isinstance(known.get("profile"), str):
                return str(known["profile"])
        return None

    def as_dict(self) -> dict[str, Any]:
        return {"table": self.table, "key": self.key, "after": self.after, "before": self.before}


def holds(table: str) -> str:
    """What ``table`` holds, in the user's words (the search index's own tables included)."""
    if table in HOLDS:
        return HOLDS[table]
    if table.startswith("ck_session_name_trgm"):
        return HOLDS["ck_session_name"]
    if table.startswith("ck_session_trgm"):
        return HOLDS["ck_session_text"]
    return table


def shown(key: dict[str, Any] | None) -> str:
    """A row's key without its profile: the value alone for a one-column key."""
    if not key:
        return "?"
    rest = {k: v for k, v in key.items() if k != "profile"}
    if len(rest) == 1 and "key" in rest:
        return str(rest["key"])[:120]
    return ", ".join(f"{k}={str(v)[:80]}" for k, v in rest.items())


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def where(lost: Lost) -> str:
    """``table:key`` of a lost row, ``table:after..before`` of a lost stretch."""
    if lost.key is not None:
        return f"{lost.table}:{shown(lost.key)}"
    start = "start" if lost.after is None else shown(lost.after)
    end = "end" if lost.before is None else shown(lost.before)
    return f"{lost.table}:{start}..{end}"


def describe(lost: Lost) -> str:
    """One line saying what was lost, in the table's own keys."""
    if lost.key is not None:
        key = str(lost.key.get("key", ""))
        if lost.table == "ck_kv" and key.startswith("session_"):
            return f"the body of saved session {key[len('session_') :]} ({where(lost)})"
        if lost.table == "ck_session_items":
            sid, pos = lost.key.get("sid"), lost.key.get("pos")
            return f"entry {pos} of saved session {sid} ({where(lost)})"
        return f"a row of {holds(lost.table)} ({where(lost)})"
    start = "the start" if lost.after is None else shown(lost.after)
    end = "the end" if lost.before is None else shown(lost.before)
    return (
        f"the rows of {holds(lost.table)} stored in {lost.table} between {start} and {end}"
        " (no index names them, so which and how many is not known)"
    )


def data_tables(conn: sqlite3.Connection) -> list[str]:
    """The ``ck_`` tables of the file that hold rows (no virtual tables nor their shadow
    tables), in the file's order."""
    rows = conn.execute("SELECT name, sql FROM sqlite_master WHERE type='table'").fetchall()
    virtual = [n for n, sql in rows if (sql or "").upper().startswith("CREATE VIRTUAL")]
    return [
        n
        for n, sql in rows
        if n.startswith("ck_")
        and n not in virtual
        and not any(n.startswith(v + "_") for v in virtual)
    ]


def damaged_tables(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """(table, what SQLite says) for each table of the file (search tables included) whose
    pages, or whose indexes' pages, do not check out."""
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'ck%'"
            " AND coalesce(sql, '') NOT LIKE 'CREATE VIRTUAL%'"
        )
    ]
    out = []
    for name in names:
        try:
            said = [str(r[0]) for r in conn.execute(f"PRAGMA quick_check({_q(name)})")]
        except sqlite3.DatabaseError as exc:
            out.append((name, str(exc)))
            continue
        if said != ["ok"]:
            more = f" (and {len(said) - 3} more)" if len(said) > 3 else ""
            out.append((name, "; ".join(said[:3]) + more))
    return out


class _Table:
    """One table of the damaged file, read around its damage."""

    def __init__(self, conn: sqlite3.Connection, name: str) -> None:
        self.conn = conn
        self.name = name
        info = conn.execute(f"PRAGMA table_info({_q(name)})").fetchall()
        self.columns = [r[1] for r in info]
        pk = sorted((r[5], r[1]) for r in info if r[5])
        self.pk = [c for _n, c in pk]
        cols = ", ".join(_q(c) for c in self.columns)
        self.select = f"SELECT rowid, {cols} FROM {_q(name)}"

    def key(self, row: tuple[Any, ...]) -> dict[str, Any]:
        values = dict(zip(self.columns, row[1:], strict=True))
        return {c: values[c] for c in self.pk} if self.pk else {"rowid": row[0]}

    def forward(
        self, lo: int, hi: int, emit: Callable[[tuple[Any, ...]], None], seen: set[int]
    ) -> tuple[int, dict[str, Any] | None, bool]:
        """Read rows with ``lo <= rowid <= hi`` in order; (last rowid read or ``lo - 1``, its
        key or None, whether the read stopped at damage)."""
        last, key = lo - 1, None
        try:
            for row in self.conn.execute(
                self.select + " WHERE rowid BETWEEN ? AND ? ORDER BY rowid", (lo, hi)
            ):
                last, key = row[0], self.key(row)
                if row[0] not in seen:
                    seen.add(row[0])
                    emit(row)
        except sqlite3.DatabaseError:
            return last, key, True
        return last, key, False

    def backward(
        self, lo: int, hi: int, emit: Callable[[tuple[Any, ...]], None], seen: set[int]
    ) -> tuple[int, dict[str, Any] | None, bool]:
        """Read rows with ``lo <= rowid <= hi`` from the top down, until damage: (lowest rowid
        read or ``hi + 1``, its key or None, whether the read stopped at damage)."""
        low, key = hi + 1, None
        try:
            for row in self.conn.execute(
                self.select + " WHERE rowid BETWEEN ? AND ? ORDER BY rowid DESC", (lo, hi)
            ):
                low, key = row[0], self.key(row)
                if row[0] not in seen:
                    seen.add(row[0])
                    emit(row)
        except sqlite3.DatabaseError:
            return low, key, True
        return low, key, False

    def first_at(self, lo: int, hi: int) -> tuple[Any, ...] | None | bool:
        """The first row at or after ``lo`` (up to ``hi``), ``None`` when there is none,
        ``False`` when the seek hits damage."""
        try:
            row = self.conn.execute(
                self.select + " WHERE rowid BETWEEN ? AND ? ORDER BY rowid LIMIT 1", (lo, hi)
            ).fetchone()
        except sqlite3.DatabaseError:
            return False
        return row if row is not None else None

    def scan(
        self, emit: Callable[[tuple[Any, ...]], None], seen: set[int]
    ) -> list[tuple[dict[str, Any] | None, dict[str, Any] | None, int, int]]:
        """Every row a rowid walk reaches; the unreadable stretches as (key before, key after,
        first rowid, last rowid)."""
        gaps: list[tuple[dict[str, Any] | None, dict[str, Any] | None, int, int]] = []
        todo: list[tuple[int, int, dict[str, Any] | None]] = [(LOW, HIGH, None)]
        while todo:
            lo, hi, before_key = todo.pop()
            last, key, broke = self.forward(lo, hi, emit, seen)
            if not broke:
                continue
            key = key if key is not None else before_key
            start = last + 1
            # a walk that read nothing starts its probes one further (the seek at ``lo`` failed)
            step, probe, found = 1, start if last >= lo else min(start + 1, hi), None
            while True:  # further and further ahead, until a seek reads
                got = self.first_at(probe, hi)
                if got is not False:
                    found = probe
                    break
                if probe >= hi:
                    break
                probe = min(start + step, hi)
                step *= 2
            if found is None:
                gaps.append((key, None, start, hi))
                continue
            low, low_key, stopped = self.backward(start, found - 1, emit, seen)
            if stopped:
                after = low_key
                if after is None and isinstance(got, tuple):
                    after = self.key(got)
                gaps.append((key, after, start, low - 1))
            todo.append((found, hi, None))
        return gaps

    def indexed(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """(rowid, the indexed columns' values) of every row an index of the table lists,
        read from each end of each index up to its damage."""
        for idx in self.conn.execute(f"PRAGMA index_list({_q(self.name)})").fetchall():
            name, partial = idx[1], idx[4] if len(idx) > 4 else 0
            if partial:
                continue
            cols = [r[2] for r in self.conn.execute(f"PRAGMA index_info({_q(name)})") if r[2]]
            if not cols:
                continue
            listed = ", ".join(_q(c) for c in cols)
            for order in ("", " DESC"):
                by = ", ".join(_q(c) + order for c in cols)
                try:
                    for row in self.conn.execute(
                        f"SELECT rowid, {listed} FROM {_q(self.name)} INDEXED BY {_q(name)}"
                        f" ORDER BY {by}"
                    ):
                        yield row[0], dict(zip(cols, row[1:], strict=True))
                except sqlite3.DatabaseError:
                    continue

    def one(self, rowid: int) -> tuple[Any, ...] | None | bool:
        """The row ``rowid``, ``None`` when there is none, ``False`` when it does not read."""
        try:
            row = self.conn.execute(self.select + " WHERE rowid = ?", (rowid,)).fetchone()
        except sqlite3.DatabaseError:
            return False
        return row


def salvage(
    conn: sqlite3.Connection,
    emit: Callable[[str, list[str], tuple[Any, ...]], None] | None = None,
) -> tuple[dict[str, int], list[Lost]]:
    """Read every row of every data table that still reads; ``emit(table, columns, values)``
    gets each one. Returns the rows read per table and what could not be read."""
    counts: dict[str, int] = {}
    lost: list[Lost] = []
    for name in data_tables(conn):
        table = _Table(conn, name)
        seen: set[int] = set()

        def put(row: tuple[Any, ...], table: _Table = table) -> None:
            if emit is not None:
                emit(table.name, table.columns, row[1:])

        gaps = table.scan(put, seen)
        named: dict[int, dict[str, Any]] = {}
        for rowid, values in table.indexed():
            if rowid not in seen:
                named.setdefault(rowid, {}).update(values)
        unread: set[int] = set()
        for rowid in sorted(named):
            row = table.one(rowid)
            if row is False:
                unread.add(rowid)
            elif isinstance(row, tuple):
                seen.add(rowid)
                put(row)
        counts[name] = len(seen)
        for rowid in sorted(unread):
            key = {c: named[rowid][c] for c in table.pk if c in named[rowid]} or named[rowid]
            lost.append(Lost(name, key=key))
        for before, after, first, last in gaps:
            if not any(first <= r <= last for r in unread):
                lost.append(Lost(name, after=before, before=after))
    return counts, lost


def rescue_file(
    source: sqlite3.Connection, target: str, make: Callable[[str], Any]
) -> tuple[dict[str, int], list[Lost]]:
    """Write every readable row of ``source`` into a new store at ``target`` (made by the
    migrations, with the page size of ``source``; the search indexes rebuilt from the rows,
    the digests of sessions whose own were lost made again from their bodies, the write
    counters set past any cache's). ``make`` opens a store file (the SQLite backend class).
    Returns what :func:`salvage` returns."""
    size = int(source.execute("PRAGMA page_size").fetchone()[0])
    made = sqlite3.connect(target)
    try:  # the page size is fixed by the first write: the journal mode's
        made.execute(f"PRAGMA page_size={size}")
        made.execute("PRAGMA journal_mode=WAL")
    finally:
        made.close()
    backend = make(target)
    try:
        have = {
            r[0]: [c[1] for c in backend.query(f"PRAGMA table_info({_q(r[0])})")]
            for r in backend.query("SELECT name FROM sqlite_master WHERE type='table'")
        }
        statements: dict[str, tuple[str, list[int]]] = {}

        def put(table: str, columns: list[str], values: tuple[Any, ...]) -> None:
            if table in DERIVED or table not in have:
                return
            if table not in statements:
                keep = [i for i, c in enumerate(columns) if c in have[table]]
                names = ", ".join(_q(columns[i]) for i in keep)
                marks = ", ".join("?" * len(keep))
                statements[table] = (
                    f"INSERT OR IGNORE INTO {_q(table)} ({names}) VALUES ({marks})",
                    keep,
                )
            sql, keep = statements[table]
            backend.execute(sql, [values[i] for i in keep])

        with backend.transaction("", write=True):
            backend.execute("DELETE FROM ck_versions")
            result = salvage(source, put)
            stamp = now_ms()  # counters only grow: every cache of the old file reads again
            backend.execute("UPDATE ck_versions SET kv = ?, history = ?", (stamp, stamp))
        backend.schema.rebuild_schema()  # with the digests of sessions whose own were lost  # the names' mirror and the trigram indexes from the rows
    finally:
        backend.close()
    return result


def digests_again(backend: Any) -> None:
    """A search digest for each saved session whose own was lost (a rescue that could not
    read it, a digest table dropped and re-created empty), made from its body."""
    for (profile,) in backend.query("SELECT DISTINCT profile FROM ck_sessions"):
        with backend.transaction(profile, write=True) as tx:
            have = set(tx.sessions.digest_ids())
            ids = [r[0] for r in tx.rows("SELECT id FROM ck_sessions WHERE profile=?")]
            for sid in ids:
                if isinstance(sid, str) and sid not in have:
                    body = tx.kv.get([body_key(sid)]).get(body_key(sid))
                    tx.sessions.items_digested([sid])  # the digest is made from the whole body
                    tx.sessions.digest_add(sid, text_digest(body))
                    have.add(sid)
