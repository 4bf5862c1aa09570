"""SQLite's trigram rows in the drawer's order (migration 0010): whatever is written — pins,
unpins, renames, updates, deletes, whole-index writes, createdAt ties within a second, values
outside the range buckets tell apart, several profiles in one file — every name row and digest
row stays in its session's bucket, and a page read through the ordered index is exactly the
slice of the whole listing that SPEC §4.3 defines."""

from __future__ import annotations

import json
import sqlite3
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import chatkeep
from factories import assistant, user

SPAN, LAST_SECOND = 2**28, 2**33 - 1
VOCAB = ["quokka", "wombat", "numbat", "echidna", "bilby"]
CREATED = [
    0,
    -5_000,
    999,
    1_000,
    1_001,
    1_700_000_000_000,
    1_700_000_000_400,
    1_700_000_000_999,
    1_700_000_001_000,
    2**40,
    10**15 - 1,
    1_700_000_000_250.75,
]


def _bucket(pinned: int, created_ms: int) -> int:
    """The first rowid of a session's bucket, computed here independently of the SQL."""
    second = max(0, min(int(created_ms / 1000), LAST_SECOND))  # SQLite truncates toward 0
    return (0 if pinned else 2**61) + (LAST_SECOND - second) * SPAN


def _misplaced(path: str) -> list[tuple[str, int]]:
    """Name and digest rows whose rowid lies outside their session's bucket."""
    conn = sqlite3.connect(path)
    try:
        names = conn.execute(
            "SELECT n.rid, s.pinned, s.created_at, s.id FROM ck_session_name n"
            " JOIN ck_sessions s ON s.profile = n.profile AND s.ord = n.ord"
        ).fetchall()
        texts = conn.execute(
            "SELECT t.rid, s.pinned, s.created_at, s.id FROM ck_session_text t"
            " JOIN ck_sessions s ON s.profile = t.profile AND s.id = t.id"
        ).fetchall()
    finally:
        conn.close()
    return [
        (f"{kind} {sid}", rid)
        for kind, rows in (("name", names), ("digest", texts))
        for rid, pinned, created, sid in rows
        if rid // SPAN != _bucket(pinned, created) // SPAN
    ]


session = st.fixed_dictionaries(
    {
        "created": st.sampled_from(CREATED),
        "pinned": st.booleans(),
        "words": st.lists(st.sampled_from(VOCAB), max_size=3),
        "name": st.sampled_from(["", "Quokka trip", "plain"]),
    }
)
change = st.tuples(
    st.sampled_from(["pin", "unpin", "rename", "update", "delete", "rewrite"]),
    st.integers(0, 40),
)


@settings(max_examples=40, deadline=None)
@given(
    sessions=st.lists(session, min_size=1, max_size=40),
    changes=st.lists(change, max_size=8),
    needle=st.sampled_from(["quokka", "wombat", "bat", "echidna", "no such"]),
    limit=st.integers(1, 6),
    offset=st.integers(0, 8),
)
def test_rows_stay_in_their_buckets_and_pages_are_slices(
    sessions: list[dict], changes: list[tuple[str, int]], needle: str, limit: int, offset: int
) -> None:
    with tempfile.TemporaryDirectory() as root:
        path = str(Path(root) / "drawer.db")
        with chatkeep.open(path, profile="other") as other:  # another profile, same file
            other.sessions.add_many(
                [({"id": "o1", "name": "quokka wombat", "createdAt": 5}, [user("quokka")])]
            )
        with chatkeep.open(path) as s:
            rows = []
            for i, spec in enumerate(sessions):
                body = [user(" ".join(["talk", *spec["words"]])), assistant(f"reply {i}")]
                row = {"id": f"s{i:03d}", "createdAt": spec["created"], "pinned": spec["pinned"]}
                if spec["name"]:
                    row["name"] = spec["name"]
                rows.append((row, body))
            s.sessions.add_many(rows)
            ids = [f"s{i:03d}" for i in range(len(sessions))]
            for what, k in changes:
                sid = ids[k % len(ids)]
                if s.sessions.row(sid) is None:
                    continue
                if what == "pin":
                    s.sessions.pin(sid)
                elif what == "unpin":
                    s.sessions.pin(sid, False)
                elif what == "rename":
                    s.sessions.rename(sid, "numbat quokka")
                elif what == "update":
                    s.history.append(user("wombat echidna"))
                    s.sessions.update(sid)
                elif what == "delete":
                    s.sessions.delete(sid)
                else:  # the whole index written back, with one row re-dated
                    index = s.local.get("savedSessions")
                    index[k % len(index)]["createdAt"] = 1_700_000_000_700
                    s.local.set("savedSessions", index)
            assert s._backend.drawer.ordered_rids
            whole = s.sessions.list(needle)
            assert (
                s.sessions.list(needle, limit=limit, offset=offset)
                == whole[offset : offset + limit]
            )
            assert all(r["id"] != "o1" for r in whole)
            # the ordered index on its own (a page from the newest rows never reaches it)
            want = offset + limit
            with s._backend.transaction(s.profile, write=False):
                top = s._backend.drawer.top_matches(needle, s.profile, want)
            assert top is not None
            got = [r.get("id") for r in (json.loads(text) for _ord, text in top)]
            assert got == [r["id"] for r in whole[:want]]
        assert _misplaced(path) == []


def test_a_pin_moves_a_session_to_the_front_of_a_big_drawer(tmp_path: Path) -> None:
    """A word only every 50th session holds is found through the ordered index (the newest
    rows hold none); pinning the oldest session moves it into the first bucket at once, and
    unpinning moves it back."""
    path = str(tmp_path / "big.db")
    with chatkeep.open(path) as s:
        s.sessions.add_many(
            [
                (
                    {"id": f"b{i:04d}", "createdAt": 1_700_000_000_000 + i * 1_000},
                    [user(f"talk {i}" + (" wombat" if i % 50 == 0 else ""))],
                )
                for i in range(400)
            ]
        )
        assert [r["id"] for r in s.sessions.list("wombat", limit=3)] == [
            "b0350",
            "b0300",
            "b0250",
        ]
        s.sessions.pin("b0000")
        assert [r["id"] for r in s.sessions.list("wombat", limit=3)] == [
            "b0000",
            "b0350",
            "b0300",
        ]
        assert _misplaced(path) == []
        s.sessions.pin("b0000", False)
        assert [r["id"] for r in s.sessions.list("wombat", limit=8)][-1] == "b0000"
    assert _misplaced(path) == []


def test_ties_within_a_second_are_cut_in_the_exact_order(tmp_path: Path) -> None:
    """Ten sessions saved within one second hold the word; their rows share a bucket in the
    order they were written, the drawer lists the later ones first: the page is cut from the
    whole tie, not from the first rows the index walks."""
    with chatkeep.open(str(tmp_path / "ties.db")) as s:
        s.sessions.add_many(
            [
                (
                    {"id": f"t{i:02d}", "createdAt": 1_700_000_000_000 + (i if i >= 10 else 0)},
                    [user("wombat" if i < 10 else f"other {i}")],
                )
                for i in range(10)
            ]
            + [
                ({"id": f"n{i:02d}", "createdAt": 1_700_000_100_000 + i * 1_000}, [user("other")])
                for i in range(10)
            ]
        )
        assert [r["id"] for r in s.sessions.list("wombat", limit=3)] == ["t09", "t08", "t07"]
        assert [r["id"] for r in s.sessions.list("wombat", limit=3, offset=6)] == [
            "t03",
            "t02",
            "t01",
        ]
