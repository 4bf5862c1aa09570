"""Semantic and hybrid search (SPEC §16, ``chatkeep[semantic]``): found by meaning, vectors
follow the index rows, and on the labelled set hybrid recalls at least what each side does."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import chatkeep

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from bench.search import recall_at


def test_found_by_meaning_with_no_shared_word(store: chatkeep.Store) -> None:
    """A query sharing no word with its answer finds it first; the hit has the hit shape."""
    for text in (
        "how do I cook pasta al dente",
        "the stock market fell sharply today",
        "my dog loves to chase the ball in the park",
    ):
        store.history.append({"role": "user", "content": text})
    [hit, *_] = store.search("puppy playing fetch", mode="semantic")
    assert (hit["where"], hit["index"], hit["role"]) == ("live", 2, "user")
    assert hit["snippet"].startswith("my dog") and 0 < hit["score"] <= 1
    assert store.search("shares dropped", mode="hybrid")[0]["index"] == 1


def test_vectors_follow_rows_and_delete_takes_them(store: chatkeep.Store, spec: Any) -> None:
    """Rows written after a search get vectors at the next one; a deleted session's vectors
    go with its rows."""
    store.history.append({"role": "user", "content": "violin practice after school"})
    store.search("music lessons", mode="semantic")
    store.history.append({"role": "user", "content": "the orchestra played a symphony"})
    row = store.sessions.save("Music")
    assert row is not None
    # the saved entries are indexed in the body too; a search of every place shows them live
    assert {h["where"] for h in store.search("classical concert", mode="semantic")} == {"live"}
    hits = store.search("classical concert", mode="semantic", where="session")
    assert {h["where"] for h in hits} == {"session"}
    count = "SELECT count(*) FROM ck_search_vec WHERE profile=?"
    before = spec.raw_rows(count, (spec.profile,))[0][0]
    assert before == 4
    store.sessions.delete(row["id"])
    assert spec.raw_rows(count, (spec.profile,))[0][0] == 2
    assert {h["where"] for h in store.search("classical concert", mode="semantic")} == {"live"}


def test_vectors_of_removed_rows_never_hide_the_rows_left(store: chatkeep.Store, spec: Any) -> None:
    """A search keeps the profile's vectors between calls. When rows older than the newest
    are removed (a session deleted), their vectors must not take the places of the rows left:
    the next search answers as a store opened afresh does."""
    dogs = [
        {"role": "user", "content": f"my dog chases the red ball in the park, day {i}"}
        for i in range(450)
    ]
    store.sessions.add_many(
        [({"id": "dogs", "name": "Dogs", "createdAt": 1_700_000_000_000}, dogs)]
    )
    store.history.append({"role": "user", "content": "puppies love to play fetch outside"})
    store.history.append({"role": "user", "content": "the stock market fell sharply today"})
    assert store.search("my dog chases the ball", mode="semantic")  # vectors now kept
    store.sessions.delete("dogs")
    hits = store.search("my dog chases the ball", mode="semantic")
    assert hits and hits[0]["snippet"].startswith("puppies") and hits[0]["where"] == "live"
    with spec.open() as fresh:
        assert hits == fresh.search("my dog chases the ball", mode="semantic")


def test_hybrid_recall_is_at_least_each_side() -> None:
    """recall@5 on tests/fixtures/search/retrieval.json: hybrid ≥ text and ≥ semantic, text
    finds every exact-word query, semantic most meaning queries."""
    r = recall_at(5)
    assert r["hybrid"]["all"] >= max(r["text"]["all"], r["semantic"]["all"])
    assert r["text"]["words"] == 1.0 and r["text"]["meaning"] == 0.0
    assert r["semantic"]["meaning"] >= 0.8 and r["hybrid"]["words"] == 1.0
