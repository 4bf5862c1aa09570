"""Paths whose cost must not grow with the store (SPEC §1): the seen stamp touches only the rows
it changes, and the per-process caches of get_all() and the live history stay exact across
connections, processes and rolled-back writes."""

from __future__ import annotations

import sqlite3

import pytest

import chatkeep
from factories import assistant, image_entry, png_data_url, user


def _statements(s: chatkeep.Store, fn) -> list[str]:
    """The SQL statements ``fn()`` runs on an SQLite store's connection (without the ones the
    FTS5 module runs inside them: ``-- …``, whose number depends on its segment merges)."""
    seen: list[str] = []
    conn: sqlite3.Connection = s._backend._conn
    conn.set_trace_callback(seen.append)
    try:
        fn()
    finally:
        conn.set_trace_callback(None)
    return [q for q in seen if not q.startswith("--")]


def _filled(s: chatkeep.Store, n: int, url: str) -> None:
    s.local.set({"maxHistoryEntries": 10_000, "maxHistoryChars": 10_000_000})
    s.history.mutate(lambda _: [user(f"m{i}") if i % 2 == 0 else assistant("ok") for i in range(n)])
    s.history.append(image_entry("look", url))


def test_seen_stamp_runs_the_same_statements_at_any_length(tmp_path) -> None:
    """mark_images_seen() runs the same statements at 10 and 400 entries and rewrites one row."""
    url = png_data_url(40, 30, noise=True)
    runs = []
    for n in (10, 400):
        with chatkeep.open(str(tmp_path / f"s{n}.db")) as s:
            _filled(s, n, url)
            sql = _statements(s, s.mark_images_seen)
            assert s.history.read()[-1]["imagesSeen"] is True
            assert s.mark_images_seen() == 0
        runs.append(sql)
    assert len(runs[0]) == len(runs[1])
    assert sum(q.startswith("UPDATE ck_history SET chars") for q in runs[1]) == 1


def test_rows_flagged_before_the_flag_are_cleared_once(spec) -> None:
    """Rows stored before the unseen flag existed (flag 1) are read once; only images get stamped."""
    with spec.open() as s:
        s.history.append(user("text"))
        s.history.append(image_entry("look", png_data_url(30, 20, noise=True)))
        s.history.append(assistant("ok"))
        spec.raw_rows("UPDATE ck_history SET unseen = 1 WHERE profile=?", (spec.profile,))
        assert s.mark_images_seen() == 1
        flags = spec.raw_rows(
            "SELECT unseen FROM ck_history WHERE profile=? ORDER BY pos", (spec.profile,)
        )
        assert [f[0] for f in flags] == [0, 0, 0]
        live = s.history.read()
        assert [e.get("imagesSeen") for e in live] == [None, True, None]


def test_writes_from_another_connection_reach_cached_reads(spec) -> None:
    """get_all() and history.read() see a write made through another connection right away."""
    with spec.open() as a, spec.open() as b:
        a.history.append(user("one"))
        assert a.get_all()["systemPrompt"] == chatkeep.DEFAULTS["systemPrompt"]
        assert [e["content"] for e in a.history.read()] == ["one"]
        b.local.set("systemPrompt", "be brief")
        b.history.append(assistant("two"))
        assert a.get_all()["systemPrompt"] == "be brief"
        assert [e["content"] for e in a.history.read()] == ["one", "two"]
        b.local.remove("systemPrompt")
        b.history.clear()
        assert a.get_all()["systemPrompt"] == chatkeep.DEFAULTS["systemPrompt"]
        assert a.history.read() == []


def test_cached_reads_return_fresh_copies(store: chatkeep.Store) -> None:
    """Mutating what get_all() or history.read() returned never changes the next read."""
    store.local.set("providers", {"p": {"style": "chat", "model": "m"}})
    store.history.append(user("hi"))
    for _ in range(2):
        got = store.get_all()
        got["providers"]["p"]["model"] = "changed"
        live = store.history.read()
        live[0]["content"] = "changed"
        live.append(user("extra"))
    assert store.get_all()["providers"]["p"]["model"] == "m"
    assert store.history.read() == [user("hi")]


def test_rolled_back_write_leaves_reads_exact(store: chatkeep.Store) -> None:
    """A write transaction that fails leaves get_all() and read() at the committed state."""
    store.history.append(user("kept"))
    assert store.history.read() == [user("kept")]
    with pytest.raises(RuntimeError), store.history.locked():
        store.history.append(user("rolled back"))
        store.local.set("systemPrompt", "rolled back")
        assert store.get_all()["systemPrompt"] == "rolled back"
        assert len(store.history.read()) == 2
        raise RuntimeError("boom")
    assert store.history.read() == [user("kept")]
    assert store.get_all()["systemPrompt"] == chatkeep.DEFAULTS["systemPrompt"]
    store.history.append(user("next"))
    assert store.history.read() == [user("kept"), user("next")]


def test_tail_returns_newest_entries_in_order(store: chatkeep.Store) -> None:
    """history.tail(n) gives the newest n live entries, oldest first."""
    for i in range(5):
        store.history.append(user(f"m{i}"))
    assert [e["content"] for e in store.history.tail(2)] == ["m3", "m4"]
    assert len(store.history.tail(50)) == 5


def test_session_save_runs_the_same_statements_in_any_drawer(tmp_path) -> None:
    """Saving, renaming and deleting a session run the same statements with 2 or 60 saved."""
    runs = []
    for n in (2, 60):
        with chatkeep.open(str(tmp_path / f"d{n}.db")) as s:
            for i in range(n):
                s.history.append(user(f"topic {i}"))
                s.sessions.new()
            s.history.append(user("the one"))
            sql = _statements(s, lambda s=s: s.sessions.save("mine"))
            sid = s.local.get("activeSessionId")
            sql += _statements(s, lambda s=s, sid=sid: s.sessions.rename(sid, "renamed"))
            sql += _statements(s, lambda s=s, sid=sid: s.sessions.delete(sid))
            assert len(s.sessions.list()) == n
        runs.append(sql)
    assert len(runs[0]) == len(runs[1])


def test_adding_sessions_runs_the_same_statements_in_any_drawer(tmp_path) -> None:
    """add_many (an import, a framework session's first turn) runs the same statements with 2
    or 60 saved, and so does appending to a session: neither reads nor rewrites the others."""
    runs = []
    for n in (2, 60):
        with chatkeep.open(str(tmp_path / f"a{n}.db")) as s:
            s.sessions.add_many(
                ({"id": f"old{i}", "name": f"old {i}"}, [user(f"topic {i}")]) for i in range(n)
            )
            batch = [
                ({"id": f"new{i}", "name": ""}, [user(f"new {i}"), assistant("ok")])
                for i in range(3)
            ]
            sql = _statements(s, lambda s=s, batch=batch: s.sessions.add_many(batch))
            sql += _statements(s, lambda s=s: s.sessions.extend("new1", [user("more")]))
            assert [r["id"] for r in s.sessions.list(limit=3)] == ["new2", "new1", "new0"]
            assert len(s.sessions.get("new1")["history"]) == 3
            assert s.sessions.add_many(batch) == []  # already saved: skipped, nothing written
        runs.append(sql)
    assert len(runs[0]) == len(runs[1])
    assert not any(q.startswith("DELETE FROM ck_sessions") for q in runs[1])


def test_index_stored_before_rows_is_converted(spec) -> None:
    """A store whose savedSessions list sits in one ck_kv row (before index rows) reads and
    writes the same after the migration converts it."""
    with spec.open() as s:
        s.history.append(user("alpha question"))
        a = s.sessions.save("A")
        s.history.clear()
        s.history.append(user("beta question"))
        b = s.sessions.save("B")
        listed = s.sessions.list()
        joined = spec.raw_rows(
            "SELECT value FROM ck_sessions WHERE profile=? ORDER BY ord", (spec.profile,)
        )
    old = "[" + ",".join(r[0] for r in joined) + "]"
    spec.raw_rows("DELETE FROM ck_sessions WHERE profile=?", (spec.profile,))
    spec.raw_rows(
        "UPDATE ck_kv SET value=? WHERE profile=? AND key='savedSessions'", (old, spec.profile)
    )
    spec.raw_rows("DELETE FROM ck_migrations WHERE name='0006_session_index_rows'")
    with spec.open() as s:
        assert s.sessions.list() == listed
        assert [r["id"] for r in s.sessions.list("alpha")] == [a["id"]]
        assert s.sessions.get(b["id"])["history"] == [user("beta question")]
        assert s.sessions.rename(a["id"], "A2")
        assert [r["name"] for r in s.sessions.list()] == ["B", "A2"]


def test_seen_stamp_on_stored_rows_equals_the_rule(spec) -> None:
    """stamp_seen() (stored rows, pixels untouched) leaves exactly what the stamp rule applied
    to the decoded history leaves: same entries read back, same rows and blobs stored."""
    from chatkeep.rules.images import stamp_images_seen

    url = png_data_url(30, 20, noise=True)
    entries = [
        user("a"),
        image_entry("look", url),
        assistant("seen it"),
        image_entry("again", url, imagesSeen=True),
        image_entry("\x00nul text", png_data_url(8, 8)),
        user("b"),
    ]
    dumps, reads, counts = [], [], []
    for k, how in enumerate(("rule", "stored")):
        with chatkeep.open(spec.url, profile=f"{spec.profile}_{k}") as s:
            for e in entries:
                s.history.append(e)
            if how == "rule":
                before = s.history.read()
                s.history.mutate(stamp_images_seen)
                counts.append(sum(a != b for a, b in zip(before, s.history.read(), strict=True)))
            else:
                counts.append(s.history.stamp_seen())
            reads.append(s.history.read())
            counts.append(s.history.stamp_seen())  # nothing left to stamp
            dumps.append(
                {
                    t: spec.raw_rows(
                        f"SELECT * FROM {t} WHERE profile=? ORDER BY 2", (f"{spec.profile}_{k}",)
                    )
                    for t in ("ck_history", "ck_blobs", "ck_blob_refs")
                }
            )
    assert counts == [2, 0, 2, 0]
    assert reads[0] == reads[1] and all(
        e.get("imagesSeen") for e in reads[0] if "content" in e and isinstance(e["content"], list)
    )
    strip = lambda d: {t: [r[1:] for r in rows] for t, rows in d.items()}  # noqa: E731
    assert strip(dumps[0]) == strip(dumps[1])
