"""SQLite's message-search index written behind the rows (migration 0018, SPEC §16).

FTS5 pays for each write transaction that changes it (it writes a new segment then, and
merges), about 0.1 ms whatever the transaction holds: indexed by trigger, one appended entry
cost four times an append without the index. From 0018 on, ``ck_search`` rows are written
alone and FTS5 holds exactly the rows up to ``ck_search_mark.upto``; the rows above it (the
*tail*: they only grow in ``rid``) go into FTS5 together, in one ``INSERT … SELECT`` in rowid
order, once there are :data:`FLUSH_ROWS` of them (at the end of the write transaction that
adds them; an import's rows, at its end), so an append costs about what the row costs and an
import writes its index as one segment.

A search reads the tail directly (at most a few hundred rows, newest first, checked in
Python) before asking FTS5 for the rest, so nothing written is ever missing from a search,
even on a store opened read-only. Deleting or rewriting a row updates FTS5 only when the row
is in it (the triggers compare with ``upto``), since FTS5 must be told exactly what it holds.
"""

from __future__ import annotations

from typing import Any

#: Tail rows that make the next write transaction put them into FTS5.
FLUSH_ROWS = 128

_DELETE = (
    " INSERT INTO ck_search_fts (ck_search_fts, rowid, body) VALUES ('delete', old.rid, old.body);"
)
_IN_FTS = " WHEN old.rid <= (SELECT upto FROM ck_search_mark)"
#: What 0018 makes (beside dropping the triggers of 0015): the mark, and triggers that tell
#: FTS5 only of the rows it holds.
STATEMENTS = (
    "CREATE TABLE IF NOT EXISTS ck_search_mark (one INTEGER PRIMARY KEY CHECK (one = 1),"
    " upto INTEGER NOT NULL)",
    f"CREATE TRIGGER IF NOT EXISTS ck_search_tail_ad AFTER DELETE ON ck_search{_IN_FTS}"
    f" BEGIN{_DELETE} END",
    f"CREATE TRIGGER IF NOT EXISTS ck_search_tail_au AFTER UPDATE OF body ON ck_search{_IN_FTS}"
    f" BEGIN{_DELETE} INSERT INTO ck_search_fts (rowid, body) VALUES (new.rid, new.body); END",
)
#: The triggers of 0015 that 0018 replaces.
OLD_TRIGGERS = ("ck_search_ai", "ck_search_ad", "ck_search_au")


def write_behind(backend: Any) -> bool:
    """Migration 0018 (``False`` while there is no trigram index: tried again later)."""
    have = backend.query("SELECT 1 FROM sqlite_master WHERE name = 'ck_search_fts'")
    if not have:  # no trigram index (0015 left unrecorded): tried again on a later open
        return False
    for trigger in OLD_TRIGGERS:
        backend.execute(f"DROP TRIGGER IF EXISTS {trigger}")
    for stmt in STATEMENTS:
        backend.execute(stmt)
    set_mark(backend)  # the triggers kept FTS5 complete up to now
    return True


#: Bytes of index FTS5 keeps in memory, within a write transaction, before it writes them out
#: as a segment (FTS5's ``hashsize``; its own default is 1 MB). An import puts its whole tail
#: in at once: at 1 MB FTS5 wrote and merged dozens of segments on the way (10,000 ChatGPT
#: conversations: 0.6 s of CPU for the index; 0.38 s at 8 MB, and no less beyond).
HASH_BYTES = 8 * 1024 * 1024


def hash_size(backend: Any) -> bool:
    """Migration 0023 (``False`` while there is no trigram index: tried again later)."""
    have = backend.query("SELECT 1 FROM sqlite_master WHERE name = 'ck_search_fts'")
    if not have:  # no trigram index (0015 left unrecorded): tried again on a later open
        return False
    backend.execute(
        f"INSERT INTO ck_search_fts (ck_search_fts, rank) VALUES ('hashsize', {HASH_BYTES})"
    )
    return True


def set_mark(backend: Any) -> None:
    """FTS5 holds every row there is (after 0018, or a ``rebuild``)."""
    backend.execute(
        "INSERT INTO ck_search_mark (one, upto) SELECT 1, coalesce(max(rid), 0) FROM ck_search"
        " WHERE 1 ON CONFLICT (one) DO UPDATE SET upto = excluded.upto"
    )


def flush(backend: Any, *, least: int = FLUSH_ROWS) -> int:
    """Inside a write transaction: put the tail into FTS5 when it holds ``least`` rows or
    more (counted by ``rid``: deleted tail rows count until then); returns the rows put."""
    found = backend.query(
        "SELECT (SELECT upto FROM ck_search_mark WHERE one = 1), max(rid) FROM ck_search"
    )
    upto, top = found[0]
    if top is None:
        return 0
    if upto is None:  # the mark row was lost: FTS5 made again from every row
        backend.execute("INSERT INTO ck_search_fts (ck_search_fts) VALUES ('rebuild')")
        set_mark(backend)
        return int(top)
    upto, top = int(upto), int(top)
    if top - upto < max(1, least):
        return 0
    backend.execute(
        "INSERT INTO ck_search_fts (rowid, body) SELECT rid, body FROM ck_search"
        " WHERE rid > ? AND rid <= ? ORDER BY rid",
        (upto, top),
    )
    backend.execute("UPDATE ck_search_mark SET upto = ? WHERE one = 1", (top,))
    return top - upto


def tail_rows(tx: Any, columns: str, places: list[str]) -> list[tuple[Any, ...]]:
    """The profile's rows of ``places`` that FTS5 does not hold yet, newest first (read by
    rowid from the mark: ``+s.profile`` keeps SQLite off the profile's whole index)."""
    found = tx._b.query("SELECT upto FROM ck_search_mark WHERE one = 1")
    upto = int(found[0][0]) if found else 0
    marks = ",".join("?" * len(places))
    return tx._b.query(  # type: ignore[no-any-return]
        f"SELECT {columns} FROM ck_search s WHERE s.rid > ? AND +s.profile=?"
        f" AND +s.place IN ({marks}) ORDER BY s.rid DESC",
        (upto, tx.profile, *places),
    )
