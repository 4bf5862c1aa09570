"""Reading the message-search index (SPEC §16): the candidate chunks a text query matches,
newest first, and what a hit needs beside its chunk (the entry's position, its session's
name and place).

Candidates are the chunks that hold every term. Terms of three characters or more are
answered by the trigram index (FTS5 phrase queries on SQLite, ``ILIKE`` through ``pg_trgm``
on PostgreSQL); a shorter term is checked on the rows the others select (and a query of short
terms only scans, newest first, stopping at the window). Up to ``window`` of them are read,
newest first, for :mod:`.search` to rank.
"""

from __future__ import annotations

import json
from typing import Any

from .search_tail import tail_rows
from .search_text import holds_all
from .sql import Tx

#: Columns of a candidate row.
COLUMNS = "s.rid, s.place, s.owner, s.pos, s.part, s.role, s.created_at, s.body"
Candidate = tuple[int, str, str, int, int, str, int | None, str]


def _like(term: str) -> str:
    return "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def candidates(tx: Tx, found: list[str], places: list[str], window: int) -> list[Candidate]:
    """Up to ``window`` chunks of ``places`` holding every term, newest first."""
    b = tx._b
    marks = ",".join("?" * len(places))
    long = [t for t in found if len(t) >= 3]
    short = [t for t in found if len(t) < 3]
    if b.dialect == "postgresql":
        return _server_candidates(tx, found, places, window)
    if b.search_fts and long:
        tail: list[Any] = []
        if b.search_tail:  # rows FTS5 does not hold yet: read directly, newest first
            tail = [r for r in tail_rows(tx, COLUMNS, places) if holds_all(r[7], found)]
            tail = tail[:window]
            if len(tail) >= window:
                return [_candidate(r) for r in tail]
        extra = "".join(" AND s.body LIKE ? ESCAPE '\\'" for _ in short)
        sql = (
            f"SELECT {COLUMNS} FROM ck_search_fts f CROSS JOIN ck_search s ON s.rid = f.rowid"
            f" WHERE ck_search_fts MATCH ? AND s.profile=? AND s.place IN ({marks}){extra}"
            " ORDER BY f.rowid DESC LIMIT ?"
        )
        match = " AND ".join(_phrase(t) for t in long)
        params = (match, tx.profile, *places, *map(_like, short), window - len(tail))
        return [_candidate(r) for r in tail] + [_candidate(r) for r in b.query(sql, params)]
    else:  # short terms only, or no trigram index: a scan, newest first
        cond = " AND ".join("instr(lower(s.body), ?) > 0" for _ in found)
        sql = (
            f"SELECT {COLUMNS} FROM ck_search s WHERE s.profile=? AND s.place IN ({marks})"
            f" AND {cond} ORDER BY s.rid DESC LIMIT ?"
        )
        params = (tx.profile, *places, *(t.lower() for t in found), window)
    return [_candidate(r) for r in b.query(sql, params)]


#: The newest rows a PostgreSQL search reads first, to see how densely its terms are held.
PROBE_ROWS = 1000
#: Hits among them from which the rest is read on newest first; with fewer, the trigram index
#: answers (at 1,000,000 rows either way costs 100 ms at most: 40,000 rows read on, or the
#: index's 8,000 matches read and sorted).
DENSE_HITS = 5
#: Planner settings of each way to read (``SET LOCAL``, reset after the statement).
_WALK = ("enable_bitmapscan",)
_INDEX = ("enable_indexscan", "enable_seqscan")


def _server_candidates(tx: Tx, found: list[str], places: list[str], window: int) -> list[Candidate]:
    """:func:`candidates` on PostgreSQL. The server's planner chooses between reading the
    profile's rows newest first (cheap when the terms are common) and the trigram index (cheap
    when they are rare) from statistics of the whole shared table, a sample: the same search
    for a word in one row of a 1,000,000-row profile took 2 ms in one run and 2.6 s in the
    next (a plan reading every row of the profile). So the newest :data:`PROBE_ROWS` rows are
    read first, newest first; they fill the window, or hold the profile, or say which way the
    rest is read: on newest first when :data:`DENSE_HITS` of them match, else through the
    index; each way is fixed with the planner's settings, not left to its estimate."""
    b = tx._b
    b.plan_each_statement()  # a plan for these very terms and bounds
    where = f"s.profile=? AND s.place IN ({tx.marks(len(places))})"
    keys = (tx.profile, *places)
    low, n = b.query(
        f"SELECT min(rid), count(*) FROM (SELECT s.rid FROM ck_search s WHERE {where}"
        f" ORDER BY s.rid DESC LIMIT {PROBE_ROWS}) t",
        keys,
    )[0]
    if not n:
        return []
    cond = "".join(" AND s.body ILIKE ?" for _ in found)
    sql = (  # {} is the bound on rid: the newest rows (>=) or the rest (<)
        f"SELECT {COLUMNS} FROM ck_search s WHERE {where}{cond}"
        " AND s.rid {} ? ORDER BY s.rid DESC LIMIT ?"
    )
    likes = tuple(map(_like, found))
    hits = _planned(tx, _WALK, sql.format(">="), (*keys, *likes, low, window))
    if len(hits) >= window or n < PROBE_ROWS:
        return hits
    way = _WALK if len(hits) >= DENSE_HITS else _INDEX
    return hits + _planned(tx, way, sql.format("<"), (*keys, *likes, low, window - len(hits)))


def _planned(tx: Tx, off: tuple[str, ...], sql: str, params: tuple[Any, ...]) -> list[Candidate]:
    """The candidates of ``sql`` planned with the planner settings ``off`` switched off."""
    b = tx._b
    for name in off:
        b.execute(f"SET LOCAL {name} = off")
    got = [_candidate(r) for r in b.query(sql, params)]
    for name in off:  # (a failed statement ends the transaction, and its settings with it)
        b.execute(f"SET LOCAL {name} TO DEFAULT")
    return got


def _candidate(r: Any) -> Candidate:
    return (int(r[0]), r[1], r[2], int(r[3]), int(r[4]), r[5], r[6], r[7])


def rows_by_rid(tx: Tx, rids: list[int]) -> list[Candidate]:
    """The index rows of ``rids`` (a semantic search's chunks) that are still there, looked
    up by ``rid`` alone (the profile is checked on the rows found: a condition on it could
    make the database read the profile's rows instead)."""
    out: list[Candidate] = []
    for chunk in tx.chunks(rids):
        out += [
            _candidate(r[1:])
            for r in tx._b.query(
                f"SELECT s.profile, {COLUMNS} FROM ck_search s"
                f" WHERE s.rid IN ({tx.marks(len(chunk))})",
                chunk,
            )
            if r[0] == tx.profile
        ]
    return out


def positions(tx: Tx, place: str, stored: list[int]) -> dict[int, int]:
    """The list index of each stored position: a live row's ``pos`` → its index in the live
    history, an archive ``seq`` → its index in the archive; a body index is its own."""
    if place not in ("h", "a"):
        return {p: p for p in stored}
    table, col = ("ck_history", "pos") if place == "h" else ("ck_archive", "seq")
    out: dict[int, int] = {}
    if place == "a":
        lo, hi = tx.rows(f"SELECT min({col}), max({col}) FROM {table} WHERE profile=?")[0]
        if (
            lo is not None and int(hi) - int(lo) + 1 == tx.history.archive_count()
        ):  # no gap: arithmetic
            return {p: p - int(lo) for p in stored}
    for p in stored:
        out[p] = int(
            tx.rows(f"SELECT count(*) FROM {table} WHERE profile=? AND {col} < ?", (p,))[0][0]
        )
    return out


def session_names(tx: Tx, ids: list[str]) -> dict[str, str]:
    """The names of saved (drawer) and evicted sessions among ``ids``."""
    out: dict[str, str] = {}
    for chunk in tx.chunks(ids):
        for sid, value in tx.rows(
            f"SELECT id, value FROM ck_sessions WHERE profile=? AND id IN ({tx.marks(len(chunk))})",
            chunk,
        ):
            out[sid] = _name(value)
        keys = ["evicted_" + i for i in chunk]
        for key, value in tx.rows(
            f"SELECT key, value FROM ck_kv WHERE profile=? AND key IN ({tx.marks(len(keys))})",
            keys,
        ):
            out.setdefault(key[len("evicted_") :], _name(value))
    return out


def _name(stored: str) -> str:
    try:
        value = json.loads(stored)
    except ValueError:
        return ""
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) and not name.startswith("\x00") else ""
