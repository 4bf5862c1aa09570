"""The drawer-growth line of the message-search bench (``bench.search.drawer_growth``) at a tiny
size on the real PostgreSQL server: both ways of meeting the search (the first on a new
connection, a later one on a kept connection) are sampled for every query on both profiles,
and the report prints both growths. Timings are reported by the bench, never asserted here."""

from __future__ import annotations

import uuid

import chatkeep
from bench import search
from support.pg import PG_URL, require_pg


def test_drawer_growth_samples_both_ways_on_both_sizes_and_reports_them(capsys) -> None:
    require_pg()
    prefix = f"t_{uuid.uuid4().hex[:8]}_drawer_"
    lines: list[str] = []
    try:
        res = search.drawer_growth(PG_URL, 1, lines.append, sizes=(3, 7), prefix=prefix)
        for n in (3, 7):
            with chatkeep.open(PG_URL, profile=f"{prefix}{n}") as store:
                assert len(store.sessions.list()) == n  # filled on first use, to its size
    finally:
        for n in (3, 7):
            with chatkeep.open(PG_URL, profile=f"{prefix}{n}") as store:
                with store._backend.transaction(store.profile) as tx:  # clean-up only
                    tx.wipe_profile()
    assert res["sizes"] == (3, 7)
    for n in (3, 7):
        for way in ("first", "steady"):
            per = res[n][way]["per query"]
            assert set(per) == set(search.DRAWER_QUERIES)
            assert all(v > 0 for v in per.values())
    for way in ("first", "steady"):
        assert res["growth " + way] == res[7][way]["median"] / res[3][way]["median"]
    assert res["growth"] == max(res["growth first"], res["growth steady"])
    assert len(lines) == 4
    search.report({"drawer growth": res})
    out = capsys.readouterr().out
    assert "first search: 3 sessions" in out and "steady search: 3 sessions" in out
