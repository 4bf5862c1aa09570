"""``store.sessions.extend`` appends to a saved body without rewriting what it holds, and
leaves exactly what rewriting the whole body would: same body, same digest, same stored rows
and blob references (SPEC §4.4 ``append``; the Agents SDK session writes through it)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatkeep
from chatkeep import InvalidEntry, InvalidValue
from factories import assistant, attachment, image_entry, png_data_url, user

URLS = [png_data_url(12, 9, noise=True), png_data_url(7, 7)]
TEXTS = st.sampled_from(["plain", "\x00nul first", "ΑΣ end", "İstanbul", "x" * 5000, "y" * 60_000])
ENTRIES = st.one_of(
    TEXTS.map(user),
    TEXTS.map(assistant),
    st.tuples(TEXTS, st.sampled_from(URLS)).map(lambda t: image_entry(t[0], t[1])),
    TEXTS.map(lambda t: attachment(t, title="Doc", url="https://ex.org/d")),
)


def _stored(spec, profile: str) -> dict[str, list]:
    rows = {}
    for table, cols in (
        ("ck_kv", "key, value"),
        ("ck_blob_refs", "owner, hash"),
        ("ck_blobs", "hash, prefix"),
    ):
        rows[table] = spec.raw_rows(
            f"SELECT {cols} FROM {table} WHERE profile=? ORDER BY 1, 2", (profile,)
        )
    return rows


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    first=st.lists(ENTRIES, min_size=1, max_size=3), more=st.lists(ENTRIES, min_size=0, max_size=3)
)
def test_extend_leaves_what_a_whole_rewrite_leaves(spec, first, more) -> None:
    results = []
    for how in ("extend", "rewrite"):
        profile = f"{spec.profile}_{how}"
        with chatkeep.open(spec.url, profile=profile) as s:
            s.sessions.clear_all()
            s.history.clear()
            for e in first:
                s.history.append(e)
            sid = s.sessions.save("one")["id"]
            if how == "extend":
                row = s.sessions.extend(sid, more)
            else:
                row = s.sessions.modify(sid, lambda body: [*body, *more] if more else None)
                row = row or s.sessions.row(sid)  # None: nothing to change
            assert row is not None and row["id"] == sid
            body = s.sessions.get(sid)["history"]
            index = s.local.get("savedSessions")
            kv = _stored(spec, profile)
            refs = sorted(h for o, h in kv["ck_blob_refs"] if o == f"k:session_{sid}")
            blobs = sorted(map(tuple, kv["ck_blobs"]))
            text = [v for k, v in kv["ck_kv"] if k == f"session_{sid}"]
            results.append((body, [r["textDigest"] for r in index], refs, blobs, text))
            s.sessions.clear_all()
            s.history.clear()
    assert results[0] == results[1]
    assert results[0][0] == [*first, *more]


def test_extend_unknown_or_bad_input_changes_nothing(spec) -> None:
    with spec.open() as s:
        s.history.append(user("hello"))
        sid = s.sessions.save("one")["id"]
        before = s.sessions.get(sid)
        assert s.sessions.extend("nope" * 2, [user("x")]) is None
        with pytest.raises(InvalidEntry):
            s.sessions.extend(sid, [user("ok"), {"role": "wizard", "content": "x"}])
        with pytest.raises((InvalidValue, InvalidEntry)):
            s.sessions.extend(sid, "not a list")  # type: ignore[arg-type]
        assert s.sessions.get(sid) == before


def test_extend_finds_new_text_and_keeps_the_digest_cap(spec) -> None:
    with spec.open() as s:
        s.history.append(user("a" * 99_990))
        sid = s.sessions.save("long")["id"]
        s.sessions.extend(sid, [assistant("zebra crossing"), user("quokka")])
        digest = next(r["textDigest"] for r in s.local.get("savedSessions") if r["id"] == sid)
        assert (
            len(digest) == chatkeep.TEXT_DIGEST_CAP
            if hasattr(chatkeep, "TEXT_DIGEST_CAP")
            else 100_000
        )
        assert digest.endswith("\nzebra cro")
        assert [r["id"] for r in s.sessions.list("zebr")] == [sid]
        assert s.sessions.list("quokka") == []  # past the cap (SPEC §4.3)


def test_text_with_nul_saves_and_is_found(spec) -> None:
    """A NUL inside a message used to make the save fail on PostgreSQL (its text cannot hold
    one): the digest leaves NULs out, the body keeps them."""
    with spec.open() as s:
        s.history.append(user("before\x00after the nul"))
        sid = s.sessions.save("n")["id"]
        assert s.sessions.get(sid)["history"][0]["content"] == "before\x00after the nul"
        assert [r["id"] for r in s.sessions.list("beforeafter")] == [sid]
        s.sessions.extend(sid, [assistant("more\x00text")])
        assert [r["id"] for r in s.sessions.list("moretext")] == [sid]
