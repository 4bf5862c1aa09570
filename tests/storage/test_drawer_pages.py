"""The drawer in pages (SPEC §4.3): ``sessions.list(q, limit=, offset=)`` is exactly a slice of
the whole listing, on both backends, whichever path answers it (the newest rows looked through
directly, or the trigram indexes); and stores made before the digest and name indexes upgrade
without losing a session or a match."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatkeep
from chatkeep import InvalidValue
from clirun import run
from factories import assistant, user

WORDS = [
    "network",
    "zebra",
    "fish",
    "100%",
    "a_b",
    "Ünïcode",
    "page",
    "model",
    'say "hi"',
    "ſtraße",
]
# "stra" must not find "ſtraße", nor "ss" "ß": the search is a substring test, not a folding one
QUERIES = [*WORDS, "net", "work model", "%", "_", "no-such-thing", "session 1", "", "  Zebra "]
QUERIES += ['"hi"', '"', "stra", "ſtr", "ss", "üni", "ÜNÏ", "ode fi"]


def _fill(store: chatkeep.Store, n: int) -> None:
    """``n`` sessions: words spread unevenly (some in most sessions, some in few), a few pins,
    renames whose new name is nowhere in the text, and createdAt ties."""
    rows = []
    for i in range(n):
        words = [w for k, w in enumerate(WORDS) if i % (k + 2) == 0] or ["plain"]
        body = [user(f"Session {i}: " + " ".join(words)), assistant(f"reply {i} {words[-1]}")]
        rows.append(
            (
                {"id": f"{i:08x}", "name": f"Session {i}", "createdAt": 1_000 + i // 3},
                body,
            )
        )
    store.sessions.add_many(rows)
    for i in range(0, n, 17):
        store.sessions.pin(f"{i:08x}")
    for i in range(5, n, 23):
        store.sessions.rename(f"{i:08x}", f"Renamed ZEBRA {i}")


def _model(store: chatkeep.Store, q: str) -> list[str]:
    """The listing as SPEC §4.3 defines it, computed from the stored index (with digests)."""
    needle = q.strip().lower()
    index = store.local.get("savedSessions")
    hits = [
        (k, r)
        for k, r in enumerate(index)
        if not needle or needle in r["name"].lower() or needle in r["textDigest"]
    ]
    hits.sort(key=lambda p: (not p[1]["pinned"], -p[1]["createdAt"], -p[0]))
    return [r["id"] for _k, r in hits]


@pytest.fixture
def drawer(spec):
    with spec.open() as s:
        _fill(s, 180)
        yield s


def test_every_query_lists_what_the_spec_says(drawer: chatkeep.Store) -> None:
    """Whole listings equal the model for queries many, few and no sessions match."""
    for q in QUERIES:
        got = drawer.sessions.list(q)
        assert [r["id"] for r in got] == _model(drawer, q), q
        if q.strip():
            for r in got:
                assert r["contentMatch"] is (q.strip().lower() not in r["name"].lower())


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    q=st.sampled_from(QUERIES) | st.text(max_size=6),
    limit=st.integers(0, 120),
    offset=st.integers(0, 200),
)
def test_a_page_is_a_slice_of_the_whole_listing(drawer: chatkeep.Store, q, limit, offset) -> None:
    """list(q, limit=, offset=) == list(q)[offset:offset+limit], for any query and page."""
    whole = drawer.sessions.list(q)
    assert drawer.sessions.list(q, limit=limit, offset=offset) == whole[offset : offset + limit]


@pytest.mark.parametrize("q", ["e", "1", "zq", "%", "_", "ß", "ss", '"', " ", "ze"])
def test_short_queries_page_the_drawer_in_its_order(drawer: chatkeep.Store, q: str) -> None:
    """Needles shorter than a trigram (no index answers them) page as the model says: the
    drawer is read in its order only as far as the page's last match."""
    want = _model(drawer, q)
    for limit, offset in ((1, 0), (7, 3), (50, 0), (50, 150), (200, 0)):
        got = drawer.sessions.list(q, limit=limit, offset=offset)
        assert [r["id"] for r in got] == want[offset : offset + limit], (q, limit, offset)


def test_pages_walk_the_drawer_without_gaps(drawer: chatkeep.Store) -> None:
    """Reading page after page of DRAWER_PAGE rows gives every row once, in order."""
    for q in ("", "network", "zebra", "fish"):
        seen: list[str] = []
        while True:
            page = drawer.sessions.list(q, limit=chatkeep.DRAWER_PAGE, offset=len(seen))
            seen += [r["id"] for r in page]
            if len(page) < chatkeep.DRAWER_PAGE:
                break
        assert seen == _model(drawer, q)


def test_pages_at_every_density_match_the_model(drawer: chatkeep.Store) -> None:
    """A search first looks through one page's worth of the newest rows, goes on looking when
    the needle is dense enough to fill the page within SCAN_PAGES pages' worth, and asks the
    index otherwise: pages around those edges, for needles that half, a third, … a tenth of
    the sessions hold, and for one that none does, equal the model."""
    for q in (*WORDS, "session 1", "no-such-thing"):
        want = _model(drawer, q)
        for limit in (1, 24, 25, 26, 49, 50, 51, 89, 90, 91):
            for offset in (0, 1, limit):
                got = drawer.sessions.list(q, limit=limit, offset=offset)
                assert [r["id"] for r in got] == want[offset : offset + limit], (q, limit, offset)


@pytest.mark.parametrize(
    ("limit", "offset"), [(-1, 0), (True, 0), (1.5, 0), ("5", 0), (5, -2), (5, None), (5, False)]
)
def test_bad_page_arguments_are_typed_errors(drawer: chatkeep.Store, limit, offset) -> None:
    before = drawer.sessions.list()
    with pytest.raises(InvalidValue) as err:
        drawer.sessions.list("zebra", limit=limit, offset=offset)
    assert err.value.hint
    assert drawer.sessions.list() == before


def test_writes_keep_the_indexes_in_step(drawer: chatkeep.Store) -> None:
    """Rename, pin, update, delete and a whole-index write are seen by the next search."""
    sid = f"{3:08x}"
    assert sid not in [r["id"] for r in drawer.sessions.list("quokka")]
    drawer.sessions.rename(sid, "Quokka notes")
    assert [r["id"] for r in drawer.sessions.list("quokka", limit=5)] == [sid]
    drawer.sessions.rename(sid, "Plain again")
    assert drawer.sessions.list("quokka", limit=5) == []
    drawer.history.append(user("wallaby facts"))
    drawer.sessions.update(sid)
    assert [r["id"] for r in drawer.sessions.list("wallaby", limit=5)] == [sid]
    drawer.sessions.delete(sid)
    assert drawer.sessions.list("wallaby", limit=5) == []
    index = drawer.local.get("savedSessions")
    drawer.local.set("savedSessions", index[:10])
    assert [r["id"] for r in drawer.sessions.list("session", limit=500)] == _model(
        drawer, "session"
    )
    assert len(drawer.sessions.list(limit=500)) == 10


def test_repeated_ids_written_later_are_still_migrated(spec) -> None:
    """An index written with a repeated id gets a fresh id for the second row on the next read
    (the repeat is flagged as it is written), and both bodies stay."""
    with spec.open() as s:
        _fill(s, 3)
        index = s.local.get("savedSessions")
        s.local.set("savedSessions", [*index, {**index[0], "name": "twin"}])
        rows = s.sessions.list()
        assert len(rows) == 4 and len({r["id"] for r in rows}) == 4
        twin = next(r for r in rows if r["name"] == "twin")
        assert s.sessions.get(twin["id"])["history"] == s.sessions.get(index[0]["id"])["history"]


def _downgrade(path: Path) -> None:
    """Turn a store into the layout before migrations 0007–0010: digests in the FTS5 table
    with unindexed ids, no name index, no order index, trigram rows in no order."""
    conn = sqlite3.connect(path)
    with conn:
        conn.execute(
            "CREATE VIRTUAL TABLE ck_session_fts USING fts5(profile UNINDEXED, id UNINDEXED,"
            " digest, tokenize='trigram')"
        )
        conn.execute(
            "INSERT INTO ck_session_fts (profile, id, digest)"
            " SELECT profile, id, digest FROM ck_session_text"
        )
        for trigger in (
            "ck_sessions_name_ai",
            "ck_sessions_name_ad",
            "ck_sessions_name_au",
            "ck_sessions_text_au",
        ):
            conn.execute(f"DROP TRIGGER {trigger}")
        for table in ("ck_session_trgm", "ck_session_text", "ck_session_name_trgm"):
            conn.execute(f"DROP TABLE {table}")
        conn.execute("DROP TABLE ck_session_name")
        conn.execute("DROP INDEX ck_sessions_order")
        conn.execute(
            "DELETE FROM ck_migrations WHERE name IN ('0007_sqlite_session_text',"
            " '0008_session_order', '0009_sqlite_session_names', '0010_sqlite_session_order')"
        )
    conn.close()


def test_an_older_sqlite_store_upgrades_and_finds_the_same(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with chatkeep.open(str(path)) as s:
        _fill(s, 60)
        before = {q: s.sessions.list(q) for q in QUERIES}
    _downgrade(path)
    with chatkeep.open(str(path)) as s:
        assert {
            "0007_sqlite_session_text",
            "0008_session_order",
            "0009_sqlite_session_names",
            "0010_sqlite_session_order",
        } <= set(s._backend.schema.applied_migrations())
        assert {q: s.sessions.list(q) for q in QUERIES} == before
        assert {q: s.sessions.list(q, limit=7, offset=3) for q in QUERIES} == {
            q: rows[3:10] for q, rows in before.items()
        }


def test_cli_sessions_list_pages(tmp_path: Path) -> None:
    """`chatkeep sessions list --limit/--offset` through the CLI."""
    db = tmp_path / "cli.db"
    with chatkeep.open(str(db)) as s:
        _fill(s, 12)
        whole = [r["id"] for r in s.sessions.list("zebra")]
    out = run(db, "sessions", "list", "zebra", "--limit", "2", "--offset", "1", "--json")
    assert [r["id"] for r in json.loads(out.stdout)] == whole[1:3]
    bad = run(db, "sessions", "list", "--limit", "-3", ok=False)
    assert bad.returncode != 0 and "limit" in bad.stderr.lower()


def test_postgres_without_pg_trgm_still_searches(pg_spec) -> None:
    """A role that may not create extensions gets a working store whose searches scan: the
    trigram migration is recorded, no index is made, every listing is still exact."""
    import uuid

    import psycopg

    pg_url = pg_spec.url
    tag = uuid.uuid4().hex[:10]
    db, role = f"ck_notrgm_{tag}", f"ck_limited_{tag}"
    base = pg_url.rsplit("/", 1)[0]
    with psycopg.connect(pg_url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"CREATE DATABASE {db}")
    try:
        with psycopg.connect(f"{base}/{db}", autocommit=True) as owner:
            owner.execute(f"GRANT CREATE ON SCHEMA public TO {role}")  # tables, not extensions
        url = base.replace("postgres@", f"{role}@", 1) + f"/{db}"
        with chatkeep.open(url) as s:
            assert "0009_pg_trigram_search" in s._backend.schema.applied_migrations()
            _fill(s, 40)
            for q in QUERIES:
                assert [r["id"] for r in s.sessions.list(q, limit=9, offset=2)] == _model(s, q)[
                    2:11
                ]
        with psycopg.connect(f"{base}/{db}", autocommit=True) as owner:
            assert (
                owner.execute("SELECT 1 FROM pg_extension WHERE extname='pg_trgm'").fetchall() == []
            )
            assert (
                owner.execute("SELECT 1 FROM pg_indexes WHERE indexname LIKE '%trgm'").fetchall()
                == []
            )
    finally:
        with psycopg.connect(pg_url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def test_a_query_holding_a_nul_finds_nothing_on_either_backend(drawer: chatkeep.Store) -> None:
    """Names and digests are searched without their NUL characters (PostgreSQL text cannot
    hold one), so a query with a NUL matches nothing, as a typed error would not help."""
    for q in ("\x00", "net\x00work", "zebra\x00"):
        assert drawer.sessions.list(q) == []
        assert drawer.sessions.list(q, limit=5) == []


def test_pages_beyond_any_drawer_are_empty_not_errors(drawer: chatkeep.Store) -> None:
    """A limit or offset larger than a bigint holds (the API takes any count) gives the page
    the spec says, on every search path: rare, dense, miss, one letter, no query. Before,
    such a page overflowed a LIMIT or a product in the look-through's SQL (PostgreSQL:
    "bigint out of range"; SQLite: an OverflowError from the driver)."""
    for q in ("zebra", "network", "no-such-thing", "z", ""):
        model = _model(drawer, q)
        for limit, offset in (
            (2**62, 0),
            (2**63, 3),
            (10**6, 2**61),
            (2**70, 2**70),
            (5, 2**62),
            (0, 0),
        ):
            got = [r["id"] for r in drawer.sessions.list(q, limit=limit, offset=offset)]
            assert got == model[offset : offset + limit], (q, limit, offset)


def test_postgres_digests_are_stored_with_lz4(pg_spec) -> None:
    """Migration 0011 sets lz4 on the digest column, so a long digest written from then on is
    compressed with it (a search reads every digest it looks through whole; lz4 gives them back
    faster than pglz), and the search over it finds what it holds."""
    import psycopg

    with pg_spec.open() as s:
        assert "0011_pg_digest_lz4" in s._backend.schema.applied_migrations()
        long = " ".join(f"paragraph {i} about rivers and quokkas" for i in range(400))
        s.sessions.add_many([({"id": "lz4-one", "name": "long"}, [user(long), assistant("ok")])])
        with psycopg.connect(pg_spec.url, autocommit=True) as conn:
            kind = conn.execute(
                "SELECT pg_column_compression(digest) FROM ck_session_digest"
                " WHERE profile=%s AND id='lz4-one'",
                (pg_spec.profile,),
            ).fetchall()
            column = conn.execute(
                "SELECT attcompression FROM pg_attribute WHERE attname='digest'"
                " AND attrelid='ck_session_digest'::regclass"
            ).fetchall()
        assert kind == [("lz4",)] and column == [("l",)]
        assert [r["id"] for r in s.sessions.list("paragraph 399 about", limit=5)] == ["lz4-one"]
        assert s.sessions.list("paragraph 400 about", limit=5) == []


def test_postgres_search_statements_reuse_one_plan(pg_spec) -> None:
    """A drawer search's statements, once prepared, run on one generic plan instead of being
    planned afresh on every call (the server kept choosing custom plans, whose planning cost
    more than running them), and the pages stay exact. Both are prepared: the probe (with the
    index's page in it) and the look-through read on (``network``: half the sessions)."""
    with pg_spec.open() as s:
        _fill(s, 150)  # more than the look-through's rows: rare queries reach the index
        for _ in range(8):
            for q in ("network", "zebra", "plain", "no-such-thing"):
                assert [r["id"] for r in s.sessions.list(q, limit=5, offset=1)] == _model(s, q)[1:6]
        plans = s._backend.query(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
            " WHERE strpos(statement, 'strpos(name_lc') > 0 OR strpos(statement, 'LIKE $') > 0"
        )
    assert len(plans) >= 2
    assert all(generic >= 1 and custom == 0 for _sql, generic, custom in plans), plans


def test_postgres_rare_search_is_one_statement(pg_spec) -> None:
    """A query the newest rows hold too sparsely, and a miss, are answered by one statement:
    the trigram index's page is part of the probe's statement (skipped there when the probe
    settles it), not a second round trip. Seen from the server: the only prepared statement
    that asks the index is the probe, and the searches' pages are exact."""
    with pg_spec.open() as s:
        _fill(s, 150)
        for _ in range(8):
            for q in ("zebra", "no-such-thing"):
                assert [r["id"] for r in s.sessions.list(q, limit=5, offset=1)] == _model(s, q)[1:6]
        plans = s._backend.query(
            "SELECT statement FROM pg_prepared_statements WHERE strpos(statement, 'LIKE $') > 0"
        )
    assert len(plans) == 1 and plans[0][0].startswith("WITH p AS"), plans


def _bitmap_scans(plan: dict) -> list[dict]:  # type: ignore[type-arg]
    found = [plan] if plan.get("Node Type") == "Bitmap Index Scan" else []
    for child in plan.get("Plans", []):
        found += _bitmap_scans(child)
    return found


def test_postgres_trigram_indexes_look_in_one_profile(pg_spec) -> None:
    """Migration 0012 keys the trigram indexes by profile first (btree_gin): a search of a small
    profile reads its own candidates only, not those of a large profile beside it."""

    def rows(n: int, tag: str) -> list:  # type: ignore[type-arg]
        body = [user("wombat notes"), assistant("ok")]
        return [({"id": f"{tag}{i}", "name": f"{tag} {i}", "createdAt": i}, body) for i in range(n)]

    with (
        pg_spec.open() as small,
        chatkeep.open(pg_spec.url, profile=pg_spec.profile + "_big") as big,
    ):
        assert "0012_pg_profile_trigrams" in small._backend.schema.applied_migrations()
        big.sessions.add_many(rows(60, "big"))
        small.sessions.add_many(rows(3, "small"))
        sql, params = small._backend.drawer.match_ords_sql("wombat", small.profile)
        with small._backend.transaction(small.profile):
            # the trigram indexes' own answer, as a drawer of thousands of sessions gets it
            small._backend.execute("SET LOCAL enable_seqscan = off")
            small._backend.execute("SET LOCAL enable_indexscan = off")
            plan = small._backend.query("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)[0][0]
        indexes = [
            r[0]
            for r in small._backend.query(
                "SELECT indexdef FROM pg_indexes WHERE strpos(indexname, 'trgm') > 0"
                " AND tablename IN ('ck_sessions', 'ck_session_digest')"  # the drawer's own
            )
        ]
        assert [r["id"] for r in small.sessions.list("wombat", limit=2)] == ["small2", "small1"]
    assert sorted(d.split(" USING ")[1] for d in indexes) == [
        "gin (profile, digest gin_trgm_ops)",
        "gin (profile, name_lc gin_trgm_ops)",
    ], indexes
    scans = _bitmap_scans(plan[0]["Plan"])
    # the digest index finds the small profile's three sessions, not the 60 beside them
    assert scans and all(s["Actual Rows"] <= 3 for s in scans), scans


def test_postgres_without_btree_gin_keeps_its_trigram_indexes(pg_spec) -> None:
    """Where pg_trgm is installed but the role may not create btree_gin, migration 0012 is
    recorded, the trigram indexes stay as they were, and listings stay exact."""
    import uuid

    import psycopg

    tag = uuid.uuid4().hex[:10]
    db, role = f"ck_nobtree_{tag}", f"ck_limited_{tag}"
    base = pg_spec.url.rsplit("/", 1)[0]
    with psycopg.connect(pg_spec.url, autocommit=True) as admin:
        admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute(f"CREATE DATABASE {db}")
    try:
        with psycopg.connect(f"{base}/{db}", autocommit=True) as owner:
            owner.execute("CREATE EXTENSION pg_trgm")
            owner.execute(f"GRANT CREATE ON SCHEMA public TO {role}")
        with chatkeep.open(base.replace("postgres@", f"{role}@", 1) + f"/{db}") as s:
            assert "0012_pg_profile_trigrams" in s._backend.schema.applied_migrations()
            _fill(s, 40)
            for q in QUERIES:
                got = s.sessions.list(q, limit=9, offset=2)
                assert [r["id"] for r in got] == _model(s, q)[2:11], q
            indexes = sorted(
                r[0]
                for r in s._backend.query("SELECT indexname FROM pg_indexes")
                if r[0].endswith("trgm")
            )
        # the drawer's two (the message index's own, ck_search_trgm, is beside them)
        assert indexes == ["ck_search_trgm", "ck_session_digest_trgm", "ck_sessions_name_trgm"]
    finally:
        with psycopg.connect(pg_spec.url, autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            admin.execute(f"DROP ROLE IF EXISTS {role}")


def test_pages_of_drawers_around_the_look_through_size(spec) -> None:
    """Drawers of just fewer, as many and just more sessions than the look-through reads (9
    first, then up to two pages' worth) page as the model says, for needles that most, half,
    few and no sessions hold, and one that the newest rows hold densely and the rest sparsely."""

    def words(i: int, n: int) -> str:
        held = [w for w, yes in (("most", i % 5), ("half", i % 2 == 0), ("few", i % 7 == 0)) if yes]
        if i >= n - 9 or i % 4 == 0:  # the newest 9 (read on), then too few to fill the page
            held.append("top")
        return " ".join(held) or "plain"

    for n in (8, 9, 10, 99, 100, 101, 102):
        with chatkeep.open(spec.url, profile=f"{spec.profile}_{n}") as s:
            s.sessions.add_many(
                [
                    ({"id": f"s{i}", "name": f"s{i}", "createdAt": i}, [user(words(i, n))])
                    for i in range(n)
                ]
            )
            for q in ("most", "half", "few", "top", "plain", "absent"):
                want = _model(s, q)
                for limit in (1, 9, 10, 50):
                    got = [r["id"] for r in s.sessions.list(q, limit=limit)]
                    assert got == want[:limit], (n, q, limit)
