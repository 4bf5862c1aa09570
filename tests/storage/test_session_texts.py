"""``store.sessions.entries_json``: a saved session's entries as JSON texts, one read of the
body's rows, each text parsing to the entry ``get`` gives — images and long texts kept as blobs,
strings starting with NUL, evicted sessions and bodies stored whole by an older layout included."""

from __future__ import annotations

import json

import chatkeep
from factories import assistant, attachment, image_entry, png_data_url, user

URL = png_data_url(12, 9, noise=True)
BODY = [
    user("plain"),
    assistant("ΑΣ end, İstanbul"),
    user("\x00a string that starts with NUL"),
    image_entry("look", URL),
    attachment("x" * 5000, title="Doc", url="https://ex.org/d"),
    assistant("y" * 60_000),
]


def _parsed(texts: list[str] | None) -> list[object] | None:
    return None if texts is None else [json.loads(t) for t in texts]


def test_texts_parse_to_the_entries_get_gives(store: chatkeep.Store) -> None:
    """Every stored form (plain, NUL-first, image, long texts as blobs) reads back as get's
    entries; an append shows in the next read; an unknown id is None."""
    for e in BODY:
        store.history.append(e)
    sid = store.sessions.save("forms")["id"]
    assert _parsed(store.sessions.entries_json(sid)) == store.sessions.get(sid)["history"]
    store.sessions.extend(sid, [user("and now?"), image_entry("again", URL)])
    got = store.sessions.entries_json(sid)
    assert got is not None and len(got) == len(BODY) + 2
    assert _parsed(got) == store.sessions.get(sid)["history"]
    assert store.sessions.entries_json("no-such-session") is None


def test_evicted_and_emptied_sessions(store: chatkeep.Store) -> None:
    """An evicted session reads like one in the drawer; a session popped empty is []."""
    store.history.append(user("one"))
    sid = store.sessions.save("first")["id"]
    store.local.set("maxSessions", 1)
    store.sessions.save("second")
    assert [r["id"] for r in store.sessions.evicted()] == [sid]
    assert _parsed(store.sessions.entries_json(sid)) == [user("one")]
    store.sessions.pop(sid)
    assert store.sessions.entries_json(sid) == []


def test_a_body_stored_whole_reads_the_same(spec) -> None:
    """A body in the older layout (its list's text in ``ck_kv``) gives the same texts."""
    with spec.open() as s:
        for e in BODY[:4]:
            s.history.append(e)
        sid = s.sessions.save("old")["id"]
        want = s.sessions.get(sid)["history"]
    rows = spec.raw_rows(
        "SELECT value FROM ck_session_items WHERE profile=? AND sid=? ORDER BY pos",
        (spec.profile, sid),
    )
    spec.raw_rows("DELETE FROM ck_session_items WHERE profile=? AND sid=?", (spec.profile, sid))
    spec.raw_rows(
        "UPDATE ck_kv SET value=? WHERE profile=? AND key=?",
        ("[" + ",".join(v for (v,) in rows) + "]", spec.profile, f"session_{sid}"),
    )
    with spec.open() as s:
        assert _parsed(s.sessions.entries_json(sid)) == want
