"""Saved-session bodies kept as one row per entry (``ck_session_items``): appending inserts rows
and leaves the stored ones untouched, ``pop`` removes one row and leaves what a whole rewrite
would, bodies stored whole by an older layout keep reading (and move into rows), and every
reader — get, export, doctor, stats — sees the same entries."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatkeep
from factories import assistant, attachment, image_entry, png_data_url, user

URLS = [png_data_url(12, 9, noise=True), png_data_url(7, 7)]
TEXTS = st.sampled_from(["plain", "\x00nul first", "ΑΣ end", "İstanbul", "x" * 5000, "y" * 60_000])
ENTRIES = st.one_of(
    TEXTS.map(user),
    TEXTS.map(assistant),
    st.tuples(TEXTS, st.sampled_from(URLS)).map(lambda t: image_entry(t[0], t[1])),
    TEXTS.map(lambda t: attachment(t, title="Doc", url="https://ex.org/d")),
)


def _items(spec, profile: str, sid: str) -> list[tuple]:
    return spec.raw_rows(
        "SELECT pos, value FROM ck_session_items WHERE profile=? AND sid=? ORDER BY pos",
        (profile, sid),
    )


def _state(spec, profile: str, s: chatkeep.Store, sid: str) -> tuple:
    refs = spec.raw_rows(
        "SELECT hash FROM ck_blob_refs WHERE profile=? AND owner=? ORDER BY 1",
        (profile, f"k:session_{sid}"),
    )
    blobs = spec.raw_rows("SELECT hash FROM ck_blobs WHERE profile=? ORDER BY 1", (profile,))
    digest = next(r["textDigest"] for r in s.local.get("savedSessions") if r["id"] == sid)
    return (
        s.sessions.get(sid)["history"],
        digest,
        refs,
        blobs,
        [v for _p, v in _items(spec, profile, sid)],
    )


def test_append_inserts_rows_and_leaves_the_stored_ones(spec) -> None:
    """An append adds one row per entry after the last; the rows already there are unchanged."""
    with spec.open() as s:
        s.history.append(user("first"))
        sid = s.sessions.save("rows")["id"]
        before = _items(spec, spec.profile, sid)
        s.sessions.extend(sid, [assistant("second"), image_entry("third", URLS[0])])
        after = _items(spec, spec.profile, sid)
        assert after[:1] == before and [p for p, _v in after] == [0, 1, 2]
        ck = spec.raw_rows(
            "SELECT value FROM ck_kv WHERE profile=? AND key=?", (spec.profile, f"session_{sid}")
        )
        assert ck == [('"\\u0000items"',)]  # the key marks a body kept as rows
        assert URLS[0] not in after[2][1]  # the image is a blob reference, not inline
        assert [e["content"] for e in s.sessions.get(sid)["history"]][:2] == ["first", "second"]


def test_append_does_not_read_the_body_back(spec) -> None:
    """Appending never parses what the body holds: a damaged earlier row does not stop it, and
    the doctor still reports that row."""
    with spec.open() as s:
        s.history.append(user("first"))
        sid = s.sessions.save("rows")["id"]
        spec.raw_rows(
            "UPDATE ck_session_items SET value=? WHERE profile=? AND sid=? AND pos=0",
            ("{not json", spec.profile, sid),
        )
    with spec.open() as s:
        assert s.sessions.extend(sid, [assistant("still appended")]) is not None
        assert [v for _p, v in _items(spec, spec.profile, sid)][1].startswith('{"role"')
        report = s.doctor()
        assert any(p["where"] == f"k:session_{sid}" for p in report["problems"])


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(body=st.lists(ENTRIES, min_size=1, max_size=4), pops=st.integers(1, 3))
def test_pop_leaves_what_a_whole_rewrite_leaves(spec, body, pops) -> None:
    """Popping the newest entries leaves the same body, digest, references, blobs and rows as
    writing the shorter body whole; each pop returns the entry removed."""
    results = []
    for how in ("pop", "rewrite"):
        profile = f"{spec.profile}_{how}"
        with chatkeep.open(spec.url, profile=profile) as s:
            s.sessions.clear_all()
            s.history.clear()
            for e in body:
                s.history.append(e)
            sid = s.sessions.save("one")["id"]
            s.history.clear()
            if how == "pop":
                popped = [s.sessions.pop(sid) for _ in range(pops)]
                want = body[::-1][:pops] + [None] * max(0, pops - len(body))
                assert popped == want
            else:
                s.sessions.modify(sid, lambda b: b[: max(0, len(b) - pops)])
            results.append(_state(spec, profile, s, sid))
            s.sessions.clear_all()
    assert results[0] == results[1]
    assert results[0][0] == body[: max(0, len(body) - pops)]


def test_pop_unknown_or_empty_returns_none(spec) -> None:
    """Popping an unknown session, or an empty body, returns None and writes nothing."""
    with spec.open() as s:
        assert s.sessions.pop("no-such-session") is None
        s.history.append(user("x"))
        sid = s.sessions.save("one")["id"]
        assert s.sessions.pop(sid) == user("x")
        assert s.sessions.pop(sid) is None
        assert s.sessions.get(sid)["history"] == []


def test_a_body_stored_whole_reads_and_moves_into_rows(spec) -> None:
    """A body in the older layout (its list's text in ``ck_kv``) reads as before; an append
    moves it into rows, keeping every entry, its image and the references."""
    with spec.open() as s:
        s.history.append(image_entry("look", URLS[1]))
        s.history.append(assistant("a small square"))
        sid = s.sessions.save("old")["id"]
        want = s.sessions.get(sid)["history"]
    joined = "[" + ",".join(v for _p, v in _items(spec, spec.profile, sid)) + "]"
    spec.raw_rows("DELETE FROM ck_session_items WHERE profile=? AND sid=?", (spec.profile, sid))
    spec.raw_rows(
        "UPDATE ck_kv SET value=? WHERE profile=? AND key=?",
        (joined, spec.profile, f"session_{sid}"),
    )
    with spec.open() as s:
        assert s.sessions.get(sid)["history"] == want
        assert s.doctor()["healthy"]
        s.sessions.extend(sid, [user("and now?")])
        assert len(_items(spec, spec.profile, sid)) == 3
        assert s.sessions.get(sid)["history"] == [*want, user("and now?")]
        assert [r["id"] for r in s.sessions.list("a small square")] == [sid]
        assert s.doctor()["healthy"]


def test_migration_moves_bodies_stored_whole_into_rows(spec) -> None:
    """Migration 0021 moves every body stored whole into rows, in every profile."""
    with spec.open() as s:
        s.history.append(image_entry("look", URLS[0]))
        sid = s.sessions.save("old")["id"]
        want = s.sessions.get(sid)["history"]
    joined = "[" + ",".join(v for _p, v in _items(spec, spec.profile, sid)) + "]"
    spec.raw_rows("DELETE FROM ck_session_items WHERE profile=? AND sid=?", (spec.profile, sid))
    spec.raw_rows(
        "UPDATE ck_kv SET value=? WHERE profile=? AND key=?",
        (joined, spec.profile, f"session_{sid}"),
    )
    spec.raw_rows("DELETE FROM ck_migrations WHERE name=?", ("0021_session_items_fill",))
    with spec.open() as s:
        assert len(_items(spec, spec.profile, sid)) == 1
        assert s.sessions.get(sid)["history"] == want


def test_every_reader_sees_the_appended_entries(spec) -> None:
    """Export, stats, load and the evicted list see a body written by appends."""
    with spec.open() as s:
        s.history.append(user("one"))
        sid = s.sessions.save("appended")["id"]
        s.history.clear()
        s.sessions.extend(sid, [assistant("two"), image_entry("three", URLS[0])])
        body = s.sessions.get(sid)["history"]
        exported = s.export_data()
        assert exported["local"][f"session_{sid}"] == body
        assert s.sessions.load(sid) == 3
        assert s.history.read() == body
        assert s.stats()["blobs"] == 1
        s.local.set("maxSessions", 1)
        s.sessions.save("another")
        assert [r["id"] for r in s.sessions.evicted()] == [sid]
        assert s.sessions.get(sid)["history"] == body
        assert s.sessions.pop(sid) == body[-1]  # an evicted body pops too
        s.sessions.restore(sid)
        assert sid in [r["id"] for r in s.sessions.list("two")]
        json.dumps(s.export_data())  # the export still serializes


def test_delete_and_clear_remove_the_rows(spec) -> None:
    """Deleting a session, or clearing the drawer, removes its rows and unreferenced blobs."""
    with spec.open() as s:
        s.history.append(image_entry("look", URLS[0]))
        a = s.sessions.save("a")["id"]
        b = s.sessions.save("b")["id"]
        s.history.clear()
        assert s.sessions.delete(a)
        assert _items(spec, spec.profile, a) == [] and len(_items(spec, spec.profile, b)) == 1
        s.sessions.clear_all()
        assert _items(spec, spec.profile, b) == []
        assert s.stats()["blobs"] == 0


def test_appended_text_is_searchable_and_folded_once(spec) -> None:
    """Appends leave the stored digest as it was; the next search folds their text in once
    (the same digest a whole rewrite makes), and an evicted, appended-to, restored session
    does not hold its text twice."""
    with spec.open() as s:
        s.history.append(user("alpha"))
        sid = s.sessions.save("folded")["id"]
        s.history.clear()
        s.sessions.extend(sid, [assistant("Bravo"), user("charlie")])
        stored = spec.raw_rows(
            "SELECT count(*) FROM ck_session_items WHERE profile=? AND pending=1", (spec.profile,)
        )
        assert stored == [(2,)]
        assert [r["id"] for r in s.sessions.list("charlie")] == [sid]
        assert spec.raw_rows(
            "SELECT count(*) FROM ck_session_items WHERE profile=? AND pending=1", (spec.profile,)
        ) == [(0,)]
        digest = {r["id"]: r["textDigest"] for r in s.local.get("savedSessions")}[sid]
        assert digest == "alpha\nbravo\ncharlie"
        s.local.set("maxSessions", 1)
        s.history.append(user("other"))
        s.sessions.save("other")
        s.history.clear()
        s.sessions.pop(sid)
        assert s.sessions.restore(sid) is not None
        s.sessions.list("x")  # a search folds whatever is pending
        digest = {r["id"]: r["textDigest"] for r in s.local.get("savedSessions")}[sid]
        assert digest == "alpha\nbravo"
