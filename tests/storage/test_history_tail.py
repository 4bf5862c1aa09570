"""The end of a long live history without reading the rest (SPEC §11): ``history.tail_window``
gives exact positions, and reads only its rows once this process has seen every row readable;
the image budget pass (§5.4) does not read again a history it found within budget."""

from __future__ import annotations

import sqlite3

import chatkeep
from factories import assistant, image_entry, png_data_url, user


def _statements(s: chatkeep.Store, fn) -> list[str]:
    """The SQL statements ``fn()`` runs on an SQLite store's connection."""
    seen: list[str] = []
    conn: sqlite3.Connection = s._backend._conn
    conn.set_trace_callback(seen.append)
    try:
        fn()
    finally:
        conn.set_trace_callback(None)
    return [q for q in seen if not q.startswith("--")]


def _fill(s: chatkeep.Store, n: int) -> None:
    s.local.set({"maxHistoryEntries": 10_000, "maxHistoryChars": 10_000_000})
    s.history.mutate(lambda _: [user(f"q{i}") if i % 2 == 0 else assistant("a") for i in range(n)])


def _full_reads(queries: list[str]) -> int:
    """Statements that fetch the text of every live row (the joined read, the row-by-row load)."""
    return sum(
        q.lstrip().upper().startswith("SELECT")
        and "FROM ck_history " in q
        and ("group_concat(value" in q or "pos, chars, value" in q)
        and "LIMIT" not in q
        and "unseen" not in q
        for q in queries
    )


def test_tail_window_positions_match_the_whole_read(store: chatkeep.Store) -> None:
    """Length, start and entries agree with ``read()``, before and after this process has read
    the whole history, and for ``n`` larger than the history or zero."""
    _fill(store, 9)
    for _ in range(2):  # the first call reads everything, the second only the tail
        window = store.history.tail_window(4)
        full = store.history.read()
        assert (window.length, window.start) == (9, 5)
        assert window.entries == full[5:]
        assert window.version == store.history.write_count()
    assert store.history.tail_window(50).entries == full
    assert store.history.tail_window(0).entries == [] and store.history.tail_window(0).start == 9
    store.history.append(user("new"))
    window = store.history.tail_window(2)
    assert [e["content"] for e in window.entries] == ["q8", "new"] and window.length == 10


def test_tail_window_reads_only_its_rows_once_the_history_is_known(tmp_path) -> None:
    """On SQLite: after one whole read at this write counter, a tail window runs no statement
    that fetches every row; after a write (here from another connection) it reads once more."""
    path = str(tmp_path / "t.db")
    with chatkeep.open(path) as s:
        _fill(s, 400)
        s.history.read()
        queries = _statements(s, lambda: s.history.tail_window(60))
        assert _full_reads(queries) == 0
        assert any("LIMIT" in q for q in queries)
        with chatkeep.open(path) as other:
            other.history.append(user("from elsewhere"))
        queries = _statements(s, lambda: s.history.tail_window(60))
        assert _full_reads(queries) == 1
        assert s.history.tail_window(1).entries == [user("from elsewhere")]


def test_tail_window_positions_skip_unreadable_rows(store: chatkeep.Store, spec) -> None:
    """A damaged row is skipped by ``read()``; the tail window's positions still match it (it
    never takes the short path while a row is unreadable)."""
    _fill(store, 6)
    spec.raw_rows(
        "UPDATE ck_history SET value=? WHERE profile=? AND pos=(SELECT min(pos) FROM ck_history "
        "WHERE profile=?)",
        ("{broken", spec.profile, spec.profile),
    )
    with spec.open() as s:
        full = s.history.read()
        for _ in range(2):
            window = s.history.tail_window(3)
            assert (window.length, window.start) == (5, 2)
            assert window.entries == full[2:]


def test_budget_pass_is_not_repeated_on_an_unchanged_history(tmp_path) -> None:
    """A history found within budget is not read again by the next pass; a change from another
    connection is seen, and over budget the oldest image is still thumbnailed."""
    path = str(tmp_path / "b.db")
    big = [png_data_url(300, 200, noise=True) for _ in range(3)]
    budget = len(big[0]) * 2 + 100
    with chatkeep.open(path) as s:
        _fill(s, 200)
        s.history.append(image_entry("one", big[0]))
        s.history.append(image_entry("two", big[1]))
        assert s.bound_unseen_image_bytes(budget) == 0
        queries = _statements(s, lambda: s.bound_unseen_image_bytes(budget))
        assert _full_reads(queries) == 0
        with chatkeep.open(path) as other:
            other.history.append(image_entry("three", big[2]))
        assert s.bound_unseen_image_bytes(budget) >= 1
        first = s.history.read()[200]
        assert first["content"][1]["image_url"]["url"] != big[0]  # a thumbnail now
        assert s.bound_unseen_image_bytes(budget * 10) == 0  # another budget: checked again
